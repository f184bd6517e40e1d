#!/usr/bin/python3
"""The token streams of token-arrays.test, in the current directory: the same
200 ids below 96 as a uint16 .bin (nanoGPT's format) and as uint32 and int64
.npy arrays; 200 ids below 70,000 as uint32 .npy, the same with id 70,000 at
position 17 (int64), and a 2-D array."""

import numpy as np

rng = np.random.default_rng(0)
small = rng.integers(0, 96, size=200)
small.astype("<u2").tofile("small.bin")
np.save("small-u32.npy", small.astype(np.uint32))
np.save("small-i64.npy", small.astype(np.int64))
small.astype("<u2").tofile("small-for-big.bin")
big = rng.integers(0, 70000, size=200)
np.save("big.npy", big.astype(np.uint32))
bad = big.copy()
bad[17] = 70000
np.save("big-out.npy", bad.astype(np.int64))
np.save("big-2d.npy", big.reshape(10, 20).astype(np.uint32))
