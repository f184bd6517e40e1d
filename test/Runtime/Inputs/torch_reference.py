#!/usr/bin/python3
"""An independent PyTorch reference for zero-run: N AdamW steps of a zero-model model.

Run with Debian's /usr/bin/python3 (python3-torch, numpy). The model is
exactly the math of zero-model's training-step IR: the plain-PyTorch GPT and
MLP of test/zero-model/numerics/Inputs/zero_numerics.py, which the numerics
tests check against the IR itself (tied embeddings, tanh GELU, biased
LayerNorm with eps 1e-5, loss = mean cross entropy over the batch's rows).
One process, world size 1: --batch-size is the job's total batch (zero-run's
per-rank batch times the world size), which sees the same rows.

Parameters: --init FILE (safetensors, every parameter by its zero-model name,
fp32), or else generated like the runtime does from --seed
(docs/ScheduleFormat.md: `*.bias` zeros, `ln_*.weight` ones, every other
parameter normal(0, 0.02) from runtime/include/zero/runtime/Init.h, bit for
bit via zero_random.py).

Data, the runtime's rules (runtime/include/zero/runtime/TokenData.h, Init.h):
  gpt: --data FILE (uint16 little-endian tokens), or else the synthetic
       stream TokenStream::synthetic(seed, vocab, 2^20). Row r of step s
       starts at o = (s * batch + r) * seq mod (n - seq - 1); tokens =
       data[o : o + seq], targets = data[o + 1 : o + seq + 1].
  mlp: synthetic; global row g = s * batch + r: inputs[r, i] =
       syntheticFloat(seed, "inputs", g, i), labels[r] =
       syntheticInt(seed, "labels", g, 0, hidden) (hidden = the classes).

The optimizer is DeepSpeed's fused Adam (zero-opt's zero.adam): with t the
1-based step, m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2, denom =
sqrt(v / (1 - b2^t)) + eps, update = m / (1 - b1^t) / denom; AdamW (default)
p -= lr (update + wd p); --no-adam-w-mode (L2) adds wd p to g first.
--amsgrad steps with PyTorch's own torch.optim.AdamW(amsgrad=True) (Adam
with L2 weight decay under --no-adam-w-mode; foreach=False), whose
denominator uses the running maximum of v.
--gradient-clipping c scales all gradients by min(1, c / (norm + 1e-6)).
Defaults are DeepSpeed's and zero-opt's (docs/Config.md): lr 1e-3, betas
0.9/0.999, eps 1e-8, weight decay 0.

Prints `step=<t> loss=<value>` for t = 1 .. steps, as zero-run does (t is
Adam's step count; the step reads data step t - 1; the loss is that of the
forward pass before the step's update), and with --export FILE writes the
parameters after the last step (fp32 safetensors, like zero-run --export).
"""

import argparse
import math
import os
import sys

import numpy as np

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "zero-model", "numerics", "Inputs"))
import safetensors_io  # noqa: E402
import zero_numerics as zn  # noqa: E402
import zero_random  # noqa: E402


class InputError(Exception):
    pass


def build_spec(args):
    if args.model == "gpt":
        if args.hidden_size % args.num_attention_heads:
            raise InputError(f"--num-attention-heads {args.num_attention_heads} does not divide "
                             f"--hidden-size {args.hidden_size}")
        if args.vocab_size > 65536:
            raise InputError(f"--vocab-size {args.vocab_size} does not fit uint16 token ids")
        return zn.gpt_spec(args.num_layers, args.hidden_size, args.num_attention_heads,
                           args.seq_length, args.batch_size, args.vocab_size)
    return zn.mlp_spec(args.layers, args.hidden, args.batch_size)


