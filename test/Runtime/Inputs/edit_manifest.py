#!/usr/bin/python3
"""Copies checkpoint directory SRC to DST and applies a Python statement to
the manifest of its newest step, bound to `m`: the hostile manifests of
checkpoint-faults.test.

Usage: edit_manifest.py SRC DST STATEMENT
"""

import glob
import json
import os
import shutil
import sys

source, target, statement = sys.argv[1:4]
shutil.copytree(source, target)
path = sorted(glob.glob(os.path.join(target, "step-*", "manifest.json")))[-1]
with open(path) as f:
    m = json.load(f)
exec(statement)
with open(path, "w") as f:
    json.dump(m, f)
