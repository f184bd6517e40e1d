#!/usr/bin/python3
"""Seeded mutation runs over every input zero-opt and zero-run read.

From one small valid set of inputs (a GPT training step, a DeepSpeed config,
its compiled schedule, a token file, a safetensors file of its weights),
makes --cases mutations of each kind with a fixed seed and runs the tool on
each, with a per-case timeout. Every run must end (no hang), by itself (no
signal: no crash, no sanitizer abort), with exit 0 or an error: a non-zero
exit whose message names the input (its file, or `<override>`). Mutations
that break a rule the tools promise to check must not exit 0:
  - a JSON config or schedule that is not valid JSON,
  - a schedule missing a top-level key,
  - a token file of odd length or with an id at or above the vocabulary,
  - a safetensors file cut short,
  - a checkpoint directory with a symbolic link planted in it or a manifest
    whose file path leads elsewhere (fuzz_checkpoint_dirs: refused naming
    the checkpoint file, nothing outside the directory read or written).
  - a safetensors file cut short.
Hostile inputs of the compiler, generated rather than mutated:
  - nesting: IR nested past the tools' limit of 256 levels (attributes,
    types, regions, generic ops, a mix) must be refused by zero-opt and
    zero-translate with an error naming the file; IR within it must not
    end by a signal;
  - unregistered: steps with ops of unknown dialects
    (--allow-unregistered-dialect) through activation checkpointing, alone
    and in the pipeline;
  - names: parameters named with any bytes (multi-byte UTF-8, invalid UTF-8,
    control characters, XML specials) must compile, and the memory timeline
    (.svg, and the SVG of the .html page) must parse as XML, its page text be
    UTF-8 without control characters.
Prints one line per kind, `OK: KIND N cases (E refused)`, and every failing
case with the command to reproduce it; exits 1 on any failure.
"""

import argparse
import json
import os
import random
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

sys.dont_write_bytecode = True


class Fuzzer:
    def __init__(self, args):
        self.args = args
        self.bin = lambda tool: os.path.join(args.bin, tool)
        self.work = lambda name: os.path.join(args.work, name)
        self.failures = []

    def run(self, kind, case, command, must_fail, names, judge=None):
        """Runs one case; records a failure if it hangs, crashes, exits 0
        where it must fail, fails without naming its input, or `judge`
        (given the finished process) says why it is wrong."""
        try:
            result = subprocess.run(command, capture_output=True, text=True,
                                    errors="replace",
                                    timeout=self.args.timeout)
        except subprocess.TimeoutExpired:
            self.failures.append("%s %d: no end after %ds: %s" %
                                 (kind, case, self.args.timeout,
                                  " ".join(command)))
            return None
        code = result.returncode
        why = None
        if code < 0 or code >= 128:
            why = "ended by signal or abort (%d)" % code
        elif code == 0 and must_fail:
            why = "exit 0 on an input that breaks a rule"
        elif code != 0 and not any(n in result.stderr for n in names):
            why = "error names none of %s" % names
        elif judge:
            why = judge(result)
        if why:
            last = (result.stderr.strip().splitlines() or [""])[-1][:300]
            self.failures.append("%s %d: %s: %s\n  %s" %
                                 (kind, case, why, " ".join(command), last))
        return code

    def report(self, kind, codes):
        codes = [c for c in codes if c is not None]
        print("OK: %s %d cases (%d refused)" %
              (kind, len(codes), sum(1 for c in codes if c != 0)))


def mutate_text(rng, text):
    """A byte flip, an insertion, a deletion or a truncation."""
    choice = rng.randrange(4)
    i = rng.randrange(len(text))
    if choice == 0:
        return text[:i] + rng.choice("{}[]():,=%@\"'0189-x \n") + text[i + 1:]
    if choice == 1:
        return text[:i] + rng.choice(["0" * 40, "-", "1e999", "\"", "}}"]) + \
            text[i:]
    if choice == 2:
        return text[:i] + text[i + rng.randrange(1, 64):]
    return text[:i]


