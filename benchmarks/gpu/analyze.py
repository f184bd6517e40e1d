#!/usr/bin/env python3
"""The GPU run's checks and numbers (benchmarks/gpu/run_all.sh).

Subcommands:

  checks   Runs every whole-step check of schedules/manifest.json (or
           those of one --world-size) with `zero-run --device cuda` (and
           `--device cpu` when this build's host backend runs here) and
           compares the losses and the exported weights with the host
           backend's, made on the build machine by compile_schedules.sh,
           within the manifest's tolerances. World size 2: `mpirun
           --oversubscribe -np 2 zero-run ... --gpus-per-node 1` (both ranks
           on GPU 0, the staged-MPI device communicator), every rank's loss
           and the mean loss within the tolerances, every rank's bytes sent
           and received per step exactly the host run's; skipped ("skipped:
           no MPI on this machine") where there is no mpirun or
           `zero-run --nproc 2` says it was built without MPI. One line per
           check; exit 1 if any fails (after running them all); skips are
           not failures.
  overlap  TRACE: per stream and step, the comm stream's busy time (its
           collectives) and the part of it that the compute stream's busy
           time covers (its instructions but waits and records): the
           communication hidden behind compute.
  adam     TRACE SCHEDULE: the bandwidth of the fused Adam kernels: the
           bytes each zero.adam instruction must move (every tensor operand
           read once, every result written once, from the schedule's value
           table) over its time in the trace.
  launches TRACE EXPLAIN: the cost model's prediction (zero-run --explain
           --explain-json: its "plan", every launch with the points of the
           instructions it runs) against the trace, launch by launch: each
           compute event's time goes to the planned launch that runs its
           instruction. Prints per category the predicted and measured ms
           per step and their ratio, then the launches that took the most
           time; events of no planned launch are counted apart. This is
           what a GPU run recalibrates the model from.
  copybw   Device-to-device copy bandwidth through PyTorch (cudaMemcpyAsync
           of 1 GiB, bytes read plus written), the ceiling Adam is measured
           against.
  summary  Reads what run_all.sh left in its work folder and writes
           results.json and summary.md, and prints the summary table.

Traces are zero-run's Chrome traces: a pid per rank, a tid per stream named
by thread_name metadata, "ph": "X" events with cat "compute", "collective"
or "sync" and args {step, point, loc}.
"""

import argparse
import json
import re
import math
import os
import statistics
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from intervals import intersection, total, union  # noqa: E402


# ---------------------------------------------------------------------------
# safetensors (fp32 exports) without the safetensors package.

def read_safetensors(path):
    import numpy as np

    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
        data = f.read()
    types = {"F32": np.float32, "F64": np.float64, "F16": np.float16,
             "I64": np.int64, "I32": np.int32}
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        array = np.frombuffer(data[begin:end], dtype=types[info["dtype"]])
        tensors[name] = array.reshape(info["shape"]).astype(np.float64)
    return tensors


def read_metrics(path):
    """{step: record} of rank 0."""
    return {step: r for (step, rank), r in read_rank_metrics(path).items()
            if rank == 0}


def read_rank_metrics(path):
    """{(step, rank): record} of every rank."""
    records = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                records[(r["step"], r.get("rank", 0))] = r
    return records


# ---------------------------------------------------------------------------
# checks

def compare(check, reference_dir, metrics, export, reference=None):
    """(ok, details) of one run against the reference (default: the
    manifest's host files)."""
    import numpy as np

    tol = check["tolerance"]
    world = check.get("world_size", 1)
    if reference is None:
        ref_path = os.path.join(reference_dir, check["reference_metrics"])
        ref_export = os.path.join(reference_dir, check["reference_export"])
    else:
        ref_path, ref_export = reference
    ref_metrics = read_rank_metrics(ref_path)
    got = read_rank_metrics(metrics)
    details = {"losses": [], "problems": []}
    worst_loss = 0.0

    def check_loss(what, a, b):
        nonlocal worst_loss
        error = abs(a - b)
        if not (error <= tol["loss_atol"] + tol["loss_rtol"] * abs(b)):
            details["problems"].append(
                "%s: %.9g, host %.9g (|diff| %.3g > %.3g + %.3g rel)" % (
                    what, a, b, error, tol["loss_atol"], tol["loss_rtol"]))
        if b:
            worst_loss = max(worst_loss, error / abs(b))

    for step in range(1, check["steps"] + 1):
        if step not in {s for s, _ in got} or \
           step not in {s for s, _ in ref_metrics}:
            details["problems"].append("step %d: no metrics" % step)
            continue
        ranks = sorted(r for s, r in got if s == step)
        if ranks != list(range(world)):
            details["problems"].append("step %d: metrics of ranks %s, "
                                       "expected %d" % (step, ranks, world))
            continue
        if world == 1:
            a, b = got[(step, 0)]["loss"], ref_metrics[(step, 0)]["loss"]
            details["losses"].append([step, a, b])
            check_loss("step %d: loss" % step, a, b)
            continue
        # Every rank's loss (its own rows), the mean over the ranks, and the
        # bytes each rank's communicator counted: the ring's bytes of each
        # collective, so the device communicator must move the host's bytes.
        a, b = (got[(step, 0)]["mean_loss"],
                ref_metrics[(step, 0)]["mean_loss"])
        details["losses"].append([step, a, b])
        check_loss("step %d: mean loss" % step, a, b)
        for rank in range(world):
            mine, host = got[(step, rank)], ref_metrics.get((step, rank))
            if host is None:
                details["problems"].append("step %d rank %d: no host metrics"
                                           % (step, rank))
                continue
            check_loss("step %d rank %d: loss" % (step, rank), mine["loss"],
                       host["loss"])
            moved = (mine["bytes_sent"], mine["bytes_received"])
            expected = (host["bytes_sent"], host["bytes_received"])
            if moved != expected:
                details["bytes_match_host"] = False
                details["problems"].append(
                    "step %d rank %d: %d/%d bytes sent/received, host %d/%d"
                    % ((step, rank) + moved + expected))
            details.setdefault("bytes_per_step", {})[str(rank)] = list(moved)
            details.setdefault("bytes_match_host", True)
    details["loss_max_rel"] = worst_loss
    mine, theirs = read_safetensors(export), read_safetensors(ref_export)
    if sorted(mine) != sorted(theirs):
        details["problems"].append("exported tensors differ: %s vs %s" % (
            sorted(set(mine) ^ set(theirs))[:5], "host"))
    worst_abs = worst_rel = 0.0
    outliers = total = 0
    for name in sorted(set(mine) & set(theirs)):
        a, b = mine[name], theirs[name]
        if a.shape != b.shape:
            details["problems"].append("%s: shape %s, host %s" % (
                name, a.shape, b.shape))
            continue
        diff = np.abs(a - b)
        if not np.all(np.isfinite(a)):
            details["problems"].append("%s: not finite" % name)
            continue
        total += a.size
        worst_abs = max(worst_abs, float(diff.max(initial=0)))
        rel = diff / np.maximum(np.abs(b), 1e-30)
        worst_rel = max(worst_rel, float(rel.max(initial=0)))
        if "weight_rtol" in tol and "weight_outlier_fraction" in tol:
            # Within the tolerance but for a few elements (Adam steps on
            # gradients that are mostly rounding noise), all within an
            # absolute bound.
            bad = diff > tol["weight_atol"] + tol["weight_rtol"] * np.abs(b)
            outliers += int(bad.sum())
            if diff.max(initial=0) > tol["weight_max_abs"]:
                details["problems"].append(
                    "%s: |diff| %.3g > %.3g" % (name, float(diff.max()),
                                                tol["weight_max_abs"]))
        elif "weight_rtol" in tol:
            bad = diff > tol["weight_atol"] + tol["weight_rtol"] * np.abs(b)
            if bad.any():
                i = int(np.argmax(bad.reshape(-1)))
                details["problems"].append(
                    "%s[%d]: %.9g, host %.9g (%d elements outside %.3g + "
                    "%.3g rel)" % (name, i, a.reshape(-1)[i], b.reshape(-1)[i],
                                   int(bad.sum()), tol["weight_atol"],
                                   tol["weight_rtol"]))
        else:
            outliers += int((diff > tol["weight_outlier_abs"]).sum())
            if diff.max(initial=0) > tol["weight_max_abs"]:
                details["problems"].append(
                    "%s: |diff| %.3g > %.3g" % (name, float(diff.max()),
                                                tol["weight_max_abs"]))
    if "weight_outlier_fraction" in tol and total:
        fraction = outliers / total
        details["outlier_fraction"] = fraction
        if fraction > tol["weight_outlier_fraction"]:
            details["problems"].append(
                "%.2f%% of the weights differ by more than the tolerance "
                "(at most %.2f%%)" % (100 * fraction,
                                      100 * tol["weight_outlier_fraction"]))
    details["weight_max_abs"] = worst_abs
    details["weight_max_rel"] = worst_rel
    return not details["problems"], details


