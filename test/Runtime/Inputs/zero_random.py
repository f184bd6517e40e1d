"""The runtime's counter-based random values (runtime/include/zero/runtime/Init.h), in Python.

Bit for bit the same as runtime/src/io/Init.cpp, so that the PyTorch
reference sees the same initial parameters and synthetic data as zero-run:
  key(seed, name) = mix(seed ^ fnv1a64(name))
  bits(key, c)    = mix(key + (c + 1) * 0x9E3779B97F4A7C15)   (mod 2^64)
  rowKey          = mix(key(seed, name) ^ mix(row + 1))
  normal element i: pair p = i // 2, u1 = ((bits(key, 2p) >> 11) + 1) * 2^-53,
  u2 = (bits(key, 2p + 1) >> 11) * 2^-53, r = sqrt(-2 log u1),
  theta = 2 pi u2; even i: r cos(theta), odd i: r sin(theta); times std in
  double, rounded to float32.
Integer arithmetic is vectorised with numpy uint64 (exact, wrapping); log,
sqrt, sin and cos come from Python's math module, which calls the same C
library as the runtime (numpy's own SIMD versions may differ in the last bit).

`python3 zero_random.py` prints the golden values that
runtime/test/InitTest.cpp checks.
"""

import math
import sys

import numpy as np

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def mix(z):
    """splitmix64's finalizer on a Python int or a numpy uint64 array."""
    if isinstance(z, np.ndarray):
        with np.errstate(over="ignore"):
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            return z ^ (z >> np.uint64(31))
    z &= M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def fnv1a64(text):
    h = 0xCBF29CE484222325
    for c in text.encode("utf-8"):
        h = ((h ^ c) * 0x100000001B3) & M64
    return h


def tensor_key(seed, name):
    return mix((seed & M64) ^ fnv1a64(name))


def row_key(seed, name, row):
    return mix(tensor_key(seed, name) ^ mix((row + 1) & M64))


def bits(key, counters):
    """bits(key, c) for a numpy array of counters (uint64)."""
    c = np.asarray(counters, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return mix(np.uint64(key) + (c + np.uint64(1)) * np.uint64(GOLDEN))


def _normals(key, begin, count, std=1.0):
    idx = np.arange(begin, begin + count, dtype=np.uint64)
    pair = idx >> np.uint64(1)
    b1 = bits(key, pair * np.uint64(2))
    b2 = bits(key, pair * np.uint64(2) + np.uint64(1))
    scale = 1.0 / 9007199254740992.0
    # int -> double is exact below 2^53; the products by 2^-53 are exact.
    u1 = ((b1 >> np.uint64(11)) + np.uint64(1)).astype(np.float64) * scale
    u2 = (b2 >> np.uint64(11)).astype(np.float64) * scale
    std = float(np.float32(std))
    out = np.empty(count, dtype=np.float32)
    two_pi = 6.283185307179586
    for k in range(count):
        r = math.sqrt(-2.0 * math.log(u1[k]))
        t = two_pi * u2[k]
        z = r * math.sin(t) if (begin + k) & 1 else r * math.cos(t)
        out[k] = np.float32(z * std)
    return out


def fill_normal(seed, name, begin, count, std):
    """Elements [begin, begin + count) of initNormal(seed, name, ., std)."""
    return _normals(tensor_key(seed, name), begin, count, std)


def init_normal(seed, name, index, std):
    return float(fill_normal(seed, name, index, 1, std)[0])


def synthetic_float_row(seed, name, row, count):
    """syntheticFloat(seed, name, row, i) for i in [0, count), float32."""
    return _normals(row_key(seed, name, row), 0, count)


def synthetic_int_row(seed, name, row, count, bound):
    """syntheticInt(seed, name, row, i, bound) for i in [0, count), int64."""
    b = bits(row_key(seed, name, row), np.arange(count, dtype=np.uint64))
    return (b % np.uint64(bound)).astype(np.int64)


def synthetic_tokens(seed, bound, num_tokens=1 << 20):
    """TokenStream::synthetic(seed, bound, num_tokens): 16-bit ids up to
    65,536 tokens, 32-bit above."""
    ids = synthetic_int_row(seed, "tokens", 0, num_tokens, bound)
    return ids.astype(np.uint16 if bound <= 65536 else np.uint32)


# The cases of runtime/test/InitTest.cpp (Golden*): keep both lists equal.
GOLDEN_NORMAL = [(0, "wte.weight", 0, 0.02), (0, "wte.weight", 1, 0.02),
                 (0, "wte.weight", 12345, 0.02), (7, "h.0.attn.c_attn.weight", 4097, 0.02),
                 (1234567890123, "fc0.weight", 3, 1.0), ((1 << 64) - 1, "x", 999999, 0.5)]
GOLDEN_FLOAT = [(0, "inputs", 0, 0), (0, "inputs", 0, 1), (0, "inputs", 5, 17),
                (42, "inputs", 123456, 63)]
GOLDEN_INT = [(0, "labels", 0, 0, 16), (0, "labels", 3, 1, 16), (42, "labels", 99, 7, 1000),
              (0, "tokens", 0, 12345, 65), (9, "tokens", 0, 0, 50257)]


def main():
    for seed, name, index, std in GOLDEN_NORMAL:
        v = np.float32(init_normal(seed, name, index, std))
        print(f"initNormal({seed}ull, \"{name}\", {index}, {std}f) = 0x{v.view(np.uint32):08x}"
              f"  // {float(v)!r}")
    for seed, name, row, index in GOLDEN_FLOAT:
        v = synthetic_float_row(seed, name, row, index + 1)[index]
        print(f"syntheticFloat({seed}, \"{name}\", {row}, {index}) = 0x{v.view(np.uint32):08x}"
              f"  // {float(v)!r}")
    for seed, name, row, index, bound in GOLDEN_INT:
        v = synthetic_int_row(seed, name, row, index + 1, bound)[index]
        print(f"syntheticInt({seed}, \"{name}\", {row}, {index}, {bound}) = {int(v)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
