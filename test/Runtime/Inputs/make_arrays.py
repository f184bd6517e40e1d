#!/usr/bin/python3
"""The arrays of data-arrays.test, written into the current directory: a
10-sample dataset for zero-model's MLP of hidden size 4 (inputs [10, 4]
f32, labels [10] int64 in [0, 4)) and the broken variants the test feeds
zero-run."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "python"))
from zero_opt import safetensors  # noqa: E402

inputs = (np.arange(40, dtype=np.float32).reshape(10, 4) / 40)
labels = np.array([0, 1, 2, 3, 0, 1, 2, 3, 0, 1], dtype=np.int64)
np.save("inputs.npy", inputs)
np.save("labels.npy", labels)
np.save("labels-9.npy", labels[:9])
np.save("labels-out.npy", np.where(np.arange(10) == 3, 4, labels))
np.save("inputs-5.npy", np.zeros((10, 5), dtype=np.float32))
np.save("inputs-int.npy", np.zeros((10, 4), dtype=np.int32))
np.save("inputs-fortran.npy", np.asfortranarray(inputs))
np.save("inputs-big-endian.npy", inputs.astype(">f4"))
safetensors.write("inputs.safetensors", {"inputs": inputs,
                                         "extra": np.zeros(3)})
safetensors.write("two.safetensors", {"a": inputs, "b": inputs})
with open("garbage.npy", "wb") as f:
    f.write(b"garbage")
with open("inputs.npy", "rb") as f:
    head = f.read(128 + 80)  # the header and half the data
with open("truncated.npy", "wb") as f:
    f.write(head)
with open("header-cut.npy", "wb") as f:
    f.write(head[:100])