def default_init(name, shape, seed):
    """The runtime's initialization by name (docs/ScheduleFormat.md)."""
    base = name.rsplit(".", 1)[-1]
    if base == "bias":
        return np.zeros(shape, dtype=np.float32)
    if name.rsplit(".", 2)[-2].startswith("ln_") and base == "weight":
        return np.ones(shape, dtype=np.float32)
    n = int(np.prod(shape))
    return zero_random.fill_normal(seed, name, 0, n, 0.02).reshape(shape)


def load_params(spec, args):
    if not args.init:
        return {name: default_init(name, shape, args.seed) for name, shape in spec.params}
    try:
        tensors, _ = safetensors_io.read(args.init)
    except safetensors_io.FormatError as e:
        raise InputError(str(e))
    params = {}
    for name, shape in spec.params:
        if name not in tensors:
            raise InputError(f"{args.init}: no tensor '{name}' (a parameter of this model)")
        if tuple(tensors[name].shape) != tuple(shape):
            raise InputError(f"{args.init}: tensor '{name}' has shape {list(tensors[name].shape)}, "
                             f"but the model's parameter has {list(shape)}")
        params[name] = tensors[name]
    extra = sorted(set(tensors) - set(params))
    if extra:
        raise InputError(f"{args.init}: tensor '{extra[0]}' is not a parameter of this model"
                         + (f" (and {len(extra) - 1} more)" if len(extra) > 1 else ""))
    return params


def load_tokens(args):
    """The token stream as int64, checked like TokenStream::openFile."""
    S, V = args.seq_length, args.vocab_size
    if not args.data:
        return zero_random.synthetic_tokens(args.seed, V).astype(np.int64)
    size = os.path.getsize(args.data)
    if size % 2:
        raise InputError(f"{args.data}: {size} bytes, an odd size for uint16 tokens")
    ids = np.fromfile(args.data, dtype="<u2").astype(np.int64)
    if len(ids) < S + 2:
        raise InputError(f"{args.data}: {len(ids)} tokens, but a window of seq_length {S} needs "
                         f"at least {S + 2}")
    bad = np.nonzero(ids >= V)[0]
    if len(bad):
        raise InputError(f"{args.data}: token {ids[bad[0]]} at position {bad[0]} is out of range "
                         f"for a vocabulary of {V}")
    return ids


def step_data(spec, args, step, tokens):
    """The data arguments of step `step` (numpy: float64 inputs, int32 ids)."""
    B = args.batch_size
    if spec.model == "gpt":
        S = args.seq_length
        span = len(tokens) - S - 1
        rows_t, rows_y = [], []
        for r in range(B):
            o = ((step * B + r) * S) % span
            rows_t.append(tokens[o:o + S])
            rows_y.append(tokens[o + 1:o + S + 1])
        return {"tokens": np.stack(rows_t).astype(np.int32),
                "targets": np.stack(rows_y).astype(np.int32)}
    H = args.hidden
    rows = range(step * B, step * B + B)
    inputs = np.stack([zero_random.synthetic_float_row(args.seed, "inputs", g, H) for g in rows])
    labels = np.array([zero_random.synthetic_int_row(args.seed, "labels", g, 1, H)[0]
                       for g in rows], dtype=np.int32)
    return {"inputs": inputs.astype(np.float64), "labels": labels}


