#!/usr/bin/python3
"""Exits 1 unless two safetensors files hold the same tensors (names, dtypes,
shapes and bytes), whatever their metadata says.

Usage: same_tensors.py A B
"""

import json
import struct
import sys


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    header.pop("__metadata__", None)
    return header, data[8 + length:]


first, second = load(sys.argv[1]), load(sys.argv[2])
if first != second:
    sys.exit("%s and %s hold different tensors" % (sys.argv[1], sys.argv[2]))