def compare_state(check, reference, dump, problems):
    """The gradients and optimizer states of zero-run --dump-state against
    the host's: every tensor the host dumped (grad/NAME, exp_avg/NAME, ...)
    within ||a - b|| <= rtol ||b||, the parameters being compare()'s."""
    import numpy as np

    mine, theirs = read_safetensors(dump), read_safetensors(reference)
    states = [n for n in sorted(theirs) if "/" in n]
    if not any(n.startswith("grad/") for n in states):
        problems.append("%s: no gradients in the host's dump" % reference)
    missing = [n for n in states if n not in mine]
    if missing:
        problems.append("dump: %d tensors missing, e.g. %s" % (
            len(missing), missing[0]))
    rtol, worst = check["state_rtol"], 0.0
    for name in states:
        if name not in mine:
            continue
        a, b = mine[name], theirs[name]
        if a.shape != b.shape:
            problems.append("%s: shape %s, host %s" % (name, a.shape,
                                                        b.shape))
            continue
        norm = float(np.linalg.norm(b))
        error = float(np.linalg.norm(a - b))
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))) or \
                error > rtol * norm:
            problems.append("%s: ||diff|| %.3g > %.3g ||host|| (%.3g)" % (
                name, error, rtol, norm))
        if norm:
            worst = max(worst, error / norm)
    return {"state_tensors": len(states), "state_max_rel": worst}


def run(cmd, log, timeout):
    """Exit status of cmd, its output in log; 124 after timeout seconds.
    The command runs in its own process group, all of which (mpirun and its
    ranks) is stopped at the timeout."""
    import signal

    with open(log, "w") as f:
        f.write("$ %s\n" % " ".join(cmd))
        f.flush()
        process = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        try:
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            # mpirun forwards SIGTERM to its ranks; what is left, SIGKILL.
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(process.pid, sig)
                    process.wait(timeout=10)
                    break
                except ProcessLookupError:
                    break
                except subprocess.TimeoutExpired:
                    pass
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            f.write("\nanalyze.py: killed after %d s\n" % timeout)
            return 124


def tail(path, lines=3):
    """The last lines of a run's log, without the command line."""
    with open(path, errors="replace") as f:
        text = [l for l in f.readlines() if not l.startswith("$ ")]
    return " | ".join(l.strip() for l in text[-lines:] if l.strip())


def mpirun(ranks):
    """The launcher of a world-size-N check: N ranks sharing this machine's
    cores (Open MPI refuses root unless told)."""
    cmd = ["mpirun", "--oversubscribe", "-np", str(ranks)]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd


NO_MPI = "skipped: no MPI on this machine"


def probe_mpi(zero_run, check, schedule, device, work, timeout):
    """None where `zero-run --nproc N` can run the check's schedule here (one
    step), else why not: a skip reason (no mpirun; zero-run built without
    MPI) or, when mpirun and MPI exist but the probe failed, a problem."""
    import shutil

    if not shutil.which("mpirun"):
        return NO_MPI + " (no mpirun)", False
    log = os.path.join(work, "mpi-probe.log")
    cmd = [zero_run, "--nproc", str(check["world_size"]), schedule,
           "--device", device, "--steps", "1", "--seed", str(check["seed"]),
           "--comm-timeout", "60"]
    if device == "cuda":
        cmd += ["--gpus-per-node", "1"]
    code = run(cmd, log, timeout)
    if code == 0:
        return None, False
    with open(log, errors="replace") as f:
        text = f.read()
    if "built without MPI" in text:
        return NO_MPI + " (this zero-run was built without MPI)", False
    if "cannot run mpirun" in text:
        return NO_MPI + " (zero-run --nproc cannot run mpirun)", False
    # mpirun and an MPI build, yet no run: a failure, not a skip.
    if code == 124:
        return "the MPI probe (zero-run --nproc %d, one step) was killed " \
            "after %d s" % (check["world_size"], timeout), True
    return "zero-run --nproc %d (one step) exited %d: %s" % (
        check["world_size"], code, tail(log)), False


