#!/usr/bin/env python3
"""Character-level tokenizer for zero-run's token files (nanoGPT's shakespeare_char).

Encode: the vocabulary is the sorted unique characters of the text; every
character becomes its index. Writes OUT_DIR/NAME.bin (the whole text as
uint16 little-endian ids, zero-run's --data format) and
OUT_DIR/NAME.vocab.json ({"vocab_size": V, "chars": "..."}) and prints V
(alone on stdout, for scripts; what was written goes to stderr).

  prepare_text.py data/gpl-3.0.txt --out-dir build/data        # -> gpl-3.0.bin
  prepare_text.py --decode build/data/gpl-3.0.vocab.json 44 61 52 ...
  prepare_text.py --decode build/data/gpl-3.0.vocab.json --bin build/data/gpl-3.0.bin \\
      --offset 100 --count 64

Decode reads ids from the arguments, from --bin (a window of a token file)
or else from stdin (separated by spaces, commas or newlines) and prints the
text.
"""

import argparse
import json
import os
import re
import struct
import sys


def fail(message):
    print(f"prepare_text.py: error: {message}", file=sys.stderr)
    sys.exit(1)


def encode(args):
    try:
        with open(args.text, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        fail(f"{args.text}: not UTF-8 text: {e}")
    except OSError as e:
        fail(f"{args.text}: {e.strerror}")
    if not text:
        fail(f"{args.text}: the text is empty")
    chars = sorted(set(text))
    if len(chars) > 65536:
        fail(f"{args.text}: {len(chars)} distinct characters do not fit uint16 ids")
    index = {c: i for i, c in enumerate(chars)}
    name = args.name or os.path.splitext(os.path.basename(args.text))[0]
    os.makedirs(args.out_dir, exist_ok=True)
    bin_path = os.path.join(args.out_dir, name + ".bin")
    vocab_path = os.path.join(args.out_dir, name + ".vocab.json")
    ids = [index[c] for c in text]
    try:
        with open(bin_path, "wb") as f:
            f.write(struct.pack(f"<{len(ids)}H", *ids))
        with open(vocab_path, "w", encoding="utf-8") as f:
            json.dump({"vocab_size": len(chars), "chars": "".join(chars)}, f, ensure_ascii=False)
            f.write("\n")
    except OSError as e:
        fail(f"{e.filename}: {e.strerror}")
    print(f"wrote {bin_path} ({len(ids)} tokens) and {vocab_path} "
          f"(a vocabulary of {len(chars)} characters)", file=sys.stderr)
    print(len(chars))


def decode(args):
    try:
        with open(args.decode, encoding="utf-8") as f:
            vocab = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{args.decode}: {e}")
    chars = vocab.get("chars") if isinstance(vocab, dict) else None
    if not isinstance(chars, str) or vocab.get("vocab_size") != len(chars):
        fail(f"{args.decode}: expected {{\"vocab_size\": V, \"chars\": \"...\"}} with V characters")
    if args.bin:
        try:
            with open(args.bin, "rb") as f:
                f.seek(2 * args.offset)
                raw = f.read(2 * args.count if args.count is not None else -1)
        except OSError as e:
            fail(f"{args.bin}: {e.strerror}")
        if len(raw) % 2:
            fail(f"{args.bin}: odd number of bytes for uint16 tokens")
        ids = list(struct.unpack(f"<{len(raw) // 2}H", raw))
        where = lambda k: f"{args.bin}: token at position {args.offset + k}"
    else:
        words = args.ids or [w for w in re.split(r"[\s,]+", sys.stdin.read()) if w]
        try:
            ids = [int(w) for w in words]
        except ValueError as e:
            fail(f"not a token id: {e}")
        where = lambda k: f"id #{k}"
    out = []
    for k, i in enumerate(ids):
        if not 0 <= i < len(chars):
            fail(f"{where(k)} is {i}, out of range for a vocabulary of {len(chars)}")
        out.append(chars[i])
    sys.stdout.write("".join(out))
    if out and out[-1] != "\n":
        sys.stdout.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("text", nargs="?", help="the text to encode")
    ap.add_argument("--name", help="output base name (default: the text's file name stem)")
    ap.add_argument("--out-dir", default=".", help="where to write NAME.bin and NAME.vocab.json")
    ap.add_argument("--decode", metavar="VOCAB_JSON", help="decode ids with this vocabulary")
    ap.add_argument("ids", nargs="*", type=str, help=argparse.SUPPRESS)
    ap.add_argument("--bin", help="decode: read the ids from this token file")
    ap.add_argument("--offset", type=int, default=0, help="decode --bin: first token")
    ap.add_argument("--count", type=int, default=None, help="decode --bin: number of tokens")
    args = ap.parse_args()
    if args.decode:
        # With --decode every positional argument is an id.
        args.ids = ([args.text] if args.text else []) + args.ids
        decode(args)
    else:
        if not args.text or args.ids:
            ap.error("encode takes exactly one text file")
        encode(args)


if __name__ == "__main__":
    main()
