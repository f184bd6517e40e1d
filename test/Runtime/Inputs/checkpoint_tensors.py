#!/usr/bin/python3
"""Checks on the tensors of zero-run checkpoints, read from the rank files
with the manifest's layouts (any dtype, shards joined in rank order).

  checkpoint_tensors.py masters-from-params CKPT
      exit 0 iff every master/<p> of CKPT is param/<p> widened to fp32
      exactly, and print how many elements differ from SAVED's masters when
      --saved SAVED is given (a resume with load_from_fp32_weights: false
      loses the bits the masters had beyond the 16-bit parameters).
  checkpoint_tensors.py same CKPT_A CKPT_B [--except PREFIX]
      exit 0 iff both hold the same tensors, bit for bit, besides those
      whose names start with PREFIX.
"""

import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import read_raw  # noqa: E402

DTYPES = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16,
          "I64": torch.int64, "I32": torch.int32, "F64": torch.float64}


def step_directory(path):
    latest = os.path.join(path, "latest")
    if os.path.exists(latest):
        return os.path.join(path, open(latest).read().strip())
    return path


def read_rank_file(path):
    header, _, data = read_raw(path)
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        raw = bytearray(data[begin:end])
        tensors[name] = torch.frombuffer(raw, dtype=DTYPES[info["dtype"]]) \
            if raw else torch.empty(0, dtype=DTYPES[info["dtype"]])
    return tensors


def read_checkpoint(path):
    """{name: whole flat tensor} of the checkpoint's rank files."""
    directory = step_directory(path)
    manifest = json.load(open(os.path.join(directory, "manifest.json")))
    ranks = [read_rank_file(os.path.join(directory, f["path"]))
             for f in sorted(manifest["files"], key=lambda f: f["rank"])]
    whole = {}
    for entry in manifest["tensors"]:
        name = entry["name"]
        if entry.get("sharded"):
            joined = torch.cat([rank[name] for rank in ranks])
            whole[name] = joined[:entry["layout"]["numel"]]
        else:
            whole[name] = ranks[0][name]
    return whole


def masters_from_params(args):
    tensors = read_checkpoint(args.checkpoint)
    saved = read_checkpoint(args.saved) if args.saved else None
    masters = [n for n in tensors if n.startswith("master/")]
    if not masters:
        sys.exit("%s has no master weights" % args.checkpoint)
    lost = 0
    for name in masters:
        param = tensors["param/" + name[len("master/"):]].float()
        if not torch.equal(tensors[name], param):
            sys.exit("%s: %s is not its 16-bit parameter widened" %
                     (args.checkpoint, name))
        if saved is not None:
            lost += int((saved[name] != tensors[name]).sum())
    print("OK: %d master weights are their 16-bit parameters widened" %
          len(masters))
    if saved is not None:
        print("%s elements of the saved master weights differ" %
              ("some" if lost else "no"))


def same(args):
    a, b = read_checkpoint(args.first), read_checkpoint(args.second)
    keep = lambda names: sorted(
        n for n in names if not (args.exclude and n.startswith(args.exclude)))
    if keep(a) != keep(b):
        sys.exit("the checkpoints hold different tensors")
    for name in keep(a):
        if a[name].dtype != b[name].dtype or not torch.equal(a[name], b[name]):
            sys.exit("tensor '%s' differs" % name)
    print("OK: %d tensors equal" % len(keep(a)))


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("masters-from-params")
    p.add_argument("checkpoint")
    p.add_argument("--saved")
    p.set_defaults(run=masters_from_params)
    p = sub.add_parser("same")
    p.add_argument("first")
    p.add_argument("second")
    p.add_argument("--except", dest="exclude")
    p.set_defaults(run=same)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