def cmd_checks(args):
    manifest = json.load(open(args.manifest))
    base = os.path.dirname(os.path.abspath(args.manifest))
    zero_run = os.path.join(args.bin, "zero-run")
    os.makedirs(args.work, exist_ok=True)
    results, failed, skipped = [], [], []
    host_here = None  # does --device cpu run on this machine?
    mpi = {}  # world size -> (None | skip reason | problem, probe timed out)
    checks = [c for c in manifest["checks"]
              if args.world_size is None or
              c.get("world_size", 1) == args.world_size]
    if not checks:
        # A manifest from an older compile_schedules.sh: say so, do not pass.
        sys.exit("analyze.py: the manifest has no check of world size %s; "
                 "run compile_schedules.sh again" % args.world_size)
    for check in checks:
        name = check["name"]
        world = check.get("world_size", 1)
        schedule = os.path.join(base, check["schedule"])
        entry = {"name": name, "precision": check["precision"],
                 "world_size": world, "steps": check["steps"],
                 "tolerance": check["tolerance"]}
        launcher, per_device = [], {}
        if world > 1:
            if world not in mpi:
                mpi[world] = probe_mpi(zero_run, check, schedule, args.device,
                                       args.work, args.timeout)
                reason, timed_out = mpi[world]
                if reason and not reason.startswith(NO_MPI) and \
                   not timed_out:
                    print("  (MPI probe failed: %s; the %d-rank checks run "
                          "anyway)" % (reason, world), flush=True)
            reason, timed_out = mpi[world]
            if reason and reason.startswith(NO_MPI):
                entry.update(ok=True, skipped=reason)
            elif reason and timed_out:
                # A hang costs the budget once, not once per check.
                entry.update(ok=False, problems=["not run: " + reason])
            if "ok" in entry:
                results.append(entry)
                if entry.get("skipped"):
                    skipped.append(name)
                    print("SKIP %-14s %-4s %d ranks: %s" % (
                        name, check["precision"], world, reason), flush=True)
                else:
                    failed.append(name)
                    print("FAIL %-14s %-4s %d ranks: %s" % (
                        name, check["precision"], world,
                        entry["problems"][0]), flush=True)
                continue
            launcher = mpirun(world)
            # Every rank on GPU 0: the staged-MPI device communicator.
            per_device["cuda"] = ["--gpus-per-node", "1"]
        runs = {}
        extra = ["cpu"] if args.device != "cpu" and host_here is not False \
            else []
        for device in [args.device] + extra:
            prefix = os.path.join(args.work, "%s.%s" % (name, device))
            cmd = launcher + [zero_run, "--device", device, schedule,
                              "--steps", str(check["steps"]),
                              "--seed", str(check["seed"]),
                              "--metrics", prefix + ".jsonl",
                              "--export", prefix + ".safetensors",
                              "--comm-timeout", "60"] + \
                per_device.get(device, [])
            if "reference_state" in check:
                cmd += ["--dump-state", prefix + ".state.safetensors"]
            code = run(cmd, prefix + ".log", args.timeout)
            if launcher and code == 124:
                # A hang costs the budget once, not once per check.
                mpi[world] = ("an earlier %d-rank run (%s, %s) was killed "
                              "after %d s" % (world, name, device,
                                              args.timeout), True)
            if device != args.device and host_here is None:
                host_here = code == 0
                if not host_here:
                    print("  (host backend does not run here: %s; the CUDA "
                          "runs are compared with the build machine's host "
                          "runs only)" % tail(prefix + ".log", 1))
                    continue
            runs[device] = (code, prefix)
        code, prefix = runs[args.device]
        if code != 0:
            entry.update(ok=False, problems=["%szero-run --device %s exited "
                                             "%d: %s" % (
                                                 "mpirun -np %d " % world
                                                 if launcher else "",
                                                 args.device, code,
                                                 tail(prefix + ".log"))])
        else:
            ok, details = compare(check, base, prefix + ".jsonl",
                                  prefix + ".safetensors")
            if "reference_state" in check:
                details.update(compare_state(
                    check, os.path.join(base, check["reference_state"]),
                    prefix + ".state.safetensors", details["problems"]))
                ok = not details["problems"]
            entry.update(ok=ok, **details)
            if "cpu" in runs and runs["cpu"][0] == 0:
                # The host backend here against the build machine's: a check
                # of the reference itself (the same code, other BLAS/cores).
                cpu = runs["cpu"][1]
                same, d = compare(check, base, cpu + ".jsonl",
                                  cpu + ".safetensors")
                entry["host_here_matches_reference"] = same
                entry["host_here_loss_max_rel"] = d["loss_max_rel"]
        results.append(entry)
        status = "OK  " if entry["ok"] else "FAIL"
        line = "%s %-14s %-4s %d steps" % (status, name, check["precision"],
                                          check["steps"])
        if world > 1:
            line += ", %d ranks" % world
        if "loss_max_rel" in entry:
            line += ": loss max rel %.2e, weights max abs %.2e, max rel %.2e" % (
                entry["loss_max_rel"], entry["weight_max_abs"],
                entry["weight_max_rel"])
        if "state_max_rel" in entry:
            line += ", %d gradients and states within %.2e of the norm" % (
                entry["state_tensors"], entry["state_max_rel"])
        if "bytes_per_step" in entry:
            line += ", bytes sent/received %s (%s)" % (" ".join(
                "r%s %d/%d" % (r, s, v)
                for r, (s, v) in sorted(entry["bytes_per_step"].items())),
                "every step = host" if entry["bytes_match_host"]
                else "NOT the host's")
        print(line, flush=True)
        for problem in entry.get("problems", [])[:5]:
            print("       " + problem)
        if not entry["ok"]:
            failed.append(name)
    with open(args.json, "w") as f:
        json.dump({"checks": results, "host_backend_here": bool(host_here),
                   "skipped": skipped}, f, indent=1)
    ran = len(results) - len(skipped)
    note = "; %d %s: %s" % (len(skipped), NO_MPI, ", ".join(skipped)) \
        if skipped else ""
    if failed:
        print("analyze.py checks: %d of %d failed: %s%s" % (
            len(failed), ran, ", ".join(failed), note))
        return 1
    print("analyze.py checks: all %d passed%s" % (ran, note))
    return 0


