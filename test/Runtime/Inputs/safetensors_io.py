#!/usr/bin/python3
"""fp32 safetensors files for the runtime tests, without the safetensors package.

The format: an 8-byte little-endian header length N, N bytes of JSON header
({name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__":
{str: str}}), then the raw little-endian data. write() lays the data out as
safetensors' own writer does (sorted by name, header padded with spaces to a
multiple of 8 bytes).

Library: read(path) -> (dict name -> np.ndarray float32, metadata dict);
read_raw(path) -> (header without metadata, metadata, data bytes), any dtype;
write(path, tensors, metadata=None); compare(a, b, rtol, atol) -> report.

Command line:
  safetensors_io.py list FILE
      one line per tensor: name, shape, mean, std, min, max
  safetensors_io.py compare EXPECTED ACTUAL [--rtol R] [--atol A] [--names-only-in-both]
      per tensor "max abs diff" and "max rel diff"; an element fails where
      |actual - expected| > atol + rtol * |expected|. Exit 0 if every tensor
      matches (same names, shapes, values within tolerance), 1 otherwise.
"""

import argparse
import json
import struct
import sys

import numpy as np


class FormatError(Exception):
    pass


def read_raw(path):
    """Returns ({name: {dtype, shape, data_offsets}}, metadata, data bytes)."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise FormatError(f"{path}: truncated: {len(blob)} bytes, but the header length alone "
                          "takes 8")
    (n,) = struct.unpack("<Q", blob[:8])
    if n > len(blob) - 8:
        raise FormatError(f"{path}: the header length {n} exceeds the {len(blob) - 8} bytes "
                          "after it")
    try:
        header = json.loads(blob[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise FormatError(f"{path}: the header is not valid JSON: {e}")
    if not isinstance(header, dict):
        raise FormatError(f"{path}: the header must be a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    return header, metadata, blob[8 + n:]


def read(path):
    """Returns ({name: float32 array}, metadata), tensors in data order."""
    header, metadata, data = read_raw(path)
    entries = []
    for name, info in header.items():
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise FormatError(f"{path}: tensor '{name}': expected dtype, shape and data_offsets")
        if info["dtype"] != "F32":
            raise FormatError(f"{path}: tensor '{name}': dtype {info['dtype']} is not supported "
                              "(only F32)")
        begin, end = info["data_offsets"]
        shape = tuple(int(d) for d in info["shape"])
        numel = int(np.prod(shape, dtype=np.int64))
        if not 0 <= begin <= end <= len(data):
            raise FormatError(f"{path}: tensor '{name}': data_offsets [{begin}, {end}] out of "
                              f"range of the data ({len(data)} bytes)")
        if end - begin != 4 * numel:
            raise FormatError(f"{path}: tensor '{name}': data_offsets [{begin}, {end}] hold "
                              f"{end - begin} bytes, but shape {list(shape)} needs {4 * numel}")
        entries.append((begin, name, shape, end))
    tensors = {}
    for begin, name, shape, end in sorted(entries):
        tensors[name] = np.frombuffer(data[begin:end], dtype="<f4").astype(np.float32).reshape(shape)
    return tensors, metadata


def write(path, tensors, metadata=None):
    """Writes {name: array} as F32, data sorted by name."""
    header = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    chunks, offset = [], 0
    for name in sorted(tensors):
        arr = np.ascontiguousarray(np.asarray(tensors[name], dtype="<f4"))
        raw = arr.tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in chunks:
            f.write(raw)


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
