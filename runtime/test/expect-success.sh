#!/bin/sh
# usage: expect-success.sh REGEX COMMAND...
# Passes when COMMAND exits 0 and a line of its output matches the extended
# regular expression REGEX (ctest's PASS_REGULAR_EXPRESSION alone would pass
# a command that printed the line and then failed).
regex=$1
shift
output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -ne 0 ]; then
  echo "expect-success: the command exited with status $status" >&2
  exit 1
fi
if printf '%s\n' "$output" | grep -Eq -- "$regex"; then
  exit 0
fi
echo "expect-success: no line of the output matches: $regex" >&2
exit 1