# ---------------------------------------------------------------------------
# traces

def load_trace(path):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    streams = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            streams[(e["pid"], e["tid"])] = e["args"]["name"]
    out = []
    for e in events:
        if e.get("ph") != "X":
            continue
        e = dict(e)
        e["stream"] = streams.get((e["pid"], e["tid"]))
        out.append(e)
    return out


def overlap(path, warmup=0):
    """Comm busy, hidden and exposed time (us per rank and step), the hidden
    fraction, and the steps counted."""
    busy = {}
    steps = set()
    for e in load_trace(path):
        step = e.get("args", {}).get("step")
        if e["stream"] not in ("comm", "compute") or step is None or \
           step <= warmup or e.get("cat") == "sync":
            continue
        if e["stream"] == "comm" and e.get("cat") != "collective":
            continue
        steps.add(step)
        busy.setdefault((e["pid"], e["stream"], step), []).append(
            (e["ts"], e["ts"] + e["dur"]))
    comm = hidden = 0.0
    ranks = set()
    for (pid, stream, step), intervals in busy.items():
        if stream != "comm":
            continue
        ranks.add(pid)
        c = union(intervals)
        comm += total(c)
        hidden += intersection(c, union(busy.get((pid, "compute", step), [])))
    per = max(1, len(steps)) * max(1, len(ranks))
    return {"comm_busy_us": comm / per, "hidden_us": hidden / per,
            "exposed_us": (comm - hidden) / per,
            "hidden_fraction": hidden / comm if comm else None,
            "steps": len(steps)}


WIDTHS = {"f32": 4, "f64": 8, "bf16": 2, "f16": 2, "i64": 8, "i32": 4,
          "i1": 1, "index": 8}


def adam(trace_path, schedule_path, warmup=0, large=1 << 20):
    """Bytes, time and bandwidth of the zero.adam instructions per step (all,
    and those of at least `large` elements)."""
    schedule = json.load(open(schedule_path))
    values = {v["id"]: v for v in schedule["values"]}

    def tensor_bytes(ids):
        total = 0
        for i in ids:
            v = values[i]
            if v.get("kind") == "tensor":
                total += WIDTHS[v["dtype"]] * math.prod(v.get("shape", []))
        return total

    by_point = {}
    for inst in schedule["instructions"]["compute"]:
        if inst["op"] == "zero.adam":
            numel = max(math.prod(values[i].get("shape", [1]))
                        for i in inst["operands"]
                        if values[i].get("kind") == "tensor")
            by_point[inst["point"]] = (tensor_bytes(inst["operands"]) +
                                       tensor_bytes(inst["results"]), numel)
    sums = {"all": [0, 0.0, 0], "large": [0, 0.0, 0]}
    steps = set()
    for e in load_trace(trace_path):
        args = e.get("args", {})
        if e.get("name") != "zero.adam" or args.get("point") not in by_point:
            continue
        if args.get("step") is None or args["step"] <= warmup:
            continue
        steps.add(args["step"])
        nbytes, numel = by_point[args["point"]]
        for key in ("all", "large") if numel >= large else ("all",):
            sums[key][0] += nbytes
            sums[key][1] += e["dur"]
            sums[key][2] += 1
    out = {"instructions_per_step": len(by_point), "steps": len(steps)}
    for key, (nbytes, us, count) in sums.items():
        out[key] = {"bytes_per_step": nbytes / max(1, len(steps)),
                    "time_us_per_step": us / max(1, len(steps)),
                    "kernels": count // max(1, len(steps)),
                    "bandwidth_GBps": nbytes / us / 1e3 if us else None}
    return out


def join_launches(trace_path, explain, warmup=0):
    """The plan's compute launches, each with `measured_ms` per step (that
    of the trace's events of its instructions' points) and `events`; the
    steps traced; and the events of no planned launch."""
    plan = [dict(p) for p in explain["plan"]
            if p["category"] not in ("collective", "swap")]
    launch_of = {}
    for index, p in enumerate(plan):
        p["measured_ms"] = 0.0
        p["events"] = 0
        for point in p["points"]:
            launch_of[point] = index
    steps = set()
    unplanned = {"events": 0, "ms": 0.0, "ops": {}}
    for e in load_trace(trace_path):
        args = e.get("args", {})
        step = args.get("step")
        if e.get("cat") != "compute" or step is None or step <= warmup:
            continue
        steps.add((e["pid"], step))
        index = launch_of.get(args.get("point"))
        if index is None:
            unplanned["events"] += 1
            unplanned["ms"] += e["dur"] / 1e3
            unplanned["ops"][e["name"]] = unplanned["ops"].get(e["name"], 0) + 1
            continue
        plan[index]["measured_ms"] += e["dur"] / 1e3
        plan[index]["events"] += 1
    per = max(1, len(steps))
    for p in plan:
        p["measured_ms"] /= per
    unplanned["ms"] /= per
    unplanned["events"] /= per
    for name in unplanned["ops"]:
        unplanned["ops"][name] /= per
    return plan, len(steps), unplanned


def launches(joined):
    """The plan's launches against the trace's compute events (`joined`:
    join_launches's): per category and per launch, predicted and measured
    ms per step (the measured time of a launch is that of the events of its
    instructions' points)."""
    plan, steps, unplanned = joined
    categories = {}
    for p in plan:
        c = categories.setdefault(p["category"], {
            "launches": 0, "traced": 0, "predicted_ms": 0.0,
            "measured_ms": 0.0})
        c["launches"] += p["times"]
        c["traced"] += 1 if p["events"] else 0
        c["predicted_ms"] += p["ms"]
        c["measured_ms"] += p["measured_ms"]
    heaviest = sorted(plan, key=lambda p: -p["measured_ms"])[:15]
    return {"steps": steps, "categories": categories,
            "unplanned": unplanned,
            "heaviest": [{k: p[k] for k in ("category", "path", "op", "loc",
                                            "points", "ms", "measured_ms")}
                         for p in heaviest]}


# Figures a launch's time falls with as they grow (bandwidths, rates,
# efficiencies); latency_ns makes it grow; launch_us is its fixed cost.
GROWING_WITH_FIGURE = ("latency_ns",)


