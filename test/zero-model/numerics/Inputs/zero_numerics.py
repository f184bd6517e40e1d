"""Helpers for the numerical checks of the IR written by zero-model.

The pieces, used by check_model.py:
  * model specs (parameter/data names and shapes) for `mlp` and `gpt`, taken
    from the zero-model contract (docs/TrainingStepIR.md);
  * deterministic initial values and data;
  * the same models written in plain PyTorch (no torch.nn), with autograd;
  * the MLIR side: parse the @train_step signature, write a harness module
    with the weights and data as bit-exact dense constants and a @main that
    calls @train_step (and, for finite differences, calls it again with single
    elements perturbed), lower it with upstream mlir-opt, run it with
    mlir-runner and read the results back bit-exactly.

Only upstream MLIR tools are used on the MLIR side; nothing of zero-opt.
"""

import math
import os
import re
import subprocess
import sys

import numpy as np

# --------------------------------------------------------------------------
# Model specs.


class Spec:
    """Names, shapes and element kinds of the train_step arguments."""

    def __init__(self, model, cfg, params, data):
        self.model = model
        self.cfg = cfg
        self.params = params  # [(name, shape)], float
        self.data = data  # [(name, shape)], i32


def mlp_spec(layers, hidden, batch):
    params = []
    for i in range(layers):
        params.append((f"fc{i}.weight", (hidden, hidden)))
        params.append((f"fc{i}.bias", (hidden,)))
    data = [("inputs", (batch, hidden)), ("labels", (batch,))]
    cfg = dict(layers=layers, hidden=hidden, batch=batch)
    return Spec("mlp", cfg, params, data)


def gpt_spec(layers, hidden, heads, seq, batch, vocab):
    H = hidden
    params = [("wte.weight", (vocab, H)), ("wpe.weight", (seq, H))]
    for i in range(layers):
        p = f"h.{i}."
        params += [
            (p + "ln_1.weight", (H,)),
            (p + "ln_1.bias", (H,)),
            (p + "attn.c_attn.weight", (H, 3 * H)),
            (p + "attn.c_attn.bias", (3 * H,)),
            (p + "attn.c_proj.weight", (H, H)),
            (p + "attn.c_proj.bias", (H,)),
            (p + "ln_2.weight", (H,)),
            (p + "ln_2.bias", (H,)),
            (p + "mlp.c_fc.weight", (H, 4 * H)),
            (p + "mlp.c_fc.bias", (4 * H,)),
            (p + "mlp.c_proj.weight", (4 * H, H)),
            (p + "mlp.c_proj.bias", (H,)),
        ]
    params += [("ln_f.weight", (H,)), ("ln_f.bias", (H,))]
    data = [("tokens", (batch, seq)), ("targets", (batch, seq))]
    cfg = dict(layers=layers, hidden=hidden, heads=heads, seq=seq, batch=batch,
               vocab=vocab)
    return Spec("gpt", cfg, params, data)


# --------------------------------------------------------------------------
# Values.


