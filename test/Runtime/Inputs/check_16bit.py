#!/usr/bin/python3
"""Checks a 16-bit consolidated model against the fp32 one.

Usage: check_16bit.py F32_FILE HALF_FILE
Every tensor of HALF_FILE (BF16 or F16) must hold the elements of the same
tensor of F32_FILE rounded to nearest even, bit for bit, and the two files
must name the same tensors with the same shapes. Prints one line; exits 1 on
the first difference.
"""

import json
import struct
import sys

import numpy as np


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    length = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + length])
    header.pop("__metadata__", None)
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        raw = data[8 + length + begin:8 + length + end]
        dtype = {"F32": "<f4", "BF16": "<u2", "F16": "<f2"}[entry["dtype"]]
        tensors[name] = (entry["dtype"], entry["shape"],
                         np.frombuffer(raw, dtype=dtype))
    return tensors


def rounded(values, dtype):
    if dtype == "F16":
        return values.astype(np.float16).view(np.uint16)
    bits = values.view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def main():
    full, half = read(sys.argv[1]), read(sys.argv[2])
    if sorted(full) != sorted(half):
        sys.exit("FAIL: the files name different tensors")
    for name, (dtype, shape, values) in sorted(half.items()):
        if shape != full[name][1]:
            sys.exit("FAIL: %s: shape %s, %s in fp32" % (name, shape,
                                                        full[name][1]))
        if not np.array_equal(values.view(np.uint16),
                              rounded(full[name][2], dtype)):
            sys.exit("FAIL: %s: not the fp32 values rounded to %s" %
                     (name, dtype))
    print("OK: %d tensors, each the fp32 one rounded to nearest even" %
          len(half))


if __name__ == "__main__":
    main()
