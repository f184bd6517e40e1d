#!/usr/bin/python3
"""Loads a safetensors file into PyTorch as `safetensors.torch.load_file`
does, with the checks that library makes (the package itself is not
installable here), and optionally into a PyTorch module with the parameter
names and shapes of Hugging Face's GPT2Model, strictly.

Usage: torch_safetensors.py FILE [--gpt2 LAYERS,HIDDEN,VOCAB,POSITIONS]

Prints one line per tensor (name, dtype, shape) and "loaded into GPT2Model
(strict)"; exits 1 naming the first violation.
"""

import argparse
import json
import struct
import sys

import torch
from torch import nn

# safetensors' dtype names and their torch types.
DTYPES = {"BOOL": torch.bool, "U8": torch.uint8, "I8": torch.int8,
          "I16": torch.int16, "I32": torch.int32, "I64": torch.int64,
          "F16": torch.float16, "BF16": torch.bfloat16, "F32": torch.float32,
          "F64": torch.float64}
MAX_HEADER = 100_000_000  # safetensors refuses larger headers


def fail(path, message):
    sys.exit("%s: %s" % (path, message))


def load_file(path):
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        fail(path, "shorter than the header length")
    (n,) = struct.unpack("<Q", blob[:8])
    if n > MAX_HEADER or 8 + n > len(blob):
        fail(path, "header length %d out of range" % n)
    try:
        header = json.loads(blob[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        fail(path, "the header is not UTF-8 JSON: %s" % error)
    if not isinstance(header, dict):
        fail(path, "the header is not a JSON object")
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        fail(path, "__metadata__ must map strings to strings")
    data = blob[8 + n:]
    # The tensors, by offset, must tile the data exactly: no gap, no overlap,
    # nothing after the last.
    entries = sorted(header.items(), key=lambda item: item[1]["data_offsets"])
    end = 0
    tensors = {}
    for name, info in entries:
        if set(info) != {"dtype", "shape", "data_offsets"}:
            fail(path, "tensor '%s': keys %s" % (name, sorted(info)))
        if info["dtype"] not in DTYPES:
            fail(path, "tensor '%s': unknown dtype %s" % (name, info["dtype"]))
        begin, stop = info["data_offsets"]
        if begin != end:
            fail(path, "tensor '%s' starts at %d, after %d" % (name, begin, end))
        dtype = DTYPES[info["dtype"]]
        numel = 1
        for dim in info["shape"]:
            numel *= dim
        width = torch.tensor([], dtype=dtype).element_size()
        if stop - begin != numel * width:
            fail(path, "tensor '%s': %d bytes for shape %s" %
                 (name, stop - begin, info["shape"]))
        raw = bytearray(data[begin:stop])
        flat = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
        tensors[name] = flat.reshape(info["shape"])
        end = stop
    if end != len(data):
        fail(path, "%d bytes after the last tensor" % (len(data) - end))
    return tensors, metadata


class Conv1D(nn.Module):
    """Hugging Face's Conv1D: the weight is [in, out]."""

    def __init__(self, inputs, outputs):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(inputs, outputs))
        self.bias = nn.Parameter(torch.empty(outputs))


class Block(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden)
        self.attn = nn.Module()
        self.attn.c_attn = Conv1D(hidden, 3 * hidden)
        self.attn.c_proj = Conv1D(hidden, hidden)
        self.ln_2 = nn.LayerNorm(hidden)
        self.mlp = nn.Module()
        self.mlp.c_fc = Conv1D(hidden, 4 * hidden)
        self.mlp.c_proj = Conv1D(4 * hidden, hidden)


class GPT2Model(nn.Module):
    """GPT2Model's parameters (transformers' names and shapes)."""

    def __init__(self, layers, hidden, vocab, positions):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(positions, hidden)
        self.h = nn.ModuleList(Block(hidden) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("--gpt2")
    args = parser.parse_args()
    tensors, metadata = load_file(args.file)
    for name, tensor in sorted(tensors.items()):
        print(name, str(tensor.dtype).replace("torch.", ""), list(tensor.shape))
    if args.gpt2:
        layers, hidden, vocab, positions = map(int, args.gpt2.split(","))
        model = GPT2Model(layers, hidden, vocab, positions)
        try:
            model.load_state_dict(tensors, strict=True)
        except RuntimeError as error:
            fail(args.file, str(error))
        for name, param in model.state_dict().items():
            if not torch.equal(param, tensors[name].to(param.dtype)):
                fail(args.file, "%s changed on loading" % name)
        print("loaded into GPT2Model (strict), format %s" % metadata.get("format"))


if __name__ == "__main__":
    main()
