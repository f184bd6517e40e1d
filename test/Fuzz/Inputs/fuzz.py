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
  - a safetensors file cut short.
Prints one line per kind, `OK: KIND N cases (E refused)`, and every failing
case with the command to reproduce it; exits 1 on any failure.
"""

import argparse
import json
import os
import random
import subprocess
import sys

sys.dont_write_bytecode = True


class Fuzzer:
    def __init__(self, args):
        self.args = args
        self.bin = lambda tool: os.path.join(args.bin, tool)
        self.work = lambda name: os.path.join(args.work, name)
        self.failures = []

    def run(self, kind, case, command, must_fail, names):
        """Runs one case; records a failure if it hangs, crashes, exits 0
        where it must fail, or fails without naming its input."""
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

    fuzz_hostile_readers(f, rng, work, tool)

    for failure in f.failures:
        print("FAIL:", failure)
    sys.exit(1 if f.failures else 0)


if __name__ == "__main__":
    main()
