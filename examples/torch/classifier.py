"""Bring your own model: a PyTorch classifier and its data for zero-opt.

    zero-import-torch classifier.py:make -o classifier.mlir --weights init.safetensors

make() returns (model, loss_fn, batch) as zero-import-torch expects: the
module, loss_fn(model, batch) -> the 0-d mean loss, and one rank's
micro-batch whose keys name the step's data. `python3 classifier.py DIR`
writes a dataset of 256 samples as DIR/inputs.npy and DIR/labels.npy for
zero-run --data; `python3 classifier.py DIR WEIGHTS` loads the weights
zero-run exported into the module and prints its accuracy on that dataset.
"""

import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

FEATURES, CLASSES, SAMPLES = 16, 4, 256


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(FEATURES, 64), nn.LayerNorm(64),
                                 nn.GELU(), nn.Linear(64, CLASSES))

    def forward(self, x):
        return self.net(x)


def loss_fn(model, batch):
    return F.cross_entropy(model(batch["inputs"]), batch["labels"])


def make():
    torch.manual_seed(0)
    batch = {"inputs": torch.randn(8, FEATURES),
             "labels": torch.randint(0, CLASSES, (8,))}
    return Classifier(), loss_fn, batch


def dataset():
    """Four Gaussian clusters, one per class."""
    generator = torch.Generator().manual_seed(1)
    centers = torch.randn(CLASSES, FEATURES, generator=generator) * 2
    labels = torch.randint(0, CLASSES, (SAMPLES,), generator=generator)
    inputs = centers[labels] + torch.randn(SAMPLES, FEATURES,
                                           generator=generator)
    return inputs, labels


if __name__ == "__main__":
    inputs, labels = dataset()
    if len(sys.argv) == 2:
        os.makedirs(sys.argv[1], exist_ok=True)
        np.save(os.path.join(sys.argv[1], "inputs.npy"), inputs.numpy())
        np.save(os.path.join(sys.argv[1], "labels.npy"), labels.numpy())
    else:
        from zero_opt.torch import load_weights
        model, _, _ = make()
        load_weights(model, sys.argv[2])
        with torch.no_grad():
            accuracy = (model(inputs).argmax(1) == labels).float().mean()
        print(f"accuracy {accuracy.item():.3f} on {SAMPLES} samples")
