"""fp32 safetensors files without the safetensors package.

The format: an 8-byte little-endian header length N, N bytes of JSON header
({name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__":
{str: str}}), then the raw little-endian data. write() lays the data out as
safetensors' own writer does (sorted by name, header padded with spaces to a
multiple of 8 bytes).

read(path) -> (dict name -> np.ndarray float32, metadata dict);
read_raw(path) -> (header without metadata, metadata, data bytes), any dtype;
write(path, tensors, metadata=None).
"""

import json
import struct

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