def json_paths(node, path=()):
    """Every (path, value) of a JSON document."""
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from json_paths(value, path + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from json_paths(value, path + (index,))


def extreme(rng):
    return rng.choice([-1, 0, 2 ** 63 - 1, -2 ** 63, 1e308, -1e308, 0.5,
                       "x", None, True, [], {}, 2 ** 40])


def mutate_json(rng, document):
    """Replaces a value, deletes a key or an element, or swaps two elements
    of a list; returns (document, deleted top-level key or None)."""
    paths = [p for p, _ in json_paths(document) if p]
    path = rng.choice(paths)
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    choice = rng.randrange(3)
    if choice == 0:
        parent[last] = extreme(rng)
        return document, None
    if choice == 1 or not isinstance(parent, list) or len(parent) < 2:
        del parent[last]
        return document, (last if len(path) == 1 else None)
    j = rng.randrange(len(parent))
    parent[last], parent[j] = parent[j], parent[last]
    return document, None


def hostile_inputs(f, rng, work, tool):
    """Inputs built to cost: configs with thousands of findings on one line,
    float knobs at the edges of f32, and outputs to a full disk. Returns the
    (kind, codes) of each kind."""
    import re

    def run(kind, case, command, names, stderr_max=None,
            must_fail=True, check=None):
        """f.run, plus: its stderr is at most `stderr_max` bytes with no LLVM
        fatal error, and `check()` holds."""
        def judge(result):
            if "LLVM ERROR" in result.stderr:
                return "LLVM fatal error"
            if stderr_max and len(result.stderr) > stderr_max:
                return "%d bytes of errors (at most %d)" % (
                    len(result.stderr), stderr_max)
            if result.returncode == 0 and check:
                return check()
            return None
        return f.run(kind, case, command, must_fail, names, judge)

    results = []
    step = work("step.mlir")

    # Minified configs with thousands of findings: unknown keys, missing
    # commas, huge keys. Refused with at most 20 errors quoted, in bounded
    # output (the quadratic reader wrote every line once per finding), and
    # within the fuzz's per-case timeout like every case (the quadratic
    # reader took over a minute on 50,000 keys): no tighter clock, which a
    # loaded or sanitized run would make flaky.
    codes = []
    for case in range(6):
        name = work("flood-%d.json" % case)
        count = rng.choice([2000, 8000, 50000])
        if case % 3 == 0:
            members = ['"zero_optimization": {"stag": 3}'] + [
                '"unknown_%d": %d' % (i, i) for i in range(count)]
            text = "{" + ", ".join(members) + "}"
        elif case % 3 == 1:
            text = "{" + " ".join('"k%d": %d' % (i, i)
                                  for i in range(count)) + "}"
        else:
            text = '{"%s": 1, "zero_optimization": {"%s": 2}}' % (
                "x" * (count * 20), "stage" * count)
        with open(name, "w") as out:
            out.write(text)
        codes.append(run("config-flood", case,
                         [tool("zero-opt"), step, "--zero-config=" + name,
                          "--zero-world-size=1", "-o", os.devnull],
                         [os.path.basename(name)], stderr_max=16384))
    results.append(("config-flood", codes))

    # Float knobs at the edges of f32: accepted values compile to IR without
    # a new infinite or NaN constant; the others are refused at the key.
    knobs = ["optimizer.params.lr", "optimizer.params.eps",
             "optimizer.params.weight_decay", "optimizer.params.betas",
             "fp16.loss_scale", "fp16.min_loss_scale", "gradient_clipping",
             "scheduler.params.warmup_max_lr",
             "scheduler.params.warmup_min_lr",
             "scheduler.params.last_batch_iteration"]
    values = ["3.4028234e38", "3.4028236e38", "1e39", "1.1754944e-38",
              "1e-40", "1e-50", "0.99999999", "0.99999994",
              "4503599627370496", "4503599627370497", "9223372036854775807"]
    # The step has infinities of its own (the -inf a max starts from, the
    # overflow check of fp16): a value must add none to those of the same
    # step with the knob at an ordinary value.
    nonfinite = re.compile(r"0x7F800000|0xFF800000|0x7FF0000000000000|"
                           r"0xFFF0000000000000|0x7FC00000|\bnan\b|\binf\b")

    def compile_with(knob, value, output):
        command = [tool("zero-opt"), step, "--zero-world-size=1",
                   "--zero-set=optimizer.type=Adam",
                   "--zero-set=scheduler.type=WarmupLR",
                   "--zero-set=%s=%s" % (knob, value), "-o", output]
        if knob.startswith("fp16."):
            command.append("--zero-set=fp16.enabled=true")
        return command

    baseline = {}
    codes = []
    for case in range(f.args.cases // 2):
        knob, value = rng.choice(knobs), rng.choice(values)
        if knob.endswith("betas"):
            value = "[0.9,%s]" % value
        if knob not in baseline:
            ordinary = ("[0.9,0.5]" if knob.endswith("betas") else
                        "5" if knob.endswith("iteration") else "0.5")
            name = work("f32-%s.mlir" % knob)
            subprocess.run(compile_with(knob, ordinary, name), check=True)
            baseline[knob] = len(nonfinite.findall(open(name).read()))
        output = work("f32-%d.mlir" % case)

        def finite(output=output, expected=baseline[knob]):
            found = nonfinite.findall(open(output).read())
            if len(found) != expected:
                return "%d non-finite constants in the compiled step (%d " \
                    "with an ordinary value)" % (len(found), expected)
            return None
        codes.append(run("f32-edges", case, compile_with(knob, value, output),
                         ["<override>"], must_fail=False, check=finite))
    results.append(("f32-edges", codes))

    # Every output of the tools to a full disk: an error naming the file.
    full = "/dev/full"
    link = work("full.svg")
    if os.path.exists(full):
        if not os.path.lexists(link):
            os.symlink(full, link)
        compile_ = [tool("zero-opt"), step, "--zero-stage=1",
                    "--zero-world-size=2"]
        commands = [
            (compile_ + ["-o", full], full),
            (compile_ + ["--zero-report=" + full, "-o", os.devnull], full),
            (compile_ + ["--zero-memory-timeline=" + link, "-o", os.devnull],
             link),
            (compile_ + ["--zero-emit-schedule=" + full, "-o", os.devnull],
             full),
            ([tool("zero-translate"), "--zero-to-schedule", work("rank.mlir"),
              "-o", full], full),
            ([tool("zero-model"), "mlp", "--layers", "2", "--hidden", "4",
              "-o", full], full)]
        subprocess.run(compile_ + ["-o", work("rank.mlir")], check=True)
        codes = [run("dev-full", case, command, ["'%s'" % file],
                     stderr_max=4096)
                 for case, (command, file) in enumerate(commands)]
        results.append(("dev-full", codes))
    return results
def snapshot_tree(root):
    """Every file under `root` (links as their targets' names), by path."""
    files = {}
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            if os.path.islink(path):
                files[path] = "-> " + os.readlink(path)
            else:
                with open(path, "rb") as f:
                    files[path] = f.read()
    return files


def fuzz_checkpoint_dirs(f, rng, step_json):
    """The checkpoint directory as a hostile input (kind "ckpt"): a tiny
    checkpoint saved once, then copies of it with a symbolic link planted in
    place of `latest`, `.lock`, a step directory, a manifest or a rank file,
    a manifest whose file path leads elsewhere, a `latest` of long text, and
    zero-ckpt's output aimed at the checkpoint itself. Each case must be
    refused with a message naming the checkpoint file at fault, print none
    of the text outside, and leave every file outside the directory as it
    was (none written, none created)."""
    work, tool = f.work, f.bin
    import shutil
    ck = work("ckpt-source")
    subprocess.run([tool("zero-run"), step_json, "--steps", "1", "--save", ck],
                   check=True, stdout=subprocess.DEVNULL)
    outside = work("ckpt-outside")
    os.makedirs(outside)
    with open(os.path.join(outside, "victim"), "w") as out:
        out.write("precious\n")
    with open(os.path.join(outside, "secret"), "w") as out:
        out.write("step-1 " + "x" * 40 + " SECRET\n" * 50)
    shutil.copy(os.path.join(ck, "step-1", "rank-0.safetensors"), outside)
    shutil.copytree(os.path.join(ck, "step-1"),
                    os.path.join(outside, "step-1"))
    shutil.copy(os.path.join(ck, "step-1", "manifest.json"),
                os.path.join(outside, "manifest.json"))

    def link(target, name):
        os.symlink(os.path.join(outside, target), name)

    def replace_with_link(target, name):
        os.remove(name) if not os.path.isdir(name) else shutil.rmtree(name)
        link(target, name)

    def edit_manifest(directory, path):
        manifest = os.path.join(directory, "step-1", "manifest.json")
        m = json.load(open(manifest))
        m["files"][0]["path"] = path
        with open(manifest, "w") as out:
            json.dump(m, out)

    readers = [
        lambda d: [tool("zero-ckpt"), "info", d],
        lambda d: [tool("zero-ckpt"), "verify", d],
        lambda d: [tool("zero-ckpt"), "consolidate", d, "-o",
                   d + "-out.safetensors"],
        lambda d: [tool("zero-ckpt"), "reshard", d, "--world-size", "2",
                   "-o", d + "-out"],
        lambda d: [tool("zero-run"), step_json, "--steps", "1", "--resume", d],
    ]
    # (plant(directory) -> the file the message must name, command(directory))
    cases = [
        (lambda d: replace_with_link("victim", os.path.join(d, "latest"))
         or os.path.join(d, "latest"),
         lambda d: [tool("zero-run"), step_json, "--steps", "1",
                    "--resume", ck, "--save", d]),
        (lambda d: replace_with_link("victim", os.path.join(d, "latest"))
         or os.path.join(d, "latest"),
         lambda d: [tool("zero-ckpt"), "reshard", ck, "--world-size", "2",
                    "-o", d]),
        (lambda d: replace_with_link("secret", os.path.join(d, "latest"))
         or os.path.join(d, "latest"), rng.choice(readers)),
        (lambda d: (shutil.rmtree(d), os.makedirs(d),
                    link("created", os.path.join(d, ".lock")))
         and os.path.join(d, ".lock"),
         lambda d: [tool("zero-run"), step_json, "--steps", "1", "--save", d]),
        (lambda d: replace_with_link("step-1", os.path.join(d, "step-1"))
         or os.path.join(d, "step-1"), rng.choice(readers)),
        (lambda d: replace_with_link(
            "manifest.json", os.path.join(d, "step-1", "manifest.json"))
         or os.path.join(d, "step-1", "manifest.json"), rng.choice(readers)),
        (lambda d: replace_with_link(
            "rank-0.safetensors",
            os.path.join(d, "step-1", "rank-0.safetensors"))
         or os.path.join(d, "step-1", "rank-0.safetensors"),
         rng.choice(readers[1:])),
        (lambda d: shutil.copy(os.path.join(outside, "secret"),
                               os.path.join(d, "latest"))
         and os.path.join(d, "latest"), rng.choice(readers)),
        (lambda d: os.path.join(d, "step-1", "rank-0.safetensors"),
         lambda d: [tool("zero-ckpt"), "consolidate", d + "/.", "-o",
                    os.path.join(d, "step-1", "rank-0.safetensors")]),
    ]
    for path in ["../../ckpt-outside/rank-0.safetensors",
                 os.path.join(outside, "rank-0.safetensors"),
                 "./rank-0.safetensors", "rank-0.safetensors/.",
                 "rank-00.safetensors", "sub/rank-0.safetensors"]:
        cases.append((lambda d, path=path: edit_manifest(d, path) or
                      os.path.join(d, "step-1", "manifest.json"),
                      rng.choice(readers)))
    codes = []
    for case, (plant, command) in enumerate(cases):
        directory = work("ckpt-%d" % case)
        shutil.copytree(ck, directory, symlinks=True)
        named = plant(directory)
        before = snapshot_tree(outside)
        argv = command(directory)
        code = f.run("ckpt", case, argv, True, [named])
        after = snapshot_tree(outside)
        if before != after:
            changed = sorted(set(before) ^ set(after) |
                             {p for p in before if after.get(p) != before[p]})
            f.failures.append("ckpt %d: wrote outside the checkpoint "
                              "directory (%s): %s" %
                              (case, ", ".join(changed), " ".join(argv)))
        result = subprocess.run(argv, capture_output=True, text=True,
                                errors="replace", timeout=f.args.timeout)
        if "SECRET" in result.stderr + result.stdout:
            f.failures.append("ckpt %d: printed a file outside: %s" %
                              (case, " ".join(argv)))
        codes.append(code)
    f.report("ckpt", codes)
# The nesting limit of the zero tools (zero/Support/InputNesting.h).
MAX_NESTING = 256


def nested_ir(rng, kind, depth):
    """IR nested `depth` levels of `kind` deep."""
    if kind == "attribute":
        return ("func.func @f() attributes {deep = " + "[" * depth +
                "]" * depth + "} {\n  return\n}\n")
    if kind == "type":
        return ("func.func @f(%a: " + "tensor<" * depth + "f32" +
                ">" * depth + ") {\n  return\n}\n")
    if kind == "region":
        return ("func.func @f() {\n" + "scf.execute_region {\n" * depth +
                "scf.yield\n}\n" * depth + "return\n}\n")
    if kind == "generic":
        return ('"fuzz.op"() ({\n' * depth +
                '"fuzz.end"() : () -> ()\n}) : () -> ()\n' * depth)
    # A mix: each level an attribute list, a dictionary, a type or a
    # generic region, closed in order.
    opens, closes = [], []
    for _ in range(depth):
        o, c = rng.choice([("[", "]"), ("{a = ", "}"), ("tensor<", ">"),
                           ("!fuzz.t<", ">"), ('"fuzz.op"() ({', "})"),
                           ("(", ")")])
        opens.append(o)
        closes.append(c)
    return ('"fuzz.top"() {deep = ' + "".join(opens) + "0" +
            "".join(reversed(closes)) + "} : () -> ()\n")


def fuzz_nesting(f, rng):
    """IR nested past the limit is refused by zero-opt and zero-translate,
    naming the file; IR within it may fail, never by a signal."""
    codes = []
    kinds = ["attribute", "type", "region", "generic", "mix"]
    for case in range(2 * len(kinds)):
        kind = kinds[case % len(kinds)]
        deep = case < len(kinds)
        depth = (rng.randrange(MAX_NESTING, 20000) if deep
                 else rng.randrange(1, MAX_NESTING // 2 - 2))
        name = f.work("nest-%d.mlir" % case)
        with open(name, "w") as out:
            out.write(nested_ir(rng, kind, depth))
        options = ["--allow-unregistered-dialect"]
        if rng.randrange(2):
            options.append("--zero-stage=%d" % rng.randrange(4))
        codes.append(f.run("nesting", case,
                           [f.bin("zero-opt"), name, "-o", os.devnull] +
                           options, deep, [os.path.basename(name)]))
        codes.append(f.run("nesting", case,
                           [f.bin("zero-translate"), "--zero-to-schedule",
                            "--allow-unregistered-dialect", name,
                            "-o", os.devnull],
                           deep, [os.path.basename(name)]))
    f.report("nesting", codes)


def unregistered_step(rng):
    """A step of 3 checkpointed layers h = act(h w) and a loss, whose
    activations, their gradients and extra ops are ops of an unknown
    dialect at random: with a region, with no result, outside the
    segments."""
    t = "tensor<2x4xf32>"
    lines = ["func.func @step(" + ", ".join(
        ["%%w%d: tensor<4x4xf32> {zero.param = \"w%d\"}" % (i, i)
         for i in range(3)] + ["%%x: %s {zero.data = \"x\"}" % t]) +
        ") -> (tensor<f32> {zero.loss}, " + ", ".join(
        ["tensor<4x4xf32> {zero.grad = \"w%d\"}" % i for i in range(3)]) +
        ") {",
        "  %zero = arith.constant 0.0 : f32"]

    def unregistered(result, operands, segment):
        attrs = " {zero.segment = %d : i64}" % segment \
            if segment is not None else ""
        types = ", ".join([t] * len(operands))
        if rng.randrange(3) == 0:
            return ('  %s = "fuzz.region"(%s) ({\n  ^bb0(%%a: f32):\n'
                    '    "fuzz.yield"(%%a) : (f32) -> ()\n  })%s : (%s) -> %s'
                    % (result, ", ".join(operands), attrs, types, t))
        return ('  %s = "fuzz.op"(%s)%s : (%s) -> %s' %
                (result, ", ".join(operands), attrs, types, t))

    layers = 3
    h = "%x"
    for i in range(layers):
        seg = " {zero.segment = %d : i64}" % i
        lines.append("  %%e%d = tensor.empty()%s : %s" % (i, seg, t))
        lines.append("  %%f%d = linalg.fill%s ins(%%zero : f32) "
                     "outs(%%e%d : %s) -> %s" % (i, seg, i, t, t))
        lines.append("  %%z%d = linalg.matmul%s ins(%s, %%w%d : %s, "
                     "tensor<4x4xf32>) outs(%%f%d : %s) -> %s" %
                     (i, seg, h, i, t, i, t, t))
        if rng.randrange(4):
            lines.append(unregistered("%%h%d" % i, ["%%z%d" % i], i))
        else:
            lines.append("  %%h%d = linalg.map {arith.mulf} ins(%%z%d, %%z%d "
                         ": %s, %s) outs(%%e%d : %s) {zero.segment = %d : "
                         "i64}" % (i, i, i, t, t, i, t, i))
        if rng.randrange(3) == 0:
            lines.append('  "fuzz.effect"(%%h%d)%s : (%s) -> ()' %
                         (i, seg if rng.randrange(2) else "", t))
        h = "%%h%d" % i
    lines += ["  %%el = tensor.empty() : tensor<f32>",
              "  %%fl = linalg.fill ins(%%zero : f32) outs(%%el : tensor<f32>)"
              " -> tensor<f32>",
              "  %%loss = linalg.reduce {arith.addf} ins(%s : %s) outs(%%fl : "
              "tensor<f32>) dimensions = [0, 1]" % (h, t),
              "  %%gt = tensor.empty() : tensor<4x2xf32>",
              "  %%gw = tensor.empty() : tensor<4x4xf32>",
              "  %%fw = linalg.fill ins(%%zero : f32) outs(%%gw : "
              "tensor<4x4xf32>) -> tensor<4x4xf32>"]
    lines = [line.replace("%%", "%") for line in lines]
    g = "%z{}".format(layers - 1)
    grads = {}
    for i in reversed(range(layers)):
        if rng.randrange(4):
            lines.append(unregistered("%%dz%d" % i, [g, "%%z%d" % i], None))
        else:
            lines.append("  %%dz%d = linalg.map {arith.mulf} ins(%s, %%z%d : "
                         "%s, %s) outs(%%e%d : %s)" % (i, g, i, t, t, i, t))
        prev = "%x" if i == 0 else "%%h%d" % (i - 1)
        lines.append("  %%t%d = linalg.transpose ins(%s : %s) outs(%%gt : "
                     "tensor<4x2xf32>) permutation = [1, 0]" % (i, prev, t))
        lines.append("  %%dw%d = linalg.matmul ins(%%t%d, %%dz%d : "
                     "tensor<4x2xf32>, %s) outs(%%fw : tensor<4x4xf32>) -> "
                     "tensor<4x4xf32>" % (i, i, i, t))
        grads[i] = "%%dw%d" % i
        g = "%%dz%d" % i
    returned = [grads[i] for i in range(3)]
    lines.append("  return %%loss, %s : tensor<f32>, %s" %
                 (", ".join(returned), ", ".join(["tensor<4x4xf32>"] * 3)))
    lines.append("}")
    return "\n".join(line.replace("%%", "%") for line in lines) + "\n"


def fuzz_unregistered(f, rng):
    """Ops of unknown dialects through activation checkpointing: the pass
    alone, the pipeline, the automatic choice; any end but a signal."""
    codes = []
    for case in range(12):
        name = f.work("unregistered-%d.mlir" % case)
        with open(name, "w") as out:
            out.write(unregistered_step(rng))
        command = [f.bin("zero-opt"), name, "--allow-unregistered-dialect",
                   "-o", os.devnull]
        mode = case % 3
        if mode == 0:
            command.append("--zero-checkpoint-activations")
        elif mode == 1:
            command += ["--zero-stage=%d" % rng.randrange(4),
                        "--zero-world-size=2", "--zero-checkpoint-activations",
                        "--zero-set=zero_optimization.offload_optimizer."
                        "device=" + rng.choice(["cpu", "none"])]
        else:
            command += ["--zero-stage=3", "--zero-world-size=2",
                        "--zero-checkpoint-activations=auto",
                        "--zero-device-memory=%dB" % rng.randrange(256, 4096)]
        # Offloading at stage 0 is a configuration error at <override>.
        codes.append(f.run("unregistered", case, command, False,
                           [os.path.basename(name), "<override>"]))
    f.report("unregistered", codes)


def hostile_name(rng, index):
    """A parameter name of any bytes, unique by `index`."""
    pieces = ["\u00e9".encode(), "\u20ac".encode(), "\U0001f600".encode(),
              b"\x01", b"\x09", b"\x0a", b"\x1f", b"\x7f", b"\xc2\x85",
              b"\x80", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf",
              b"\xef\xbf\xbe", b"<", b"&", b"\"", b"'", b"]]>", b"\\",
              b"a"]
    name = b"%d" % index
    for _ in range(rng.randrange(1, 40)):
        name += rng.choice(pieces)
    return name


def mlir_string(name):
    """`name` as the body of an MLIR string literal."""
    return "".join(chr(b) if 0x20 <= b < 0x7f and b not in b'"\\' else
                   "\\%02X" % b for b in name)


def check_timeline(path):
    """Why the timeline at `path` is not well-formed, or None."""
    data = open(path, "rb").read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return "not UTF-8: %s" % error
    bad = re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\ufffe\uffff]", text)
    if bad:
        return "control character U+%04X" % ord(bad.group())
    if path.endswith(".html"):
        svg = re.search("<svg .*</svg>", text, re.DOTALL)
        if not svg:
            return "no <svg> in the page"
        text = svg.group()
    try:
        ElementTree.fromstring(text)
    except ElementTree.ParseError as error:
        return "not well-formed XML: %s" % error
    return None


def fuzz_names(f, rng, step):
    """Parameters named with any bytes compile, and the memory timeline
    parses as XML."""
    names = re.findall(r'zero\.param = "([^"]*)"', step)
    codes = []
    for case in range(8):
        text = step
        for index, old in enumerate(names):
            if rng.randrange(2):
                text = text.replace('"%s"' % old, '"%s"' %
                                    mlir_string(hostile_name(rng, index)))
        name = f.work("names-%d.mlir" % case)
        with open(name, "w") as out:
            out.write(text)
        timeline = f.work("names-%d.%s" % (case, rng.choice(["svg", "html"])))
        code = f.run("names", case,
                     [f.bin("zero-opt"), name, "--zero-stage=3",
                      "--zero-world-size=2",
                      "--zero-memory-timeline=" + timeline,
                      "--zero-report=" + f.work("names-%d.json" % case),
                      "--zero-emit-schedule=" +
                      f.work("names-%d.schedule.json" % case),
                      "-o", os.devnull], False, [os.path.basename(name)])
        codes.append(code)
        if code != 0:
            f.failures.append("names %d: %s refused" % (case, name))
        elif code == 0:
            why = check_timeline(timeline)
            if why:
                f.failures.append("names %d: %s: %s" % (case, timeline, why))
    f.report("names", codes)
def writers_of(schedule):
    """(stream, index) of the instruction writing each value."""
    writers = {}
    for stream, instructions in schedule["instructions"].items():
        for index, inst in enumerate(instructions):
            for value in inst.get("results", []):
                writers[value] = (stream, index)
    return writers


def fuzz_hostile_readers(f, rng, work, tool):
    """Inputs built to break the readers and the loader's proofs rather than
    random ones; every case must be refused, naming its file, and end:
    deep-json: JSON nested 100,000 deep as a schedule, inside a schedule,
      as a safetensors header for --init-from;
    fifo: a FIFO without a writer as the schedule, --data and --init-from;
    proofs: a schedule whose update loses its writer (on the copy stream of
      an offloaded optimizer too), whose staging region lies over a live
      parameter shard, whose parameter layout has a shape [0], [] or one
      element short, or whose zero.adam has no operands."""
    deep = "[" * 100000 + "]" * 100000
    codes = []
    cases = [("schedule.json", deep, None),
             ("inner.json", '{"format": "zero-schedule", "x": %s}' % deep,
              None)]
    header = ('{"w": %s}' % deep).encode()
    cases.append(("deep.safetensors",
                  len(header).to_bytes(8, "little") + header, "--init-from"))
    for case, (base, content, flag) in enumerate(cases):
        name = work("deep-" + base)
        with open(name, "wb") as out:
            out.write(content.encode() if isinstance(content, str)
                      else content)
        command = [tool("zero-run"), name, "--steps", "1"] if flag is None \
            else [tool("zero-run"), work("step.json"), "--steps", "1", flag,
                  name]
        codes.append(f.run("deep-json", case, command, True,
                           [os.path.basename(name)]))
    f.report("deep-json", codes)

    codes = []
    for case, flag in enumerate([None, "--data", "--init-from"]):
        name = work("fifo-%d" % case)
        if os.path.exists(name):
            os.unlink(name)
        os.mkfifo(name)
        command = [tool("zero-run"), name, "--steps", "1"] if flag is None \
            else [tool("zero-run"), work("step.json"), "--steps", "1", flag,
                  name]
        codes.append(f.run("fifo", case, command, True,
                           [os.path.basename(name)]))
    f.report("fifo", codes)

    # Two ranks (--nproc 2, through mpirun), so that parameters are cut and
    # gathered: the step at stage 3, and at stage 2 with the optimizer
    # offloaded to the CPU (the new shards come back on the copy stream).
    config = json.load(open(work("ds.json")))
    compiled = []
    for base, zero in (("proof-stage3", config["zero_optimization"]),
                       ("proof-offload", {"stage": 2, "offload_optimizer":
                                          {"device": "cpu"}})):
        config["zero_optimization"] = zero
        with open(work(base + "-ds.json"), "w") as out:
            json.dump(config, out)
        subprocess.run([tool("zero-opt"), work("step.mlir"),
                        "--zero-config=" + work(base + "-ds.json"),
                        "--zero-world-size=2",
                        "--zero-emit-schedule=" + work(base + ".json"),
                        "-o", os.devnull], check=True)
        # As compiled, it runs.
        code = f.run("proofs", -1, [tool("zero-run"), work(base + ".json"),
                                    "--steps", "1", "--nproc", "2"],
                     False, [base])
        if code != 0:
            f.failures.append("proofs: %s.json as compiled fails" % base)
        compiled.append(json.load(open(work(base + ".json"))))
    schedule, offload = compiled

    edits = []
    for source in (schedule, offload):
        writers = writers_of(source)
        updates = [r for r in source["results"] if r["kind"] == "update"
                   and r["value"] in writers]
        on_copy = [r for r in updates if writers[r["value"]][0] == "copy"]
        for result in (on_copy or updates)[:2]:
            def drop(document, value=result["value"]):
                stream, index = writers_of(document)[value]
                del document["instructions"][stream][index]
            edits.append(("no-writer", source, drop))
    shards = [a for a in schedule["arguments"]
              if a["kind"] == "param" and a["sharded"]]
    buffers = {b["id"]: b for b in schedule["buffers"]}
    values = {v["id"]: v for v in schedule["values"]}
    staged = [(i, inst) for i, inst in enumerate(schedule["instructions"]
                                                 ["comm"])
              if "staging" in inst]
    for index, inst in staged[:2]:
        shard = buffers[values[rng.choice(shards)["value"]]["buffer"]]
        def move(document, index=index, shard=shard):
            region = document["instructions"]["comm"][index]["staging"]
            region["space"], region["offset"] = shard["space"], shard["offset"]
        edits.append(("staging-over-shard", schedule, move))
    for shape in ([0], [], "short"):
        def reshape(document, shape=shape):
            arg = [a for a in document["arguments"]
                   if a["kind"] == "param" and a["sharded"]][0]
            layout = arg["layout"]
            if shape == "short" and layout["shape"]:
                layout["shape"] = layout["shape"][:-1] + \
                    [layout["shape"][-1] - 1]
            elif shape != "short":
                layout["shape"] = shape
        edits.append(("layout-shape", schedule, reshape))
    def empty_adam(document):
        for inst in document["instructions"]["compute"]:
            if inst["op"] == "zero.adam":
                inst["operands"] = []
                return
    edits.append(("adam-arity", schedule, empty_adam))
    codes = []
    for case, (what, source, edit) in enumerate(edits):
        name = work("proof-%d-%s.json" % (case, what))
        document = json.loads(json.dumps(source))
        edit(document)
        with open(name, "w") as out:
            json.dump(document, out)
        codes.append(f.run("proofs", case, [tool("zero-run"), name,
                                            "--steps", "2", "--nproc", "2"],
                           True, [os.path.basename(name)]))
    f.report("proofs", codes)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--timeout", type=int, default=60)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    f = Fuzzer(args)
    rng = random.Random(args.seed)
    work, tool = f.work, f.bin

    vocab = 32
    subprocess.run([tool("zero-model"), "gpt", "--num-layers", "1",
                    "--hidden-size", "16", "--num-attention-heads", "2",
                    "--seq-length", "8", "--batch-size", "2",
                    "--vocab-size", str(vocab), "-o", work("step.mlir")],
                   check=True)
    config = {"zero_optimization": {"stage": 3, "reduce_bucket_size": 1000,
                                    "stage3_param_persistence_threshold": 0},
              "optimizer": {"type": "AdamW", "params": {"lr": 1e-3,
                                                         "betas": [0.9, 0.95],
                                                         "weight_decay": 0.1}},
              "scheduler": {"type": "WarmupLR",
                            "params": {"warmup_num_steps": 10}},
              "gradient_clipping": 1.0}
    with open(work("ds.json"), "w") as out:
        json.dump(config, out, indent=1)
    subprocess.run([tool("zero-opt"), work("step.mlir"),
                    "--zero-config=" + work("ds.json"), "--zero-world-size=1",
                    "--zero-emit-schedule=" + work("step.json"),
                    "-o", os.devnull], check=True)
    subprocess.run([tool("zero-run"), work("step.json"), "--steps", "0",
                    "--export", work("init.safetensors")], check=True,
                   stdout=subprocess.DEVNULL)
    with open(work("tokens.bin"), "wb") as out:
        out.write(bytes(rng.randrange(vocab) if i % 2 == 0 else 0
                        for i in range(2 * 512)))

    # The training-step IR.
    text = open(work("step.mlir")).read()
    codes = []
    for case in range(args.cases):
        name = work("ir-%d.mlir" % case)
        with open(name, "w") as out:
            out.write(mutate_text(rng, text))
        codes.append(f.run("ir", case, [tool("zero-opt"), name,
                                        "--zero-stage=%d" % rng.randrange(4),
                                        "--zero-world-size=2",
                                        "-o", os.devnull],
                           False, [os.path.basename(name)]))
    f.report("ir", codes)

    # The DeepSpeed config: as text (must parse) and as JSON values.
    text = open(work("ds.json")).read()
    codes = []
    for case in range(args.cases):
        name = work("ds-%d.json" % case)
        if case % 2 == 0:
            mutated = mutate_text(rng, text)
            try:
                json.loads(mutated)
                invalid = False
            except ValueError:
                invalid = True
        else:
            mutated = json.dumps(mutate_json(rng, json.loads(text))[0])
            invalid = False
        with open(name, "w") as out:
            out.write(mutated)
        codes.append(f.run("config", case, [tool("zero-opt"), work("step.mlir"),
                                            "--zero-config=" + name,
                                            "--zero-world-size=1",
                                            "-o", os.devnull],
                           invalid, [os.path.basename(name)]))
    f.report("config", codes)

    # The schedule.
    schedule = json.load(open(work("step.json")))
    codes = []
    for case in range(args.cases):
        name = work("schedule-%d.json" % case)
        document, deleted = mutate_json(rng, json.loads(json.dumps(schedule)))
        with open(name, "w") as out:
            if case % 4 == 3:
                out.write(mutate_text(rng, json.dumps(document)))
                must_fail = False
            else:
                json.dump(document, out)
                # Provenance and the gradient records are optional.
                must_fail = deleted not in (None, "producer", "source",
                                            "function", "gradients")
        codes.append(f.run("schedule", case,
                           [tool("zero-run"), name, "--steps", "2",
                            "--comm-timeout", "10"],
                           must_fail, [os.path.basename(name)]))
    f.report("schedule", codes)

    # Token files: odd lengths and ids beyond the vocabulary.
    data = open(work("tokens.bin"), "rb").read()
    codes = []
    for case in range(args.cases // 4):
        name = work("tokens-%d.bin" % case)
        if case % 2 == 0:
            mutated = data[:2 * rng.randrange(1, len(data) // 2) - 1]
        else:
            i = 2 * rng.randrange(len(data) // 2)
            mutated = data[:i] + bytes([rng.randrange(vocab, 256), 0]) + \
                data[i + 2:]
        with open(name, "wb") as out:
            out.write(mutated)
        codes.append(f.run("tokens", case,
                           [tool("zero-run"), work("step.json"), "--steps", "2",
                            "--data", name], True, [os.path.basename(name)]))
    f.report("tokens", codes)

    # Safetensors weights: cut short, or with a flipped header byte.
    data = open(work("init.safetensors"), "rb").read()
    codes = []
    for case in range(args.cases // 4):
        name = work("init-%d.safetensors" % case)
        if case % 2 == 0:
            mutated, must_fail = data[:rng.randrange(len(data))], True
        else:
            i = rng.randrange(8, 8 + int.from_bytes(data[:8], "little"))
            mutated = data[:i] + bytes([rng.randrange(256)]) + data[i + 1:]
            must_fail = False
        with open(name, "wb") as out:
            out.write(mutated)
        codes.append(f.run("safetensors", case,
                           [tool("zero-run"), work("step.json"), "--steps", "1",
                            "--init-from", name], must_fail,
                           [os.path.basename(name)]))
    f.report("safetensors", codes)

    for kind, codes in hostile_inputs(f, rng, work, tool):
        f.report(kind, codes)
    fuzz_checkpoint_dirs(f, rng, work("step.json"))
    fuzz_nesting(f, rng)
    fuzz_unregistered(f, rng)
    fuzz_names(f, rng, open(work("step.mlir"), encoding="utf-8").read())
    fuzz_hostile_readers(f, rng, work, tool)

    for failure in f.failures:
        print("FAIL:", failure)
    sys.exit(1 if f.failures else 0)


if __name__ == "__main__":
    main()