def init_values(spec, seed):
    """Parameters (float64) and data (int32), deterministic in `seed`.

    Embeddings (wte, wpe) are GPT-2's normal(0, 0.02). Linear weights are
    normal(0, 1/sqrt(fan_in)) rather than GPT-2's 0.02: with 0.02 at these
    widths the attention scores are ~1e-2, softmax is nearly uniform and the
    GELU inputs sit in its linear range; the q/k parts of the c_attn gradient
    are then ~3e-7 in the last block (5e-3 with 1/sqrt(fan_in)), too small
    for finite differences to see an error in them (a 1% error put into the
    score gradient of the last block passed a 2-point FD check with 0.02 and
    fails 146 of 248 elements with 1/sqrt(fan_in)). Biases and LayerNorm
    parameters get clearly non-trivial values (normal(0, 0.2),
    1 + normal(0, 0.2)) instead of 0 and 1, so that no gradient can hide
    behind a special value. MLP: normal(0, 1/sqrt(H)) weights, normal(0, 0.2)
    biases, normal(0, 1) inputs.
    """
    rng = np.random.default_rng(seed)
    cfg = spec.cfg
    params = {}
    for name, shape in spec.params:
        if spec.model == "mlp":
            std = 1.0 / math.sqrt(cfg["hidden"]) if name.endswith(".weight") else 0.2
            v = rng.normal(0.0, std, shape)
        elif name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight":
            v = 1.0 + rng.normal(0.0, 0.2, shape)
        elif name.endswith(".bias"):
            v = rng.normal(0.0, 0.2, shape)
        elif name in ("wte.weight", "wpe.weight"):
            v = rng.normal(0.0, 0.02, shape)
        else:
            v = rng.normal(0.0, 1.0 / math.sqrt(shape[0]), shape)
        params[name] = np.asarray(v, dtype=np.float64)
    data = {}
    if spec.model == "mlp":
        B, H = cfg["batch"], cfg["hidden"]
        data["inputs"] = rng.normal(0.0, 1.0, (B, H))
        data["labels"] = rng.integers(0, H, (B,)).astype(np.int32)
    else:
        B, S, V = cfg["batch"], cfg["seq"], cfg["vocab"]
        # Tokens from the lower half of the vocabulary, so that the upper
        # half certainly contains rows of wte that get a gradient only through
        # the tied output projection; one token repeated on purpose, so that
        # the embedding gradient must accumulate over positions.
        tokens = rng.integers(0, max(1, V // 2), (B, S)).astype(np.int32)
        if B * S > 1:
            tokens.reshape(-1)[-1] = tokens.reshape(-1)[0]
        data["tokens"] = tokens
        data["targets"] = rng.integers(0, V, (B, S)).astype(np.int32)
    return params, data


def fd_samples(spec, data, seed, full_max):
    """Elements (index tuples) of each parameter checked by finite differences.

    Tensors with at most `full_max` elements are checked completely. Larger
    ones get the first and the last element, elements picked for structure
    (below) and random ones, 8 or more in all:
      * wte.weight: rows of tokens that occur (including the repeated one) and
        rows that do not occur in the input (those get a gradient only
        through the tied output projection);
      * c_attn weight/bias: one element in every head of each of q, k and v;
      * everything else: random elements.
    """
    rng = np.random.default_rng(seed + 1)
    cfg = spec.cfg
    out = {}
    for name, shape in spec.params:
        n = int(np.prod(shape))
        if n <= full_max:
            out[name] = [tuple(int(i) for i in np.unravel_index(k, shape)) for k in range(n)]
            continue
        picks = [0, n - 1]

        def add(idx):
            picks.append(int(np.ravel_multi_index(idx, shape)))

        if name == "wte.weight":
            toks = data["tokens"].reshape(-1)
            used = sorted(set(int(t) for t in toks))
            unused = [r for r in range(shape[0]) if r not in used]
            rows = [int(toks[0])]  # the repeated token
            rows += list(rng.choice(used, size=min(2, len(used)), replace=False))
            rows += list(rng.choice(unused, size=min(3, len(unused)), replace=False))
            for r in rows:
                add((int(r), int(rng.integers(0, shape[1]))))
        elif name.endswith("attn.c_attn.weight") or name.endswith("attn.c_attn.bias"):
            H, A = cfg["hidden"], cfg["heads"]
            D = H // A
            for sec in range(3):
                for h in range(A):
                    col = sec * H + h * D + int(rng.integers(0, D))
                    if len(shape) == 2:
                        add((int(rng.integers(0, shape[0])), col))
                    else:
                        add((col,))
        while len(set(picks)) < min(8, n):
            picks.append(int(rng.integers(0, n)))
        seen = []
        for p in picks:
            if p not in seen:
                seen.append(p)
        out[name] = [tuple(int(i) for i in np.unravel_index(k, shape)) for k in seen]
    return out


# --------------------------------------------------------------------------
# PyTorch reference (plain tensor ops and autograd, no torch.nn).


def torch_reference(spec, params, data, dtype):
    """Loss and gradients of the model in PyTorch, as float64 numpy arrays."""
    import torch

    tdt = {"f32": torch.float32, "f64": torch.float64}[dtype]
    P = {k: torch.tensor(v, dtype=tdt, requires_grad=True) for k, v in params.items()}
    D = {k: torch.tensor(v, dtype=tdt) if v.dtype.kind == "f" else torch.tensor(v.astype(np.int64))
         for k, v in data.items()}
    if spec.model == "mlp":
        loss = _torch_mlp(spec.cfg, P, D)
    else:
        loss = _torch_gpt(spec.cfg, P, D)
    names = [n for n, _ in spec.params]
    grads = torch.autograd.grad(loss, [P[n] for n in names])
    return (float(loss.detach().double()),
            {n: g.detach().double().numpy() for n, g in zip(names, grads)})


def _cross_entropy(logits, labels):
    # Mean over rows of logsumexp(row) - row[label], in at least f32: a
    # 16-bit model's loss accumulates in f32 (as under torch.autocast, and
    # as the IR's reductions do), or bf16 would round it to 1/32 near 4.
    import torch

    logits = logits.to(torch.promote_types(logits.dtype, torch.float32))
    m = logits.max(dim=-1, keepdim=True).values.detach()
    lse = (logits - m).exp().sum(dim=-1).log() + m.squeeze(-1)
    picked = logits.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    return (lse - picked).mean()


def _torch_mlp(cfg, P, D):
    import torch

    h = D["inputs"]
    for i in range(cfg["layers"]):
        h = h @ P[f"fc{i}.weight"] + P[f"fc{i}.bias"]
        if i + 1 < cfg["layers"]:
            h = torch.clamp(h, min=0.0)
    return _cross_entropy(h, D["labels"])


def _layer_norm(x, w, b, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)  # biased, like GPT-2
    return (x - mean) / (var + eps).sqrt() * w + b


def _gelu_tanh(x):
    import torch

    c = math.sqrt(2.0 / math.pi)
    return 0.5 * x * (1.0 + torch.tanh(c * (x + 0.044715 * x * x * x)))


def _torch_gpt(cfg, P, D):
    import torch

    B, S, H, A = cfg["batch"], cfg["seq"], cfg["hidden"], cfg["heads"]
    Dh = H // A
    tokens, targets = D["tokens"], D["targets"]
    x = P["wte.weight"][tokens] + P["wpe.weight"][:S].unsqueeze(0)
    causal = torch.ones(S, S, dtype=torch.bool, device=x.device).tril()
    for i in range(cfg["layers"]):
        p = f"h.{i}."
        h = _layer_norm(x, P[p + "ln_1.weight"], P[p + "ln_1.bias"])
        qkv = h @ P[p + "attn.c_attn.weight"] + P[p + "attn.c_attn.bias"]
        q, k, v = qkv[..., :H], qkv[..., H:2 * H], qkv[..., 2 * H:]
        q = q.reshape(B, S, A, Dh).permute(0, 2, 1, 3)
        k = k.reshape(B, S, A, Dh).permute(0, 2, 1, 3)
        v = v.reshape(B, S, A, Dh).permute(0, 2, 1, 3)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(Dh)
        att = att.masked_fill(~causal, float("-inf"))
        att = att - att.max(dim=-1, keepdim=True).values.detach()
        att = att.exp()
        att = att / att.sum(dim=-1, keepdim=True)
        y = (att @ v).permute(0, 2, 1, 3).reshape(B, S, H)
        x = x + (y @ P[p + "attn.c_proj.weight"] + P[p + "attn.c_proj.bias"])
        h = _layer_norm(x, P[p + "ln_2.weight"], P[p + "ln_2.bias"])
        h = _gelu_tanh(h @ P[p + "mlp.c_fc.weight"] + P[p + "mlp.c_fc.bias"])
        x = x + (h @ P[p + "mlp.c_proj.weight"] + P[p + "mlp.c_proj.bias"])
    x = _layer_norm(x, P["ln_f.weight"], P["ln_f.bias"])
    logits = x @ P["wte.weight"].t()
    return _cross_entropy(logits.reshape(B * S, -1), targets.reshape(-1))


# --------------------------------------------------------------------------
# Reading the @train_step signature.


class SignatureError(Exception):
    pass


def _split_top(s, sep=","):
    """Splits at `sep` outside of (), <>, [], {} and string literals."""
    parts, depth, cur, i, instr = [], 0, [], 0, False
    while i < len(s):
        c = s[i]
        if instr:
            cur.append(c)
            if c == "\\":
                cur.append(s[i + 1])
                i += 1
            elif c == '"':
                instr = False
        elif c == '"':
            instr = True
            cur.append(c)
        elif c in "(<[{":
            depth += 1
            cur.append(c)
        elif c in ")>]}":
            # '->' inside a function type is not a closing bracket.
            if not (c == ">" and i > 0 and s[i - 1] == "-"):
                depth -= 1
            cur.append(c)
        elif c == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def _balanced(s, start):
    """Index just past the bracket group opening at s[start]."""
    pairs = {"(": ")", "{": "}", "<": ">", "[": "]"}
    stack, i, instr = [], start, False
    while i < len(s):
        c = s[i]
        if instr:
            if c == "\\":
                i += 1
            elif c == '"':
                instr = False
        elif c == '"':
            instr = True
        elif c in pairs:
            stack.append(pairs[c])
        elif stack and c == stack[-1] and not (c == ">" and s[i - 1] == "-"):
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    raise SignatureError("unbalanced brackets in the @train_step signature")


class TType:
    """A ranked tensor type with static shape."""

    def __init__(self, text):
        m = re.fullmatch(r"tensor<([^>]*)>", text.strip())
        if not m:
            raise SignatureError(f"not a ranked tensor type: {text}")
        dims = m.group(1).split("x")
        self.elem = dims[-1]
        try:
            self.shape = tuple(int(d) for d in dims[:-1])
        except ValueError:
            raise SignatureError(f"dynamic or odd shape in {text}")
        self.text = text.strip()

    def with_elem(self, elem):
        return "tensor<" + "".join(f"{d}x" for d in self.shape) + elem + ">"

    def memref(self, elem=None):
        return "memref<" + "".join(f"{d}x" for d in self.shape) + (elem or self.elem) + ">"


def _parse_entry(text, is_arg):
    """'%a: tensor<..> {attrs}' (argument) or 'tensor<..> {attrs}' (result)."""
    if is_arg:
        m = re.match(r"%[\w$.-]+\s*:\s*", text)
        if not m:
            raise SignatureError(f"cannot read argument '{text}'")
        text = text[m.end():]
    brace = text.find("{")
    ty = text if brace < 0 else text[:brace]
    attrs = "" if brace < 0 else text[brace:]
    return TType(ty), attrs


def parse_train_step(ir):
    """Returns (args, results): lists of (TType, attr-dict text)."""
    key = "func.func @train_step("
    pos = ir.find(key)
    if pos < 0:
        raise SignatureError("no public func.func @train_step in the module")
    open_paren = pos + len(key) - 1
    end_args = _balanced(ir, open_paren)
    args = [_parse_entry(a, True) for a in _split_top(ir[open_paren + 1:end_args - 1])]
    rest = ir[end_args:].lstrip()
    if not rest.startswith("->"):
        raise SignatureError("@train_step returns nothing")
    rest = rest[2:].lstrip()
    if rest.startswith("("):
        end_res = _balanced(rest, 0)
        results = [_parse_entry(r, False) for r in _split_top(rest[1:end_res - 1])]
    else:
        m = re.match(r"tensor<[^>]*>(\s*\{[^}]*\})?", rest)
        results = [_parse_entry(m.group(0), False)]
    return args, results


def _attr(attrs, key):
    m = re.search(re.escape(key) + r'\s*=\s*"((?:[^"\\]|\\.)*)"', attrs)
    return m.group(1) if m else None


def check_contract(spec, ir, dtype):
    """Checks the @train_step signature against the contract for `spec`.

    Returns (arg types, result types) and a list of problems (empty if ok).
    """
    args, results = parse_train_step(ir)
    problems = []

    def ttext(shape, elem):
        return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"

    want_args = [(ttext(s, dtype), f'{{zero.param = "{n}"}}', "zero.param", n) for n, s in spec.params]
    for n, s in spec.data:
        elem = dtype if n == "inputs" else "i32"
        want_args.append((ttext(s, elem), f'{{zero.data = "{n}"}}', "zero.data", n))
    want_res = [(ttext((), dtype), "{zero.loss}", "zero.loss", None)]
    want_res += [(ttext(s, dtype), f'{{zero.grad = "{n}"}}', "zero.grad", n) for n, s in spec.params]
    for what, got, want in (("argument", args, want_args), ("result", results, want_res)):
        if len(got) != len(want):
            problems.append(f"@train_step has {len(got)} {what}s, expected {len(want)}")
        for i, ((ty, attrs), (wty, wattr, key, name)) in enumerate(zip(got, want)):
            if name is None:
                ok_attr = re.search(r"\bzero\.loss\b", attrs) is not None
            else:
                ok_attr = _attr(attrs, key) == name
            if ty.text != wty or not ok_attr:
                problems.append(f"{what} {i} is {ty.text} {attrs or '{}'}, expected {wty} {wattr}")
    return [a[0] for a in args], [r[0] for r in results], problems


# --------------------------------------------------------------------------
# Harness module.


def _dense(arr, elem):
    """A bit-exact dense elements literal for `arr` as `elem`."""
    if elem in ("f32", "f64"):
        npdt = "<f4" if elem == "f32" else "<f8"
        return 'dense<"0x' + np.ascontiguousarray(arr, dtype=npdt).tobytes().hex().upper() + '">'
    flat = ", ".join(str(int(v)) for v in np.asarray(arr).reshape(-1))
    shape = np.asarray(arr).shape
    if not shape:
        return f"dense<{flat}>"
    # Nested literal of the right shape.
    def nest(a):
        if a.ndim == 1:
            return "[" + ", ".join(str(int(v)) for v in a) + "]"
        return "[" + ", ".join(nest(x) for x in a) + "]"
    return f"dense<{nest(np.asarray(arr))}>"


class Harness:
    """Writes @main: call @train_step, print all results, optionally FD."""

    def __init__(self, arg_types, res_types, dtype):
        self.arg_types = arg_types
        self.res_types = res_types
        self.dtype = dtype
        self.ibits = "i64" if dtype == "f64" else "i32"
        self.lines = []
        self.n = 0
        self.prints = []  # (label, shape) in print order
        self.fd_order = []  # (parameter name, index) of the rows of "fd"

    def fresh(self, base="v"):
        self.n += 1
        return f"%{base}{self.n}"

    def emit(self, line):
        self.lines.append("    " + line)

    def call(self, args):
        r = self.fresh("r")
        sig = "(" + ", ".join(t.text for t in self.arg_types) + ") -> (" + \
            ", ".join(t.text for t in self.res_types) + ")"
        self.emit(f"{r}:{len(self.res_types)} = func.call @train_step({', '.join(args)}) : {sig}")
        return r

    def print_tensor(self, value, ty, label):
        """Prints `value` bit-exactly (bitcast to integers, printMemrefI*)."""
        ity = ty.with_elem(self.ibits)
        e = self.fresh("pe")
        b = self.fresh("pb")
        m = self.fresh("pm")
        u = self.fresh("pu")
        self.emit(f"{e} = tensor.empty() : {ity}")
        self.emit(f"{b} = linalg.map {{ arith.bitcast }} ins({value} : {ty.text}) outs({e} : {ity})")
        self.emit(f"{m} = bufferization.to_buffer {b} : {ity} to {ty.memref(self.ibits)}")
        self.emit(f"{u} = memref.cast {m} : {ty.memref(self.ibits)} to memref<*x{self.ibits}>")
        fn = "printMemrefI64" if self.ibits == "i64" else "printMemrefI32"
        self.emit(f"func.call @{fn}({u}) : (memref<*x{self.ibits}>) -> ()")
        self.prints.append((label, ty.shape))

    def build(self, ir, param_names, params, data_names, data, fd=None, fd_eps=None):
        nparam = len(param_names)
        self.emit("%c0 = arith.constant 0 : index")
        self.emit("%c1 = arith.constant 1 : index")
        vals = []
        for i, name in enumerate(param_names):
            ty = self.arg_types[i]
            v = f"%p{i}"
            self.emit(f"{v} = arith.constant {_dense(params[name], ty.elem)} : {ty.text}  // {name}")
            vals.append(v)
        for j, name in enumerate(data_names):
            ty = self.arg_types[nparam + j]
            v = f"%d{j}"
            self.emit(f"{v} = arith.constant {_dense(data[name], ty.elem)} : {ty.text}  // {name}")
            vals.append(v)
        r = self.call(vals)
        self.print_tensor(f"{r}#0", self.res_types[0], "loss")
        for i, name in enumerate(param_names):
            self.print_tensor(f"{r}#{i + 1}", self.res_types[i + 1], "grad:" + name)
        if fd:
            self._fd(param_names, fd, fd_eps, vals)
        return self._module(ir)

    def _fd(self, param_names, fd, eps, vals):
        """Loss at p[idx] +- eps and +- 2 eps for every sampled element.

        One scf.for over all samples (table rows: parameter number, index
        padded to the largest rank); in each iteration every parameter goes
        through an scf.if that yields the perturbed copies for the sampled
        parameter and the parameter itself for the others, followed by four
        calls of @train_step. Four call sites instead of four per parameter
        keep the module (and the JIT compile time) small.
        """
        rows, self.fd_order = [], []
        rmax = max(len(self.arg_types[i].shape) for i in range(len(param_names)))
        for i, name in enumerate(param_names):
            for idx in fd.get(name, []):
                rows.append([i] + list(idx) + [0] * (rmax - len(idx)))
                self.fd_order.append((name, idx))
        m = len(rows)
        self.emit(f"%eps = arith.constant {eps:.17e} : {self.dtype}")
        self.emit(f"%fdtab = arith.constant dense<{rows}> : tensor<{m}x{rmax + 1}xindex>")
        self.emit(f"%fdm = arith.constant {m} : index")
        self.emit(f"%eps2 = arith.constant {2 * eps:.17e} : {self.dtype}")
        accty = TType(f"tensor<{m}x4x{self.dtype}>")
        self.emit(f"%fdinit = tensor.empty() : {accty.text}")
        self.emit(f"%fd = scf.for %it = %c0 to %fdm step %c1 iter_args(%acc = %fdinit) -> ({accty.text}) {{")
        self.emit(f"  %which = tensor.extract %fdtab[%it, %c0] : tensor<{m}x{rmax + 1}xindex>")
        ivs = []
        for d in range(rmax):
            self.emit(f"  %cd{d} = arith.constant {d + 1} : index")
            self.emit(f"  %ix{d} = tensor.extract %fdtab[%it, %cd{d}] : tensor<{m}x{rmax + 1}xindex>")
            ivs.append(f"%ix{d}")
        variants = [list(vals) for _ in range(4)]  # p+h, p-h, p+2h, p-2h
        for i, name in enumerate(param_names):
            if not fd.get(name):
                continue
            ty = self.arg_types[i]
            ix = ", ".join(ivs[:len(ty.shape)])
            self.emit(f"  %fd_ci_{i} = arith.constant {i} : index")
            self.emit(f"  %fd_hit_{i} = arith.cmpi eq, %which, %fd_ci_{i} : index")
            self.emit(f"  %fd_pp_{i}, %fd_pm_{i}, %fd_pp2_{i}, %fd_pm2_{i} = scf.if %fd_hit_{i} -> "
                      f"({ty.text}, {ty.text}, {ty.text}, {ty.text}) {{  // {name}")
            self.emit(f"    %fd_x_{i} = tensor.extract %p{i}[{ix}] : {ty.text}")
            outs = []
            for tag, op, step in (("p", "addf", "%eps"), ("m", "subf", "%eps"),
                                  ("p2", "addf", "%eps2"), ("m2", "subf", "%eps2")):
                self.emit(f"    %fd_x{tag}_{i} = arith.{op} %fd_x_{i}, {step} : {self.dtype}")
                self.emit(f"    %fd_t{tag}_{i} = tensor.insert %fd_x{tag}_{i} into %p{i}[{ix}] : {ty.text}")
                outs.append(f"%fd_t{tag}_{i}")
            self.emit(f"    scf.yield {', '.join(outs)} : {', '.join([ty.text] * 4)}")
            self.emit("  } else {")
            self.emit(f"    scf.yield {', '.join([f'%p{i}'] * 4)} : {', '.join([ty.text] * 4)}")
            self.emit("  }")
            for k, tag in enumerate(("pp", "pm", "pp2", "pm2")):
                variants[k][i] = f"%fd_{tag}_{i}"
        acc = "%acc"
        for k, args in enumerate(variants):
            r = self.call(args)
            self.lines[-1] = "  " + self.lines[-1]
            l = self.fresh("l")
            self.emit(f"  {l} = tensor.extract {r}#0[] : {self.res_types[0].text}")
            a = self.fresh("a")
            self.emit(f"  %fdc{k} = arith.constant {k} : index")
            self.emit(f"  {a} = tensor.insert {l} into {acc}[%it, %fdc{k}] : {accty.text}")
            acc = a
        self.emit(f"  scf.yield {acc} : {accty.text}")
        self.emit("}")
        self.print_tensor("%fd", accty, "fd")

    def _module(self, ir):
        fn = "printMemrefI64" if self.ibits == "i64" else "printMemrefI32"
        main = [f"  func.func private @{fn}(memref<*x{self.ibits}>) attributes {{llvm.emit_c_interface}}",
                "  func.func @main() {"] + self.lines + ["    return", "  }"]
        text = ir.rstrip()
        if re.search(r"@main\b", text) or re.search(rf"@{fn}\b", text):
            raise SignatureError("the module already defines @main or @" + fn)
        if not text.endswith("}") or not re.search(r"^module\b", text, re.M):
            raise SignatureError("expected a printed `module { ... }` (run through mlir-opt first)")
        return text[:-1] + "\n  // ---- numerics harness ----\n" + "\n".join(main) + "\n}\n"


# --------------------------------------------------------------------------
# Lowering and running.

# The upstream CPU pipeline. Kept in one place; docs/TrainingStepIR.md quotes it.
PASS_PIPELINE = [
    # Tensors to buffers, across function boundaries (@main -> @train_step);
    # identity layouts so the call signatures stay plain memrefs.
    "--one-shot-bufferize=bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map",
    # Free the temporaries; @main calls @train_step hundreds of times for the
    # finite differences.
    "--buffer-deallocation-pipeline",
    "--convert-linalg-to-loops",
    "--convert-scf-to-cf",
    # memref.expand_shape/collapse_shape/subview -> reinterpret_cast.
    "--expand-strided-metadata",
    "--lower-affine",
    "--convert-to-llvm",
    "--reconcile-unrealized-casts",
]


def run(cmd, what, stdin=None):
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr[-20000:])
        raise RuntimeError(f"{what} failed (exit {p.returncode}): {' '.join(cmd)}")
    return p.stdout


def lower_and_run(module_text, path_base, mlir_opt, mlir_runner, lib_dir, opt_level):
    src = path_base + ".mlir"
    ll = path_base + ".llvm.mlir"
    with open(src, "w") as f:
        f.write(module_text)
    run([mlir_opt, src] + PASS_PIPELINE + ["-o", ll], "mlir-opt")
    libs = ",".join(os.path.join(lib_dir, l) for l in
                    ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so"))
    cmd = [mlir_runner, ll, "-e", "main", "-entry-point-result=void", "-shared-libs=" + libs]
    if opt_level:
        cmd.append("-" + opt_level)
    return run(cmd, "mlir-runner")


def parse_prints(out, prints, dtype):
    """Splits mlir-runner output into the printed tensors, as float arrays."""
    chunks = out.split("Unranked Memref")[1:]
    if len(chunks) != len(prints):
        raise RuntimeError(f"expected {len(prints)} printed tensors, got {len(chunks)}")
    res = {}
    idt, fdt = (np.int64, np.float64) if dtype == "f64" else (np.int32, np.float32)
    for (label, shape), chunk in zip(prints, chunks):
        body = chunk.split("data =", 1)[1]
        ints = np.array([int(t) for t in re.findall(r"-?\d+", body)], dtype=idt)
        if ints.size != int(np.prod(shape)):
            raise RuntimeError(f"{label}: {ints.size} values printed, expected shape {shape}")
        res[label] = ints.view(fdt).astype(np.float64).reshape(shape)
    return res
