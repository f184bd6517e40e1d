#!/usr/bin/python3
"""zero_opt.torch's capture under another PyTorch version, checked here.

The build machine and CI have Debian's PyTorch 1.13; the GPU machine has a
PyTorch 2.x but no zero-opt. There, `capture` imports the models of
test/Import/Inputs/models.py (nanoGPT's GPT takes 2.x's
scaled_dot_product_attention path there) in f32 and f64 without the
zero-opt check:

    python3 benchmarks/torch_versions.py capture --out DIR

(benchmarks/gpu/run_all.sh runs it into $OUT/import-torch.) Brought back,
`check` runs on the build machine: each step is verified by zero-opt
--zero-verify-train-step, its text is compared with this machine's capture
of the same model, and the f64 step is trained 10 AdamW steps at stage 3 on
2 ranks by zero-run against the module trained by this machine's PyTorch
(test/Import/Inputs/import_compare.py --ir: losses to 1e-12):

    benchmarks/torch_versions.py check DIR --bin build/bin --work /tmp/tv

Exits 1 when a capture is refused, a step fails verification, or a loss
differs; a text difference alone is reported, not a failure (the versions'
graphs may differ and still compute the same step).
"""

import argparse
import difflib
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(
    os.path.abspath(__file__)), ".."))
INPUTS = os.path.join(ROOT, "test", "Import", "Inputs")
MODELS = ("mlp", "gpt", "llama", "vit", "elementwise")
DTYPES = ("f32", "f64")


def capture(out):
    sys.path[:0] = [os.path.join(ROOT, "python"), INPUTS]
    import torch
    import models
    from zero_opt.torch import TorchImportError, export_train_step

    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "torch.txt"), "w") as f:
        f.write(torch.__version__ + "\n")
    failed = 0
    for name in MODELS:
        for dtype in DTYPES:
            path = os.path.join(out, f"{name}-{dtype}.mlir")
            model, loss_fn, batch = getattr(models, name)()
            try:
                export_train_step(model, loss_fn, batch, path, dtype=dtype,
                                  verify=False)
                print(f"{name} {dtype}: captured with torch "
                      f"{torch.__version__}")
            except TorchImportError as error:
                failed += 1
                print(f"{name} {dtype}: refused: {error}")
    return 1 if failed else 0


def check(directory, bin_dir, work):
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(directory, "torch.txt")) as f:
        version = f.read().strip()
    failed = []
    for name in MODELS:
        for dtype in DTYPES:
            theirs = os.path.join(directory, f"{name}-{dtype}.mlir")
            if not os.path.exists(theirs):
                print(f"{name} {dtype}: not captured with torch {version}")
                failed.append(f"{name} {dtype}")
                continue
            verify = subprocess.run(
                [os.path.join(bin_dir, "zero-opt"), theirs,
                 "--zero-verify-train-step", "-o", os.devnull],
                capture_output=True, text=True)
            if verify.returncode != 0:
                print(f"{name} {dtype}: torch {version}'s step fails "
                      f"verification:\n{verify.stderr}")
                failed.append(f"{name} {dtype}")
                continue
            ours = os.path.join(work, f"{name}-{dtype}.mlir")
            subprocess.run([os.path.join(bin_dir, "zero-import-torch"),
                            f"{INPUTS}/models.py:{name}", "-o", ours,
                            "--dtype", dtype], check=True)
            with open(theirs) as a, open(ours) as b:
                diff = list(difflib.unified_diff(
                    b.read().splitlines(), a.read().splitlines(),
                    "this machine", f"torch {version}", lineterm="", n=1))
            changed = sum(1 for line in diff if line[:1] in "+-"
                          and line[:3] not in ("+++", "---"))
            print(f"{name} {dtype}: verified; "
                  + ("the same text" if not diff else
                     f"{changed} lines differ from this machine's capture"))
            for line in diff[:40]:
                print("    " + line)
            if dtype != "f64":
                continue
            compare = subprocess.run(
                [sys.executable, os.path.join(INPUTS, "import_compare.py"),
                 "--bin", bin_dir,
                 "--python-dir", os.path.join(bin_dir, "..", "python"),
                 "--work", os.path.join(work, name), "--model", name,
                 "--dtype", "f64", "--stage", "3", "--rtol", "1e-12",
                 "--atol", "1e-15", "--ir", theirs],
                capture_output=True, text=True)
            print("    " + "\n    ".join(
                compare.stdout.strip().splitlines()[-3:]))
            if compare.returncode != 0:
                print(compare.stderr)
                failed.append(f"{name} {dtype} training")
    print("FAILED: " + ", ".join(failed) if failed else
          f"OK: torch {version}'s captures verify and train as this "
          "machine's PyTorch")
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("capture")
    p.add_argument("--out", required=True)
    p = sub.add_parser("check")
    p.add_argument("directory")
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    args = parser.parse_args()
    if args.command == "capture":
        return capture(args.out)
    return check(args.directory, os.path.abspath(args.bin), args.work)


if __name__ == "__main__":
    sys.exit(main())
