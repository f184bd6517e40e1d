"""Model factories for the importer's tests: each returns (model, loss_fn,
batch) as zero-import-torch expects, with the batch of one rank's
micro-batch. Written as a user would write them, with torch.nn modules."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def cross_entropy(model, batch):
    return F.cross_entropy(model(batch["inputs"]), batch["labels"])


class Classifier(nn.Module):
    """An MLP classifier: Linear, LayerNorm, GELU, ReLU."""

    def __init__(self, features=12, hidden=16, classes=5):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        x = F.gelu(self.norm(self.fc1(x)))
        return self.head(F.relu(self.fc2(x)))


def mlp():
    torch.manual_seed(0)
    batch = {"inputs": torch.randn(4, 12),
             "labels": torch.randint(0, 5, (4,))}
    return Classifier(), cross_entropy, batch
