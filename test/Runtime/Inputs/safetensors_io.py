#!/usr/bin/python3
"""fp32 safetensors files for the runtime tests, without the safetensors package.

The format: an 8-byte little-endian header length N, N bytes of JSON header
({name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__":
{str: str}}), then the raw little-endian data. write() lays the data out as
safetensors' own writer does (sorted by name, header padded with spaces to a
multiple of 8 bytes).

Library: read, read_raw and write (the repository's python/zero_opt/
safetensors.py); compare(a, b, rtol, atol) -> report.

Command line:
  safetensors_io.py list FILE
      one line per tensor: name, shape, mean, std, min, max
  safetensors_io.py compare EXPECTED ACTUAL [--rtol R] [--atol A] [--names-only-in-both]
      per tensor "max abs diff" and "max rel diff"; an element fails where
      |actual - expected| > atol + rtol * |expected|. Exit 0 if every tensor
      matches (same names, shapes, values within tolerance), 1 otherwise.
"""

import argparse
import os
import sys

import numpy as np


HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "python"))
from zero_opt.safetensors import FormatError, read, read_raw, write  # noqa: E402,F401


def compare(expected, actual, rtol, atol, out=sys.stdout, only_common=False):
    """Compares two {name: array}; prints a line per tensor; True if all match."""
    ok = True
    names_e, names_a = set(expected), set(actual)
    if not only_common:
        for name in sorted(names_e - names_a):
            print(f"MISSING {name}: in the expected file only", file=out)
            ok = False
        for name in sorted(names_a - names_e):
            print(f"EXTRA {name}: in the actual file only", file=out)
            ok = False
    worst = (0.0, "")
    for name in [n for n in expected if n in names_a]:
        e = np.asarray(expected[name], dtype=np.float64)
        a = np.asarray(actual[name], dtype=np.float64)
        if e.shape != a.shape:
            print(f"SHAPE {name}: expected {list(e.shape)}, actual {list(a.shape)}", file=out)
            ok = False
            continue
        diff = np.abs(a - e)
        tol = atol + rtol * np.abs(e)
        bad = ~(diff <= tol)  # NaN counts as bad
        max_abs = float(diff.max()) if diff.size else 0.0
        rel = diff / np.maximum(np.abs(e), 1e-30)
        max_rel = float(rel.max()) if rel.size else 0.0
        status = "ok" if not bad.any() else f"MISMATCH ({int(bad.sum())} of {bad.size})"
        line = f"{name}: max abs diff {max_abs:.3g}, max rel diff {max_rel:.3g}: {status}"
        if bad.any():
            i = np.unravel_index(int(np.argmax(np.where(bad, diff - tol, -np.inf))), e.shape)
            line += (f"; worst at {list(int(k) for k in i)}: expected {e[i]:.9g}, "
                     f"actual {a[i]:.9g}")
            ok = False
        print(line, file=out)
        if max_abs > worst[0]:
            worst = (max_abs, name)
    print(f"{'PASS' if ok else 'FAIL'}: {len(names_e & names_a)} tensors compared, "
          f"max abs diff {worst[0]:.3g}{' (' + worst[1] + ')' if worst[1] else ''}", file=out)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list")
    ls.add_argument("file")
    cmp_ = sub.add_parser("compare")
    cmp_.add_argument("expected")
    cmp_.add_argument("actual")
    cmp_.add_argument("--rtol", type=float, default=1e-5)
    cmp_.add_argument("--atol", type=float, default=1e-6)
    cmp_.add_argument("--names-only-in-both", action="store_true",
                      help="compare the tensors in both files; names in one only are fine")
    args = ap.parse_args()
    try:
        if args.command == "list":
            tensors, metadata = read(args.file)
            for k, v in sorted(metadata.items()):
                print(f"metadata {k} = {v}")
            for name, t in tensors.items():
                t64 = t.astype(np.float64)
                stats = (f"mean {t64.mean():.6g} std {t64.std():.6g} min {t64.min():.6g} "
                         f"max {t64.max():.6g}") if t.size else "empty"
                print(f"{name} {list(t.shape)} {stats}")
            return 0
        expected, _ = read(args.expected)
        actual, _ = read(args.actual)
        return 0 if compare(expected, actual, args.rtol, args.atol,
                            only_common=args.names_only_in_both) else 1
    except (FormatError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
