#!/usr/bin/python3
"""zero-import-torch FILE.py:FACTORY -o model.mlir [--weights init.safetensors]

Imports a PyTorch model's training step (docs/ImportTorch.md). FACTORY, a
function in FILE.py, returns (model, loss_fn, batch): loss_fn(model, batch)
is the 0-d mean loss and batch a dict of one micro-batch's tensors, whose
keys name the step's data arguments.
"""

import argparse
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# The package: the build tree's python/, or the install tree's
# lib/zero-opt/python/.
for candidate in (os.path.join(HERE, "..", "python"),
                  os.path.join(HERE, "..", "lib", "zero-opt", "python")):
    if os.path.isdir(os.path.join(candidate, "zero_opt")):
        sys.path.insert(0, os.path.normpath(candidate))
        break


def parse_bounds(items):
    bounds = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value.isdigit() or int(value) < 1:
            raise SystemExit(f"zero-import-torch: --data-bound '{item}': "
                             "expected NAME=N with N >= 1")
        bounds[name] = int(value)
    return bounds


def load_factory(spec):
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise SystemExit(f"zero-import-torch: '{spec}': expected "
                         "FILE.py:FACTORY")
    if not os.path.isfile(path):
        raise SystemExit(f"zero-import-torch: {path}: no such file")
    module_spec = importlib.util.spec_from_file_location(
        "zero_import_model", path)
    module = importlib.util.module_from_spec(module_spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    module_spec.loader.exec_module(module)
    factory = getattr(module, name, None)
    if not callable(factory):
        raise SystemExit(f"zero-import-torch: {path} has no function "
                         f"'{name}'")
    made = factory()
    if not isinstance(made, tuple) or len(made) != 3:
        raise SystemExit(f"zero-import-torch: {path}:{name} must return "
                         "(model, loss_fn, batch)")
    return made


def main():
    parser = argparse.ArgumentParser(
        prog="zero-import-torch",
        description="Writes a PyTorch model's training step as zero-opt IR.")
    parser.add_argument("factory", help="FILE.py:FACTORY")
    parser.add_argument("-o", "--output", required=True,
                        help="the training step (.mlir)")
    parser.add_argument("--weights",
                        help="also write the model's parameters and buffers "
                             "(fp32 safetensors, for zero-run --init-from)")
    parser.add_argument("--dtype", default="f32", choices=["f32", "f64"],
                        help="the step's float type (f32)")
    parser.add_argument("--data-bound", action="append", default=[],
                        metavar="NAME=N",
                        help="integer data NAME lies in [0, N) (the class "
                             "count of a cross-entropy's targets is found)")
    args = parser.parse_args()

    from zero_opt.torch import TorchImportError, export_train_step
    model, loss_fn, batch = load_factory(args.factory)
    try:
        export_train_step(model, loss_fn, batch, args.output,
                          dtype=args.dtype,
                          data_bounds=parse_bounds(args.data_bound),
                          weights=args.weights)
    except TorchImportError as e:
        print(f"zero-import-torch: {args.factory}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
