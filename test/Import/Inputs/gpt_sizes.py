"""nanoGPT's GPT of models.py at the sizes of gpt-vs-zero-model.test's
`zero-model gpt` (and of benchmarks/import_gpt.py), as a factory for
zero-import-torch. ZERO_GPT_SIZES="L H A S B V" overrides them."""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

SIZES = [int(v) for v in os.environ.get("ZERO_GPT_SIZES",
                                        "2 64 4 32 2 96").split()]


def gpt():
    layers, hidden, heads, seq, batch, vocab = SIZES
    torch.manual_seed(0)
    data = {"tokens": torch.randint(0, vocab, (batch, seq)),
            "targets": torch.randint(0, vocab, (batch, seq))}
    model = models.GPT(vocab=vocab, seq=seq, hidden=hidden, heads=heads,
                       layers=layers)
    return model, models.language_model_loss, data
