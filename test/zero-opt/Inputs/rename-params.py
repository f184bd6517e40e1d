#!/usr/bin/python3
"""Copies a training step (argv[1]) to stdout with its parameters renamed:
each further argument OLD=NEW gives the zero.param and zero.grad string of
OLD the MLIR string literal body NEW (escapes such as \\01 or \\FF as MLIR
writes them, for any byte)."""

import sys


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    for rename in sys.argv[2:]:
        old, new = rename.split("=", 1)
        for key in ("zero.param", "zero.grad"):
            text = text.replace('%s = "%s"' % (key, old),
                                '%s = "%s"' % (key, new))
    sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape"))


if __name__ == "__main__":
    main()