def fit(joined, figures):
    """Each GPU figure that bounds some traced launch (the plan's `bound`;
    `joined`: join_launches's; `figures`: those the plan was priced with),
    refitted to the trace: the figure scaled by how much longer or shorter
    those launches took beyond their fixed cost than predicted. An
    efficiency is a fraction of copy_gbs and batched_scale of its type's
    GEMM rate, so each keeps the rate its launches drew with the refitted
    copy_gbs or GEMM rate; launch_us takes what the launches it bounds took
    more or less than predicted, per launch. First order: a launch whose
    bound changes with the new figures is priced by the model again
    (`zero-run --explain --explain-set`). The optimizer's launch, priced
    at a blend of its vector and one-element efficiencies, refits the one
    that moves most of its bytes; batched_scale is set against the GEMM
    rate of the first type it bounds."""
    plan, steps, _ = joined
    groups = {}
    measured_step = 0.0
    for p in plan:
        if not p["events"]:
            continue
        measured_step += p["measured_ms"]
        g = groups.setdefault(p["bound"], {
            "launches": 0, "predicted_ms": 0.0, "measured_ms": 0.0,
            "fixed_ms": 0.0, "gemm_type": None})
        g["launches"] += p["times"]
        g["predicted_ms"] += p["ms"]
        g["measured_ms"] += p["measured_ms"]
        g["fixed_ms"] += p["fixed_ms"]
        prefix = "batched_gemm_"
        if p["category"].startswith(prefix):
            g["gemm_type"] = g["gemm_type"] or p["category"][len(prefix):]

    def speedup(g):
        """How much faster than predicted the launches' variable part ran."""
        predicted = g["predicted_ms"] - g["fixed_ms"]
        measured = g["measured_ms"] - g["fixed_ms"]
        return predicted / measured if predicted > 0 and measured > 0 \
            else None

    fitted = {}
    for figure, g in groups.items():
        if figure == "launch_us":
            value = figures[figure] + 1e3 * (
                g["measured_ms"] - g["predicted_ms"]) / g["launches"]
            # Launches faster than the fixed cost itself: no figure to fit.
            fitted[figure] = value if value > 0 else None
            continue
        r = speedup(g)
        if r is None:
            fitted[figure] = None
        elif figure in GROWING_WITH_FIGURE:
            fitted[figure] = figures[figure] / r
        else:
            fitted[figure] = figures[figure] * r

    def refitted(figure):
        value = fitted.get(figure)
        return figures[figure] if value is None else value

    # The relative figures, against the refitted figures they scale.
    for figure, g in groups.items():
        if fitted[figure] is None:
            continue
        if figure.endswith("_eff"):
            fitted[figure] *= figures["copy_gbs"] / refitted("copy_gbs")
        elif figure == "batched_scale" and g["gemm_type"]:
            rate = "gemm_%s_tflops" % g["gemm_type"]
            fitted[figure] *= figures[rate] / refitted(rate)
    result = {}
    for figure, g in sorted(groups.items()):
        value = fitted[figure]
        # An efficiency is at most 1; one that fits well above it says
        # that copy_gbs, or the model's bytes, are off.
        efficiency = value is not None and figure.endswith("_eff")
        result[figure] = {
            "launches": g["launches"], "predicted_ms": g["predicted_ms"],
            "measured_ms": g["measured_ms"], "value": figures[figure],
            "fitted": min(value, 1.0) if efficiency else value,
            "capped": efficiency and value > 1.001}
    return {"steps": steps, "figures": result,
            "measured_step_ms": measured_step}


def fit_settings(result):
    """The refitted figures, figure -> value."""
    return {figure: f["fitted"] for figure, f in result["figures"].items()
            if f["fitted"] is not None}


def explain_plan(zero_run, schedule, device, settings=None):
    """The cost model's plan of `schedule` on `device` (zero-run
    --explain-json's object), with `settings` (figure -> value) in place of
    the device's figures (--explain-set)."""
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "explain.json")
        cmd = [zero_run, schedule, "--explain", device, "--explain-json", out]
        for name, value in (settings or {}).items():
            cmd += ["--explain-set", "%s=%g" % (name, value)]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit("analyze.py: %s failed:\n%s" % (" ".join(cmd),
                                                      run.stderr))
        with open(out) as f:
            return json.load(f)


def format_fit(result):
    lines = ["| figure | launches | predicted ms | measured ms | "
             "DeviceModels.def | fitted |", "|---|---:|---:|---:|---:|---:|"]
    for figure, f in result["figures"].items():
        fitted = "-"
        if f["fitted"] is not None:
            fitted = "%.4g%s" % (f["fitted"], " (capped)" if f["capped"]
                                 else "")
        lines.append("| `%s` | %d | %.2f | %.2f | %g | %s |" % (
            figure, f["launches"], f["predicted_ms"], f["measured_ms"],
            f["value"], fitted))
    settings = " ".join("--explain-set %s=%.4g" % item
                        for item in fit_settings(result).items())
    lines += ["", "Traced launches, measured: %.2f ms per step. Try on the "
              "build machine: `zero-run SCHEDULE --explain h100 %s`"
              % (result["measured_step_ms"], settings)]
    return "\n".join(lines) + "\n"


def format_launches(result):
    lines = ["| category | launches | traced | predicted ms | measured ms | "
             "measured / predicted |", "|---|---:|---:|---:|---:|---:|"]
    total_p = total_m = 0.0
    for name, c in sorted(result["categories"].items()):
        total_p += c["predicted_ms"]
        total_m += c["measured_ms"]
        lines.append("| %s | %d | %d | %.2f | %.2f | %s |" % (
            name, c["launches"], c["traced"], c["predicted_ms"],
            c["measured_ms"], "%.2f" % (c["measured_ms"] / c["predicted_ms"])
            if c["predicted_ms"] else "-"))
    lines.append("| total | | | %.2f | %.2f | %s |" % (
        total_p, total_m, "%.2f" % (total_m / total_p) if total_p else "-"))
    u = result["unplanned"]
    # The model plans no launch for what the CUDA device does at load or
    # skips (a scalar constant, a GEMM's zero fill); the host traces them.
    lines += ["", "%d steps; per step, %g events of no planned launch (%s), "
              "%.2f ms." % (result["steps"], u["events"], ", ".join(
                  "%s %g" % item for item in sorted(u["ops"].items())) or
                  "none", u["ms"]), "",
              "| measured ms | predicted ms | category | first instruction |",
              "|---:|---:|---|---|"]
    for p in result["heaviest"]:
        what = "%s %s" % (p["path"], p["op"])
        if len(p["points"]) > 1:
            what += " and %d more" % (len(p["points"]) - 1)
        if p["loc"]:
            what += " at " + p["loc"]
        lines.append("| %.3f | %.3f | %s | %s |" % (
            p["measured_ms"], p["ms"], p["category"], what))
    return "\n".join(lines) + "\n"


