#!/bin/sh
# Interesting (exit 1) while zero-opt still refuses to recompute an op with
# memory effects in the step at $1.
if zero-opt "$1" --zero-checkpoint-activations 2>&1 \
    | grep -q "cannot recompute an op with memory effects"; then
  exit 1
fi
exit 0
