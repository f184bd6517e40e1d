#!/usr/bin/python3
"""Checkpoint save and load throughput, and the step-time cost of saving.

Generates an MLP with zero-model (--hidden, --layers, --batch-size), compiles
it at ZeRO stage 1 in f32 for 1 and 2 ranks (a rank's file: the parameters
whole, its shard of the two Adam states), and measures:

1. Throughput per rank, --repeat rounds. A save: `zero-run --steps 1 --save
   DIR --save-sync --metrics M`, each rank's `bytes_written / write_s` (the
   writer's time: checksums, writes, fsync, rename; the snapshot is timed
   apart). A load: `zero-run --steps 0 --resume DIR --metrics M`, each rank's
   `bytes_read / load_s` (the manifest, the checks, the file read and its
   CRC-32, the tensors written into the executor). The reference: as many
   processes as ranks, each writing the same number of bytes into a file of
   the same directory with 16 MiB write()s from a buffer of all the bytes
   and one fsync, then reading it back with 16 MiB readinto()s into fresh
   memory (an anonymous mapping made inside the timing, as a load must
   allocate what it reads into); process i bound to core i, as mpirun binds
   rank i (Open MPI's default for 2 ranks or fewer: one core per rank, the
   writer and reader threads included). Before every read, on both sides, the files'
   pages are dropped from the page cache (posix_fadvise DONTNEED after their
   fsync), so both read from the disk. Ours and the reference alternate,
   each going first every other round; the ratio is the median over rounds
   of ours / reference in the same round.

2. The step-time cost of --save-every K on 2 ranks: --steps N without
   saving, with --save-sync and with the background save (the default).
   Training time = the sum over steps of the slower rank's step_time_s plus,
   for the saves taken during the run (not the one after the last step,
   which cannot overlap anything), the slower rank's blocking time
   (snapshot_s + wait_s + complete_s); steps/s = N / training time, median
   over --repeat runs. The whole command's wall time is printed too.

Usage: benchmarks/checkpoint.py [--bin DIR] [--work DIR] [--hidden 2048]
                                [--layers 6] [--batch-size 16] [--repeat 5]
                                [--steps 20] [--save-every 5]
                                [--skip-throughput] [--skip-cost]
"""

import argparse
import json
import mmap
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runtime_step import find_bin  # noqa: E402