def copy_bandwidth(gib=1.0, repeats=20):
    import torch

    n = int(gib * (1 << 30)) // 4
    src = torch.rand(n, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        dst.copy_(src)  # contiguous, same type: cudaMemcpyAsync D2D
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    t = statistics.median(times)
    return {"bytes": 2 * n * 4, "time_s": t,
            "bandwidth_GBps": 2 * n * 4 / t / 1e9,
            "device": torch.cuda.get_device_name(),
            "note": "cudaMemcpyAsync device to device through torch "
                    "copy_, bytes read plus written, median of %d" % repeats}


# ---------------------------------------------------------------------------
# summary

def bench_numbers(metrics_path, warmup, tokens):
    records = read_metrics(metrics_path)
    timed = [r["step_time_s"] for s, r in sorted(records.items())
             if s > warmup]
    if not timed:
        return None
    median = statistics.median(timed)
    return {"step_time_s": median, "step_time_min_s": min(timed),
            "step_time_max_s": max(timed), "tokens_per_s": tokens / median,
            "steps_timed": len(timed),
            "peak_bytes": max(r["peak_bytes"] for r in records.values()),
            "losses": [r["loss"] for _, r in sorted(records.items())]}


def cmd_summary(args):
    manifest = json.load(open(args.manifest))
    base = os.path.dirname(os.path.abspath(args.manifest))
    work = args.work
    results = {"steps": json.load(open(os.path.join(work, "steps.json")))
               if os.path.exists(os.path.join(work, "steps.json")) else {}}
    for name in ("environment", "gtest"):
        path = os.path.join(work, name + ".json")
        if os.path.exists(path):
            results[name] = json.load(open(path))
    # run_all.sh: world size 1 in checks.json, 2 in checks-n2.json, 4 in
    # checks-n4.json.
    for key, name in (("checks", "checks.json"),
                      ("checks_2_ranks", "checks-n2.json"),
                      ("checks_4_ranks", "checks-n4.json"),
                      ("torch_adamw", "torch.json")):
        path = os.path.join(work, name)
        if os.path.exists(path):
            results[key] = json.load(open(path))
    copybw = None
    if os.path.exists(os.path.join(work, "copybw.json")):
        copybw = json.load(open(os.path.join(work, "copybw.json")))
        results["copy_bandwidth"] = copybw
    rows = []
    bench = {}
    for b in manifest["benchmarks"]:
        entry = {"stage": b["stage"], "schedule": b["schedule"]}
        metrics = os.path.join(work, "%s.jsonl" % b["name"])
        if os.path.exists(metrics):
            entry["zero_run"] = bench_numbers(metrics, args.warmup,
                                              b["tokens_per_step"])
        trace = os.path.join(work, "%s.trace.json" % b["name"])
        if os.path.exists(trace):
            try:
                entry["overlap"] = overlap(trace, args.trace_warmup)
                entry["adam"] = adam(trace, os.path.join(base, b["schedule"]),
                                     args.trace_warmup)
                if copybw:
                    for key in ("all", "large"):
                        bw = entry["adam"][key]["bandwidth_GBps"]
                        entry["adam"][key]["fraction_of_copy"] = (
                            bw / copybw["bandwidth_GBps"] if bw else None)
            except (KeyError, ValueError) as error:
                entry["trace_error"] = repr(error)
        report = os.path.join(base, b["report"])
        if os.path.exists(report):
            entry["planned_peak_bytes"] = json.load(open(report))[
                "per_rank_bytes"]["peak"]
        # The cost model's prediction, made on the build machine.
        explain = os.path.join(base, b.get("explain", ""))
        if b.get("explain") and os.path.exists(explain):
            entry["predicted"] = json.load(open(explain))
            if os.path.exists(trace) and "plan" in entry["predicted"]:
                try:
                    # The trace read once, for both tables.
                    joined = join_launches(trace, entry["predicted"],
                                           args.trace_warmup)
                    entry["launches"] = launches(joined)
                    if "figures" in entry["predicted"]:
                        entry["fit"] = fit(joined,
                                           entry["predicted"]["figures"])
                except (KeyError, ValueError) as error:
                    entry["launches_error"] = repr(error)
            # The categories and the total are kept; the plan is in the
            # .explain.json next to the schedule.
            entry["predicted"].pop("plan", None)
        entry["label"] = b.get("label", "zero-run stage %d" % b["stage"])
        bench[b["name"]] = entry
    results["zero_run"] = bench
    torch_runs = {}
    for name in ("torch-eager", "torch-compile", "torch-eager-naive"):
        path = os.path.join(work, name + ".json")
        if os.path.exists(path):
            torch_runs[name] = json.load(open(path))
    results["pytorch"] = torch_runs

    eager = torch_runs.get("torch-eager", {}).get("step_time_s")
    compiled = torch_runs.get("torch-compile", {}).get("step_time_s")

    def ratio(t, base_t):
        return "%.2fx" % (base_t / t) if t and base_t else "-"

    for name, entry in bench.items():
        z = entry.get("zero_run")
        predicted = entry.get("predicted", {}).get("total_ms")
        label = entry["label"] + (" (predicted %.1f ms)" % predicted
                                  if predicted else "")
        if not z:
            rows.append([label, "-", "-", "-", "-", "-", "(no run)"])
            continue
        rows.append([label,
                     "%.1f" % (z["step_time_s"] * 1e3),
                     "%.0f" % z["tokens_per_s"],
                     "%.1f" % (z["peak_bytes"] / 2**30),
                     ratio(z["step_time_s"], eager),
                     ratio(z["step_time_s"], compiled),
                     "%.1f-%.1f ms" % (z["step_time_min_s"] * 1e3,
                                       z["step_time_max_s"] * 1e3)])
    unfused = os.path.join(work, "gpt2-124m-bf16-s0-unfused.jsonl")
    if manifest["benchmarks"] and os.path.exists(unfused):
        z = bench_numbers(unfused, args.warmup,
                          manifest["benchmarks"][0]["tokens_per_step"])
        results["zero_run_s0_unfused"] = z
        label = "zero-run stage 0, ZERO_CUDA_FUSION=off"
        explain = os.path.join(base, "gpt2-124m-bf16-s0-unfused.explain.json")
        if os.path.exists(explain):
            predicted = json.load(open(explain))["total_ms"]
            z["predicted_ms"] = predicted
            label += " (predicted %.1f ms)" % predicted
        rows.append([label,
                     "%.1f" % (z["step_time_s"] * 1e3),
                     "%.0f" % z["tokens_per_s"],
                     "%.1f" % (z["peak_bytes"] / 2**30),
                     ratio(z["step_time_s"], eager),
                     ratio(z["step_time_s"], compiled),
                     "softmax and layer norm unfused"])
    for name, t in torch_runs.items():
        rows.append([t["framework"].replace("pytorch ", "PyTorch "),
                     "%.1f" % (t["step_time_s"] * 1e3),
                     "%.0f" % t["tokens_per_s"],
                     "%.1f" % (t["peak_bytes"] / 2**30),
                     ratio(t["step_time_s"], eager),
                     ratio(t["step_time_s"], compiled),
                     "first %d steps %.1f s" % (t["warmup"],
                                                t["first_steps_s"])])
    lines = ["# GPU run: %s" % results.get("environment", {}).get(
        "gpu", "unknown GPU"), ""]
    lines += ["## Steps", ""]
    for step, status in results["steps"].items():
        lines.append("- %s: %s" % (step, status))
    if "gtest" in results:
        g = results["gtest"]
        lines.append("- GPU unit tests: %d run, %d skipped, ctest exit %d "
                     "(gtest.log)" % (g["tests"], g["skipped"], g["exit"]))
    lines += ["", "## GPT-2 124M, bf16, micro-batch 8 x 1024 tokens, 1 GPU "
              "(median over the steps after %d warm-up)" % args.warmup, "",
              "| run | step (ms) | tokens/s | peak GiB | speed vs eager | "
              "speed vs compile | spread / notes |",
              "|---|---:|---:|---:|---:|---:|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    lines += ["", "peak: zero-run's allocated bytes (the memory plan); "
              "PyTorch's torch.cuda.max_memory_allocated.", ""]
    lines += ["## Overlap and fused Adam (from zero-run's traces)", "",
              "| stage | comm busy (ms/step) | hidden behind compute | "
              "Adam GB/s (all / >=1M elements) | of D2D copy |",
              "|---|---:|---:|---:|---:|"]
    for name, entry in bench.items():
        o, a = entry.get("overlap"), entry.get("adam")
        if not o or not a:
            lines.append("| %d | - | - | - | - |" % entry["stage"])
            continue
        frac = o["hidden_fraction"]
        fa, fl = (a["all"].get("fraction_of_copy"),
                  a["large"].get("fraction_of_copy"))
        lines.append("| %d | %.2f | %s | %s / %s | %s / %s |" % (
            entry["stage"], o["comm_busy_us"] / 1e3,
            "%.0f%%" % (100 * frac) if frac is not None else "-",
            "%.0f" % a["all"]["bandwidth_GBps"]
            if a["all"]["bandwidth_GBps"] else "-",
            "%.0f" % a["large"]["bandwidth_GBps"]
            if a["large"]["bandwidth_GBps"] else "-",
            "%.0f%%" % (100 * fa) if fa else "-",
            "%.0f%%" % (100 * fl) if fl else "-"))
    if copybw:
        lines += ["", "D2D copy: %.0f GB/s (%s)." % (copybw["bandwidth_GBps"],
                                                     copybw["note"])]
    for name, entry in bench.items():
        if "launches" in entry:
            lines += ["", "## Predicted against measured: %s (traced run)"
                      % entry["label"], "", format_launches(entry["launches"])]
        if "fit" in entry:
            lines += ["", "## The model's figures refitted: %s (traced run)"
                      % entry["label"], "", format_fit(entry["fit"])]
    if any(k in results for k in ("checks", "checks_2_ranks",
                                  "checks_4_ranks")):
        lines += ["", "## Whole-step checks: CUDA against the host backend",
                  ""]
        for key in ("checks", "checks_2_ranks", "checks_4_ranks"):
            for c in results.get(key, {}).get("checks", []):
                world = c.get("world_size", 1)
                text = "- %s %s (%s, %d steps%s)" % (
                    "SKIPPED" if c.get("skipped") else
                    "OK" if c["ok"] else "FAIL", c["name"], c["precision"],
                    c["steps"], ", %d ranks on one GPU" % world
                    if world > 1 else "")
                if c.get("skipped"):
                    text += ": " + c["skipped"]
                if "loss_max_rel" in c:
                    text += ": loss max rel %.2e, weights max abs %.2e" % (
                        c["loss_max_rel"], c["weight_max_abs"])
                if "bytes_per_step" in c:
                    text += ", bytes sent/received per step %s" % (
                        "= host's on every rank" if c["bytes_match_host"]
                        else "NOT the host's")
                for p in c.get("problems", [])[:3]:
                    text += "; " + p
                lines.append(text)
    if "torch_adamw" in results:
        t = results["torch_adamw"]
        lines += ["", "## 10 AdamW steps against PyTorch on the GPU", "",
                  "- %s %s: %s" % (
                      "OK" if t["ok"] else "FAIL", t["name"],
                      "; ".join(t.get("problems", [])[:3]) or
                      "losses within %.2e rel, weights within %.2e abs" % (
                          t.get("loss_max_rel", 0),
                          t.get("weight_max_abs", 0)))]
    text = "\n".join(lines) + "\n"
    with open(args.out_md, "w") as f:
        f.write(text)
    with open(args.out_json, "w") as f:
        json.dump(results, f, indent=1)
    if not args.quiet:
        print(text)
    return 0


def cmd_torch(args):
    """zero-run on the device against the same model in PyTorch on the same
    device: N AdamW steps from the same initial weights and data."""
    manifest = json.load(open(args.manifest))
    base = os.path.dirname(os.path.abspath(args.manifest))
    check = manifest["torch"]
    os.makedirs(args.work, exist_ok=True)
    work = args.work
    name = check["name"]
    metrics = os.path.join(work, name + ".jsonl")
    export = os.path.join(work, name + ".safetensors")
    log = os.path.join(work, name + ".zero-run.log")
    zero_run = os.path.join(args.bin, "zero-run")
    # A token file both read (test/Runtime/Inputs/torch_compare.py's).
    import numpy as np
    vocab = int(check["torch_args"][check["torch_args"].index(
        "--vocab-size") + 1])
    tokens = os.path.join(work, "tokens.bin")
    np.random.default_rng(3).integers(0, vocab, 4096).astype("<u2").tofile(
        tokens)
    status = run([zero_run, os.path.join(base, check["schedule"]),
                  "--device", args.device, "--steps", str(check["steps"]),
                  "--seed", str(check["seed"]), "--data", tokens,
                  "--metrics", metrics, "--export", export], log,
                 args.timeout)
    entry = {"name": name, "device": args.device, "steps": check["steps"]}
    if status != 0:
        entry.update(ok=False, problems=["zero-run failed (%d): %s" % (
            status, tail(log))])
    else:
        reference = os.path.join(HERE, "..", "..", "test", "Runtime",
                                 "Inputs", "torch_reference.py")
        torch_log = os.path.join(work, name + ".torch.log")
        torch_export = os.path.join(work, name + ".torch.safetensors")
        # The optimizer's hyperparameters as the schedule has them.
        schedule = json.load(open(os.path.join(base, check["schedule"])))
        adam = next(i for i in schedule["instructions"]["compute"]
                    if i["op"] == "zero.adam")
        hyper = ["--beta1", repr(adam["beta1"]), "--beta2",
                 repr(adam["beta2"]), "--eps", repr(adam["eps"]),
                 "--weight-decay", repr(adam["weight_decay"])]
        if adam["mode"] != "adamw":
            hyper.append("--no-adam-w-mode")
        status = run([sys.executable, reference] + check["torch_args"] + hyper +
                     ["--steps", str(check["steps"]),
                      "--seed", str(check["seed"]), "--data", tokens,
                      # zero.adam takes the learning rate as an f32 scalar.
                      "--lr", repr(float(np.float32(check["lr"]))),
                      "--device", args.device, "--export", torch_export],
                     torch_log, args.timeout)
        if status != 0:
            entry.update(ok=False, problems=["torch_reference.py failed "
                                             "(%d): %s" % (status,
                                                           tail(torch_log))])
        else:
            # torch_reference prints "step=N loss=X", as zero-run does.
            torch_metrics = os.path.join(work, name + ".torch.jsonl")
            with open(torch_log) as f, open(torch_metrics, "w") as out:
                for line in f:
                    m = re.match(r"step=(\d+) loss=(\S+)", line)
                    if m:
                        out.write(json.dumps({"step": int(m.group(1)),
                                              "rank": 0,
                                              "loss": float(m.group(2))})
                                  + "\n")
            ok, details = compare(check, base, metrics, export,
                                  reference=(torch_metrics, torch_export))
            entry.update(ok=ok, **details)
    print("%s %s: %s" % ("OK  " if entry["ok"] else "FAIL", name,
                         "; ".join(entry.get("problems", [])[:3]) or
                         "losses within %.3g rel of PyTorch, weights within "
                         "%.3g abs" % (entry.get("loss_max_rel", 0),
                                        entry.get("weight_max_abs", 0))),
          flush=True)
    with open(args.json, "w") as f:
        json.dump(entry, f, indent=1)
    return 0 if entry["ok"] else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("checks")
    p.add_argument("--bin", required=True)
    p.add_argument("--manifest", default=os.path.join(HERE, "schedules",
                                                      "manifest.json"))
    p.add_argument("--work", required=True)
    p.add_argument("--json", required=True)
    p.add_argument("--timeout", type=int, default=180)
    # The device under test; cpu checks this script where no GPU is.
    p.add_argument("--device", default="cuda")
    # Only the checks of this world size (default: all of them).
    p.add_argument("--world-size", type=int)
    p = sub.add_parser("torch")
    p.add_argument("--bin", required=True)
    p.add_argument("--manifest", default=os.path.join(HERE, "schedules",
                                                      "manifest.json"))
    p.add_argument("--work", required=True)
    p.add_argument("--json", required=True)
    p.add_argument("--timeout", type=int, default=300)
    p.add_argument("--device", default="cuda")
    p = sub.add_parser("overlap")
    p.add_argument("trace")
    p.add_argument("--warmup", type=int, default=0)
    p = sub.add_parser("adam")
    p.add_argument("trace")
    p.add_argument("schedule")
    p.add_argument("--warmup", type=int, default=0)
    p = sub.add_parser("launches")
    p.add_argument("trace")
    p.add_argument("explain")
    p.add_argument("--warmup", type=int, default=0)
    p = sub.add_parser("fit")
    p.add_argument("trace")
    p.add_argument("explain")
    p.add_argument("--warmup", type=int, default=0)
    p.add_argument("--schedule", help="price it again with the refitted "
                   "figures (zero-run --explain --explain-set)")
    p.add_argument("--zero-run", default="zero-run")
    p = sub.add_parser("copybw")
    p.add_argument("--out")
    p = sub.add_parser("summary")
    p.add_argument("--manifest", default=os.path.join(HERE, "schedules",
                                                      "manifest.json"))
    p.add_argument("--work", required=True)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--trace-warmup", type=int, default=1)
    p.add_argument("--out-md", required=True)
    p.add_argument("--out-json", required=True)
    p.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    if args.command == "checks":
        return cmd_checks(args)
    if args.command == "torch":
        return cmd_torch(args)
    if args.command == "overlap":
        print(json.dumps(overlap(args.trace, args.warmup), indent=1))
        return 0
    if args.command == "adam":
        print(json.dumps(adam(args.trace, args.schedule, args.warmup),
                         indent=1))
        return 0
    if args.command == "launches":
        print(format_launches(launches(join_launches(
            args.trace, json.load(open(args.explain)), args.warmup))), end="")
        return 0
    if args.command == "fit":
        explain = json.load(open(args.explain))
        result = fit(join_launches(args.trace, explain, args.warmup),
                     explain["figures"])
        print(format_fit(result), end="")
        if args.schedule:
            # The model again, with the refitted figures.
            refitted = explain_plan(args.zero_run, args.schedule,
                                    explain["device"],
                                    fit_settings(result))["total_ms"]
            print("\nThe model with the refitted figures: %.2f ms per step, "
                  "%.2fx the traced launches' %.2f ms." % (
                      refitted, refitted / result["measured_step_ms"],
                      result["measured_step_ms"]))
        return 0
    if args.command == "copybw":
        result = copy_bandwidth()
        print(json.dumps(result))
        if args.out:
            with open(args.out, "w") as f:
                json.dump(result, f)
        return 0
    return cmd_summary(args)


if __name__ == "__main__":
    sys.exit(main())
