"""Models that would import as a silently wrong step: each must be refused
with the module path and the aten op or parameter (traps.test)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _classification(model, features=6, classes=3, rows=4):
    torch.manual_seed(0)
    batch = {"inputs": torch.randn(rows, features),
             "labels": torch.randint(0, classes, (rows,))}
    return model, lambda m, b: F.cross_entropy(m(b["inputs"]), b["labels"]), \
        batch


def dropout():
    """Dropout with p > 0 in train mode draws random numbers."""
    model = nn.Sequential(nn.Linear(6, 8), nn.Dropout(0.1), nn.Linear(8, 3))
    return _classification(model.train())


def dropout_eval():
    """The same model in eval mode is deterministic, and imports."""
    model = nn.Sequential(nn.Linear(6, 8), nn.Dropout(0.1), nn.Linear(8, 3))
    return _classification(model.eval())


def batch_norm():
    """BatchNorm in train mode updates its running statistics in forward."""
    model = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
    return _classification(model.train())


class MaskedMean(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        scores = self.fc(x)
        # Boolean-mask indexing: the result's size depends on the data.
        kept = scores[scores > 0]
        return scores - kept.sum()


def data_dependent_shape():
    return _classification(MaskedMean())


class HeldTensor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 3)
        # A tensor attribute, neither a parameter nor a buffer.
        self.scale = torch.full((3,), 2.0)

    def forward(self, x):
        return self.fc(x) * self.scale


def tensor_constant():
    return _classification(HeldTensor())


class Convolution(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 2, 3)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(self.conv(x[:, None, :]).flatten(1))


def convolution():
    return _classification(Convolution())


class AllOfFloats(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        scores = self.fc(x)
        # torch.all of float data (nonzero is true): only masks lower.
        return scores * torch.all(scores, 1, keepdim=True)


def all_of_floats():
    return _classification(AllOfFloats())


def unbounded_integer_data():
    """Integer data that no embedding or cross-entropy bounds."""
    model = nn.Linear(6, 1)
    torch.manual_seed(0)
    batch = {"inputs": torch.randn(4, 6), "counts": torch.randint(0, 5, (4,))}
    loss = lambda m, b: (m(b["inputs"]).squeeze(1) * b["counts"]).mean()  # noqa: E731
    return model, loss, batch


def unused_parameter():
    model = nn.ModuleDict({"used": nn.Linear(6, 3), "spare": nn.Linear(6, 3)})
    torch.manual_seed(0)
    batch = {"inputs": torch.randn(4, 6), "labels": torch.randint(0, 3, (4,))}
    loss = lambda m, b: F.cross_entropy(m["used"](b["inputs"]), b["labels"])  # noqa: E731
    return model, loss, batch


def batch_norm_eval():
    """BatchNorm in eval mode normalizes with its running statistics,
    frozen buffers, and imports."""
    model = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
    return _classification(model.eval())
