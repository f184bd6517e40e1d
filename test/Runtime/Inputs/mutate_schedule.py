"""Breaks one thing in a compiled schedule, for schedule-proofs.test.

  mutate_schedule.py IN OUT MUTATION

MUTATION is one of
  no-wait       drop the compute stream's wait on the first reduce-scatter
  no-map        delete the first linalg.map (its result is never written)
  swap          swap the first compute instruction that reads the result of
                the one before it with that one (their points swap too, so
                that the points stay in order)
  race          move an instruction that follows the compute stream's wait on
                the first reduce-scatter, and writes bytes the plan reuses
                from the reduce-scatter after that wait, to just before the
                wait (with the wait's point)
  drop:PATH     delete the key at PATH (dots and [i]: buffers[0].role)
  set:PATH=JSON set the key at PATH to the JSON value
  dup-param     name the second parameter like the first
  dup-state     make the second state of the first parameter the first's kind
  swap-no-wait  drop the compute stream's wait on the last swap (no later
                wait on the copy stream covers it)
  swap-space    give the last swap's result the buffer of its operand
  swap-count    give the last swap a second operand without a result
Prints what it changed.
"""

import json
import re
import sys

WIDTH = {"f32": 4, "f64": 8, "bf16": 2, "f16": 2, "i64": 8, "i32": 4,
         "i1": 1, "index": 8}


def first_reduce_scatter(comm):
    """The first reduce-scatter and the event its completion records."""
    i = next(i for i, x in enumerate(comm) if x["op"] == "reduce_scatter")
    assert comm[i + 1]["op"] == "record"
    return comm[i], comm[i + 1]["event"]


def compute_wait(compute, event):
    return next(i for i, x in enumerate(compute)
                if x["op"] == "wait" and x["event"] == event)


def byte_ranges(d):
    """A function giving the (space, begin, end) of each tensor of `ids`."""
    values = {v["id"]: v for v in d["values"]}
    buffers = {b["id"]: b for b in d["buffers"]}

    def of(ids):
        out = []
        for i in ids:
            v = values[i]
            if v["kind"] != "tensor":
                continue
            n = WIDTH[v["dtype"]]
            for s in v["shape"]:
                n *= s
            b = buffers[v["buffer"]]
            out.append((b["space"], b["offset"], b["offset"] + n))
        return out
    return of


def main():
    src, dst, mutation = sys.argv[1:4]
    d = json.load(open(src))
    compute = d["instructions"]["compute"]
    comm = d["instructions"].get("comm", [])
    if mutation == "no-wait":
        _, event = first_reduce_scatter(comm)
        i = compute_wait(compute, event)
        del compute[i]
        print(f"deleted the wait at instructions.compute[{i}]")
    elif mutation == "no-map":
        i = next(i for i, x in enumerate(compute) if x["op"] == "linalg.map")
        print(f"deleted instructions.compute[{i}], writing {compute[i]['results']}")
        del compute[i]
    elif mutation == "swap":
        writer = {}
        for i, x in enumerate(compute):
            if i and any(writer.get(o) == i - 1 for o in x.get("operands", [])):
                a, b = compute[i - 1], compute[i]
                a["point"], b["point"] = b["point"], a["point"]
                compute[i - 1], compute[i] = b, a
                print(f"swapped instructions.compute[{i - 1}] and [{i}]")
                break
            for r in x.get("results", []):
                writer[r] = i
    elif mutation == "race":
        coll, event = first_reduce_scatter(comm)
        of = byte_ranges(d)
        touched = of(coll["operands"] + coll["results"])
        if "staging" in coll:
            s = coll["staging"]
            touched.append((s["space"], s["offset"], s["offset"] + s["bytes"]))
        w = compute_wait(compute, event)
        later = set(coll["results"])
        for k in range(w + 1, len(compute)):
            x = compute[k]
            if set(x.get("operands", [])) & later:
                later |= set(x.get("results", []))
                continue
            if any(a[0] == b[0] and a[1] < b[2] and b[1] < a[2]
                   for a in touched for b in of(x.get("results", []))):
                del compute[k]
                x["point"] = compute[w]["point"]
                compute.insert(w, x)
                print(f"moved instructions.compute[{k}] to [{w}]")
                break
            later |= set(x.get("results", []))
        else:
            sys.exit("race: no instruction to move")
    elif mutation in ("swap-no-wait", "swap-space", "swap-count"):
        copy = d["instructions"]["copy"]
        i = max(i for i, x in enumerate(copy) if x["op"] == "swap")
        swap, event = copy[i], copy[i + 1]["event"]
        values = {v["id"]: v for v in d["values"]}
        result = values[swap["results"][0]]
        if mutation == "swap-no-wait":
            w = compute_wait(compute, event)
            del compute[w]
            print(f"deleted the wait at instructions.compute[{w}]")
        elif mutation == "swap-space":
            result["buffer"] = values[swap["operands"][0]]["buffer"]
            print(f"moved value {result['id']} to its operand's buffer")
        else:
            swap["operands"].append(swap["operands"][0])
            print(f"gave instructions.copy[{i}] a second operand")
    elif mutation.startswith(("drop:", "set:")):
        target, _, value = mutation.partition(":")[2].partition("=")
        path = re.findall(r"[^.\[\]]+", target)
        node = d
        for key in path[:-1]:
            node = node[int(key)] if isinstance(node, list) else node[key]
        last = int(path[-1]) if isinstance(node, list) else path[-1]
        if mutation.startswith("drop:"):
            del node[last]
            print(f"deleted {target}")
        else:
            node[last] = json.loads(value)
            print(f"set {target} to {value}")
    elif mutation == "dup-param":
        params = [a for a in d["arguments"] if a["kind"] == "param"]
        params[1]["name"] = params[0]["name"]
        print(f"named the second parameter '{params[0]['name']}'")
    elif mutation == "dup-state":
        first = next(a for a in d["arguments"] if a["kind"] == "param")["name"]
        states = [a for a in d["arguments"]
                  if a["kind"] == "state" and a.get("param") == first]
        states[1]["state"] = states[0]["state"]
        states[1]["init"] = states[0]["init"]
        print(f"made the second state of '{first}' a {states[0]['state']}")
    else:
        sys.exit(f"unknown mutation '{mutation}'")
    json.dump(d, open(dst, "w"), indent=1)


if __name__ == "__main__":
    main()
