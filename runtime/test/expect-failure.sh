#!/bin/sh
# usage: expect-failure.sh TEXT COMMAND...
# Passes when COMMAND exits non-zero and its output contains TEXT.
text=$1
shift
output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -eq 0 ]; then
  echo "expect-failure: the command succeeded" >&2
  exit 1
fi
case $output in
*"$text"*) exit 0 ;;
esac
echo "expect-failure: the output does not contain: $text" >&2
exit 1