def train(spec, params, args):
    import torch

    tdt = {"f32": torch.float32, "f64": torch.float64,
           "bf16": torch.bfloat16}[args.dtype]
    # bf16 is DeepSpeed's: the module runs in bf16 (each op rounds what it
    # makes), the optimizer steps fp32 master weights with the bf16
    # gradients widened, and the module takes the new weights rounded.
    master = torch.float32 if args.dtype == "bf16" else tdt
    dev = torch.device(args.device)
    if dev.type == "cuda":
        # Plain f32 matmuls on the GPU too (no TF32), as zero-run's cuBLAS.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    names = [n for n, _ in spec.params]
    P = {n: torch.tensor(params[n], dtype=master, device=dev,
                         requires_grad=master == tdt)
         for n in names}
    M = {n: torch.zeros_like(P[n], requires_grad=False) for n in names}
    V = {n: torch.zeros_like(P[n], requires_grad=False) for n in names}
    tokens = load_tokens(args) if spec.model == "gpt" else None
    b1, b2, lr, eps, wd = args.beta1, args.beta2, args.lr, args.eps, args.weight_decay
    schedule = warmup_schedule(args.warmup) if args.warmup else None
    optimizer = None
    if args.amsgrad:
        kind = torch.optim.AdamW if args.adam_w_mode else torch.optim.Adam
        optimizer = kind([P[n] for n in names], lr=lr, betas=(b1, b2), eps=eps,
                         weight_decay=wd, amsgrad=True, foreach=False)
    losses = []
    for step in range(args.steps):
        if schedule:
            lr = schedule.get_last_lr()[0]
            if optimizer:
                for group in optimizer.param_groups:
                    group["lr"] = lr
        data = step_data(spec, args, step, tokens)
        D = {k: torch.tensor(v, dtype=tdt, device=dev) if v.dtype.kind == "f"
             else torch.tensor(v.astype(np.int64), device=dev)
             for k, v in data.items()}
        module = P if master == tdt else {
            n: P[n].detach().to(tdt).requires_grad_() for n in names}
        loss = (zn._torch_gpt(spec.cfg, module, D) if spec.model == "gpt"
                else zn._torch_mlp(spec.cfg, module, D))
        grads = [g.to(master) for g in
                 torch.autograd.grad(loss, [module[n] for n in names])]
        value = float(loss.detach())
        losses.append(value)
        digits = 17 if args.dtype == "f64" else 9
        print(f"step={step + 1} loss={value:.{digits}g}", flush=True)
        with torch.no_grad():
            G = dict(zip(names, grads))
            if args.gradient_clipping > 0:
                norm = torch.sqrt(sum((g.double() ** 2).sum() for g in G.values()))
                coef = args.gradient_clipping / (float(norm) + 1e-6)
                if coef < 1:
                    G = {n: g * coef for n, g in G.items()}
            if optimizer is not None:
                for n in names:
                    P[n].grad = G[n]
                optimizer.step()
                continue
            t = step + 1
            bc1 = 1.0 - b1 ** t
            bc2 = 1.0 - b2 ** t
            for n in names:
                p, g = P[n], G[n]
                if not args.adam_w_mode and wd != 0:
                    g = g + wd * p
                M[n].mul_(b1).add_((1.0 - b1) * g)
                V[n].mul_(b2).add_((1.0 - b2) * g * g)
                denom = torch.sqrt(V[n] / bc2) + eps
                update = (M[n] / bc1) / denom
                if args.adam_w_mode and wd != 0:
                    update = update + wd * p
                p.sub_(lr * update)
        if schedule:
            schedule.step()
    return {n: P[n].detach().to(torch.float32).cpu().numpy() for n in names}, losses


