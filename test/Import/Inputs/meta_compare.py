#!/usr/bin/python3
"""Imports each named model of models.py twice, as it is and with its
parameters on the meta device (meta_models.py), in one process, and prints
whether the two steps are the same text; exits 1 if one differs."""

import argparse
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--python-dir", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--dtype", default="f32")
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    sys.path.insert(0, args.python_dir)
    import meta_models
    import models
    from zero_opt.torch import export_train_step

    os.makedirs(args.work, exist_ok=True)
    same = True
    for name in args.models:
        texts = []
        for source, suffix in ((models, ""), (meta_models, "-meta")):
            path = os.path.join(args.work, f"{name}{suffix}.mlir")
            export_train_step(*getattr(source, name)(), path,
                              dtype=args.dtype, verify=False)
            with open(path) as f:
                texts.append(f.read())
        ok = texts[0] == texts[1]
        same &= ok
        print(f"{name}: {'the same step' if ok else 'DIFFERENT steps'} "
              f"from meta parameters ({len(texts[0].splitlines())} lines)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
