#!/usr/bin/python3
"""Prints a compiled step (IR or schedule) with every number replaced by N.

Two steps that differ only in numbers (the micro-step count, the data
shapes and the offsets that follow from them) print the same text."""

import re
import sys

with open(sys.argv[1]) as f:
    sys.stdout.write(re.sub(r"[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?", "N", f.read()))
