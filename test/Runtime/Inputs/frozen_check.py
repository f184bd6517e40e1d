#!/usr/bin/python3
"""Checks that frozen parameters stay frozen and stored quantized.

Usage: frozen_check.py FROZEN_PREFIX PLAIN STEP1 STEP3 RANKS BLOCK

PLAIN, STEP1 and STEP3 are zero-run --export files: an unquantized run, and
a run with the frozen parameters stored quantized after 1 and 3 steps. The
frozen parameters (names starting with FROZEN_PREFIX) must be bit for bit
the same after 1 and 3 steps, and each element within scale / 2 of PLAIN's
(the unquantized initial values), the scale being absmax / 127 of its
block: the rank's shard of the flat tensor padded to a multiple of RANKS,
cut into blocks of BLOCK. The other parameters must have changed.
"""

import os
import sys

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_io  # noqa: E402


def main():
    prefix, plain, step1, step3 = sys.argv[1:5]
    ranks, block = int(sys.argv[5]), int(sys.argv[6])
    plain, _ = safetensors_io.read(plain)
    step1, _ = safetensors_io.read(step1)
    step3, _ = safetensors_io.read(step3)
    for name in sorted(step3):
        if not name.startswith(prefix):
            moved = not np.array_equal(step1[name], step3[name])
            print("%s: trainable, changed: %s" % (name, moved))
            continue
        same = step1[name].tobytes() == step3[name].tobytes()
        flat = plain[name].reshape(-1).astype(np.float64)
        shard = -(-flat.size // ranks)
        padded = np.zeros(shard * ranks)
        padded[:flat.size] = flat
        bound = np.zeros_like(padded)
        for rank in range(ranks):
            for start in range(rank * shard, (rank + 1) * shard, block):
                end = min(start + block, (rank + 1) * shard)
                bound[start:end] = np.max(np.abs(padded[start:end])) / 254
        error = np.abs(step3[name].reshape(-1) - flat)
        within = bool(np.all(error <= bound[:flat.size] * (1 + 1e-6)))
        exact = bool(np.array_equal(step3[name].reshape(-1), flat))
        print("%s: frozen, unchanged: %s, within scale/2: %s, exact: %s" %
              (name, same, within, exact))


if __name__ == "__main__":
    main()