def warmup_schedule(spec):
    """DeepSpeed's WarmupLR as a torch LambdaLR on a holder optimizer of base
    rate 1, so that get_last_lr() is the rate itself. LambdaLR calls the
    lambda with e = 0 before the first step; DeepSpeed's scheduler has then
    taken no step, its last_batch_iteration i = e - 1 = -1, at which WarmupLR
    gives the minimum. zero.adam takes the rate as an f32."""
    low, high, steps, kind = spec.split(",")
    low, high, steps = float(low), float(high), max(2, int(steps))
    if kind not in ("log", "linear"):
        raise InputError(f"--warmup: TYPE must be log or linear, got {kind}")

    def rate(e):
        i = e - 1
        if i < 0:
            gamma = 0.0
        elif i < steps:
            gamma = (math.log(i + 1) / math.log(steps) if kind == "log"
                     else i / steps)
        else:
            gamma = 1.0
        return float(np.float32(low + (high - low) * gamma))

    import torch
    holder = torch.optim.SGD([torch.zeros(1)], lr=1.0)
    return torch.optim.lr_scheduler.LambdaLR(holder, rate)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=["gpt", "mlp"], required=True)
    g = ap.add_argument_group("gpt (zero-model gpt's options and defaults)")
    g.add_argument("--num-layers", type=int, default=12)
    g.add_argument("--hidden-size", type=int, default=768)
    g.add_argument("--num-attention-heads", type=int, default=12)
    g.add_argument("--seq-length", type=int, default=1024)
    g.add_argument("--vocab-size", type=int, default=50257)
    m = ap.add_argument_group("mlp (zero-model mlp's options and defaults)")
    m.add_argument("--layers", type=int, default=2)
    m.add_argument("--hidden", type=int, default=16, help="features of every layer, and classes")
    ap.add_argument("--batch-size", type=int, default=None,
                    help="the job's total batch (default: zero-model's, gpt 1, mlp 4)")
    ap.add_argument("--init", "--init-from", dest="init", metavar="FILE",
                    help="initial parameters (fp32 safetensors; zero-run's --init-from)")
    ap.add_argument("--data", metavar="FILE", help="gpt: uint16 token file (default: synthetic)")
    ap.add_argument("--seed", type=int, default=0,
                    help="seed of the generated initialization and synthetic data")
    ap.add_argument("--steps", type=int, default=1)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--beta1", type=float, default=0.9)
    ap.add_argument("--beta2", type=float, default=0.999)
    ap.add_argument("--eps", type=float, default=1e-8)
    ap.add_argument("--weight-decay", type=float, default=0.0)
    ap.add_argument("--no-adam-w-mode", dest="adam_w_mode", action="store_false",
                    help="L2 weight decay (Adam) instead of decoupled (AdamW)")
    ap.add_argument("--amsgrad", action="store_true",
                    help="AMSGrad: torch.optim.AdamW(amsgrad=True) (Adam with "
                         "--no-adam-w-mode)")
    ap.add_argument("--gradient-clipping", type=float, default=0.0)
    ap.add_argument("--warmup", metavar="MIN,MAX,STEPS,TYPE",
                    help="DeepSpeed's WarmupLR (TYPE log or linear) through "
                    "torch's LambdaLR, instead of the constant --lr")
    ap.add_argument("--dtype", choices=["f32", "f64", "bf16"], default="f32",
                    help="arithmetic of the model and optimizer (bf16: the "
                    "model's, with fp32 master weights, as DeepSpeed's bf16)")
    ap.add_argument("--device", default="cpu",
                    help="where PyTorch computes: cpu (default) or cuda")
    ap.add_argument("--export", metavar="FILE", help="write the final parameters here")
    ap.add_argument("--export-init", metavar="FILE", help="write the initial parameters here")
    args = ap.parse_args()
    if args.batch_size is None:
        args.batch_size = 1 if args.model == "gpt" else 4

    try:
        sizes = ([("--num-layers", args.num_layers), ("--hidden-size", args.hidden_size),
                  ("--num-attention-heads", args.num_attention_heads),
                  ("--seq-length", args.seq_length), ("--vocab-size", args.vocab_size)]
                 if args.model == "gpt" else [("--layers", args.layers), ("--hidden", args.hidden)])
        for flag, value in sizes + [("--batch-size", args.batch_size)]:
            if value < 1:
                raise InputError(f"{flag} must be positive, got {value}")
        if args.steps < 0:
            raise InputError(f"--steps must be >= 0, got {args.steps}")
        if args.data and args.model != "gpt":
            raise InputError("--data is for --model gpt (the mlp's data is synthetic)")
        spec = build_spec(args)
        params = load_params(spec, args)
        if args.export_init:
            safetensors_io.write(args.export_init, params)
        final, _ = train(spec, params, args)
        if args.export:
            safetensors_io.write(args.export, final)
    except InputError as e:
        print(f"torch_reference.py: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"torch_reference.py: error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