CHUNK = 16 << 20


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def drop_cache(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def reference_write(path, size, core, queue):
    os.sched_setaffinity(0, {core})
    # All the bytes in memory first, as a snapshot holds them: a 16 MiB
    # buffer written again and again would come from the cache.
    data = memoryview(os.urandom(1 << 20) * (size >> 20) +
                      os.urandom(size & ((1 << 20) - 1)))
    begin = time.perf_counter()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    done = 0
    while done < size:
        done += os.write(fd, data[done:done + min(CHUNK, size - done)])
    os.fsync(fd)
    os.close(fd)
    queue.put(size / (time.perf_counter() - begin))


def reference_read(path, size, core, queue):
    os.sched_setaffinity(0, {core})
    begin = time.perf_counter()
    # Fresh memory, as a load reads into: an anonymous mapping, its pages
    # faulted in by the reads (a bytearray would be zeroed before the clock).
    buffer = mmap.mmap(-1, size)
    view = memoryview(buffer)
    with open(path, "rb", buffering=0) as f:
        done = 0
        while done < size:
            got = f.readinto(view[done:done + CHUNK])
            if not got:
                break
            done += got
    rate = size / (time.perf_counter() - begin)
    view.release()
    buffer.close()
    queue.put(rate)


def concurrently(target, jobs):
    """Runs target(path, size, core, queue) for each job at once, job i on
    core i as mpirun binds rank i: the GB/s of each."""
    queue = multiprocessing.Queue()
    cores = sorted(os.sched_getaffinity(0))
    procs = [multiprocessing.Process(
        target=target, args=job + (cores[i % len(cores)], queue))
        for i, job in enumerate(jobs)]
    for p in procs:
        p.start()
    rates = [queue.get() for _ in procs]
    for p in procs:
        p.join()
    return [r / 1e9 for r in rates]


def events(metrics, kind):
    with open(metrics) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    return [m for m in lines if m.get("event") == kind]


def throughput(args, bin_dir, work, ranks):
    schedule = os.path.join(work, "r%d.json" % ranks)
    rows = {"save": [], "ref_write": [], "load": [], "ref_read": [],
            "snapshot": []}
    ratios = {"save": [], "load": []}
    size = None
    for r in range(args.repeat):
        ckpt = os.path.join(work, "ck-r%d" % ranks)
        refs = [os.path.join(work, "ref-r%d-%d.bin" % (ranks, i))
                for i in range(ranks)]
        subprocess.run(["rm", "-rf", ckpt] + refs, check=True)
        ours_first = r % 2 == 0

        def ours_save():
            metrics = os.path.join(work, "save.jsonl")
            run([os.path.join(bin_dir, "zero-run"), schedule, "--nproc",
                 str(ranks), "--steps", "1", "--save", ckpt, "--save-sync",
                 "--metrics", metrics])
            saves = events(metrics, "save")
            rows["snapshot"].append(statistics.mean(
                s["bytes_written"] / s["snapshot_s"] / 1e9 for s in saves))
            return saves

        # Round 0 goes ours first and gives the size for the others.
        if ours_first:
            saves = ours_save()
            size = saves[0]["bytes_written"]
            ref_w = concurrently(reference_write, [(p, size) for p in refs])
        else:
            ref_w = concurrently(reference_write, [(p, size) for p in refs])
            saves = ours_save()
        save = statistics.mean(s["bytes_written"] / s["write_s"] / 1e9
                               for s in saves)
        rows["save"].append(save)
        rows["ref_write"].append(statistics.mean(ref_w))
        ratios["save"].append(save / statistics.mean(ref_w))

        files = [os.path.join(ckpt, "step-1", "rank-%d.safetensors" % i)
                 for i in range(ranks)]

        def ours_load():
            for f in files:
                drop_cache(f)
            metrics = os.path.join(work, "load.jsonl")
            run([os.path.join(bin_dir, "zero-run"), schedule, "--nproc",
                 str(ranks), "--steps", "0", "--resume", ckpt,
                 "--metrics", metrics])
            return statistics.mean(m["bytes_read"] / m["load_s"] / 1e9
                                   for m in events(metrics, "load"))

        def ref_load():
            for f in refs:
                drop_cache(f)
            return statistics.mean(
                concurrently(reference_read, [(p, size) for p in refs]))

        if ours_first:
            load, ref_r = ours_load(), ref_load()
        else:
            ref_r = ref_load()
            load = ours_load()
        rows["load"].append(load)
        rows["ref_read"].append(ref_r)
        ratios["load"].append(load / ref_r)
        subprocess.run(["rm", "-f"] + refs, check=True)
    med = {k: statistics.median(v) for k, v in rows.items()}
    return size, med, {k: statistics.median(v) for k, v in ratios.items()}, \
        {k: (min(v), max(v)) for k, v in ratios.items()}


def training_time(metrics, last_step):
    with open(metrics) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    steps, saves = {}, {}
    for m in lines:
        if "event" not in m:
            steps.setdefault(m["step"], []).append(m["step_time_s"])
        elif m["event"] == "save" and m["step"] != last_step:
            saves.setdefault(m["step"], []).append(
                m["snapshot_s"] + m["wait_s"] + m["complete_s"])
    step_time = sum(max(v) for v in steps.values())
    save_time = sum(max(v) for v in saves.values())
    return step_time + save_time, save_time, len(saves)


def step_cost(args, bin_dir, work):
    schedule = os.path.join(work, "r2.json")
    modes = [("no save", []),
             ("sync", ["--save-every", str(args.save_every), "--save-sync"]),
             ("background", ["--save-every", str(args.save_every)])]
    results = {name: {"rate": [], "blocked": [], "wall": []}
               for name, _ in modes}
    for r in range(args.repeat):
        order = modes if r % 2 == 0 else list(reversed(modes))
        for name, flags in order:
            ckpt = os.path.join(work, "cost-ck")
            subprocess.run(["rm", "-rf", ckpt], check=True)
            metrics = os.path.join(work, "cost.jsonl")
            save = ["--save", ckpt] + flags if flags else []
            begin = time.perf_counter()
            run([os.path.join(bin_dir, "zero-run"), schedule, "--nproc", "2",
                 "--steps", str(args.steps), "--metrics", metrics] + save)
            wall = time.perf_counter() - begin
            total, blocked, _ = training_time(metrics, args.steps)
            results[name]["rate"].append(args.steps / total)
            results[name]["blocked"].append(blocked)
            results[name]["wall"].append(wall)
    return [(name, statistics.median(results[name]["rate"]),
             statistics.median(results[name]["blocked"]),
             statistics.median(results[name]["wall"]))
            for name, _ in modes]


def print_throughput(args, bin_dir, work):
    print("| ranks | bytes per rank | save (GB/s) | reference write (GB/s) | "
          "save / reference | load (GB/s) | reference read (GB/s) | "
          "load / reference | min-max save / load ratio | snapshot (GB/s) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for ranks in (1, 2):
        size, med, ratio, span = throughput(args, bin_dir, work, ranks)
        print("| %d | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | "
              "%.2f-%.2f / %.2f-%.2f | %.2f |" %
              (ranks, size, med["save"], med["ref_write"], ratio["save"],
               med["load"], med["ref_read"], ratio["load"], span["save"][0],
               span["save"][1], span["load"][0], span["load"][1],
               med["snapshot"]))
        sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin")
    parser.add_argument("--work")
    parser.add_argument("--hidden", type=int, default=2048)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--save-every", type=int, default=5)
    parser.add_argument("--skip-cost", action="store_true")
    parser.add_argument("--skip-throughput", action="store_true")
    args = parser.parse_args()
    bin_dir = find_bin(args.bin)
    work = args.work or tempfile.mkdtemp(prefix="zero-checkpoint-bench-")
    os.makedirs(work, exist_ok=True)
    model = os.path.join(work, "mlp.mlir")
    run([os.path.join(bin_dir, "zero-model"), "mlp", "--layers",
         str(args.layers), "--hidden", str(args.hidden), "--batch-size",
         str(args.batch_size), "-o", model])
    for ranks in (1, 2):
        run([os.path.join(bin_dir, "zero-opt"), model, "--zero-stage=1",
             "--zero-world-size=%d" % ranks,
             "--zero-emit-schedule=" + os.path.join(work, "r%d.json" % ranks),
             "-o", os.devnull])
    print("work: %s, load average %s" % (work, os.getloadavg()))

    if not args.skip_throughput:
        print_throughput(args, bin_dir, work)
    if args.skip_cost:
        return

    rows = step_cost(args, bin_dir, work)
    base = rows[0][1]
    print()
    print("| saving (2 ranks, %d steps, every %d) | steps/s | / no save | "
          "blocked in saves during the run (s) | wall of the command (s) |" %
          (args.steps, args.save_every))
    print("|---|---:|---:|---:|---:|")
    for name, rate, blocked, wall in rows:
        print("| %s | %.3f | %.2f | %.3f | %.2f |" %
              (name, rate, rate / base, blocked, wall))
    print("load average %s" % (os.getloadavg(),))


if __name__ == "__main__":
    main()
