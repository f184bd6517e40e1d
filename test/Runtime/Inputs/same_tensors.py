#!/usr/bin/python3
"""Exits 1 unless two safetensors files hold the same tensors (names, dtypes,
shapes and bytes), whatever their metadata says.

Usage: same_tensors.py A B
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import read_raw  # noqa: E402


def load(path):
    header, _, data = read_raw(path)
    return header, data


first, second = load(sys.argv[1]), load(sys.argv[2])
if first != second:
    sys.exit("%s and %s hold different tensors" % (sys.argv[1], sys.argv[2]))
