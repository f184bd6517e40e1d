"""Lowers a captured aten graph (capture.py) to the training-step op set.

Each aten node becomes builder calls (ir.py). Elementwise nodes are not
written one op each: they become expression trees that a single linalg.map
materializes where a non-elementwise node, a second reader or a result needs
the value (Inductor's pointwise fusion, on the graph). Broadcasting follows
PyTorch's rules: unit dimensions are collapsed away and linalg.broadcast adds
the rest.

An aten node without a rule here is refused with its name and where the
model called it; nothing is guessed.
"""

import math

from .ir import FLOAT_TYPES, Builder, Tensor


class TorchImportError(Exception):
    """A model, node or input the importer refuses; the message says where."""


# ---------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------

def broadcast_shapes(*shapes):
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        size = 1
        for s in shapes:
            d = s[i - rank + len(s)] if i - rank + len(s) >= 0 else 1
            if d != 1:
                if size not in (1, d):
                    raise ValueError(f"shapes {shapes} do not broadcast")
                size = d
        out.append(size)
    return tuple(out)


def coarsen(src, tgt):
    """The reassociation that collapses `src` into `tgt` (each target
    dimension the product of consecutive source dimensions), or None."""
    if not tgt:
        return [] if all(d == 1 for d in src) else None
    groups, i = [], 0
    for j, t in enumerate(tgt):
        group, product = [], 1
        while i < len(src):
            d = src[i]
            last = j + 1 == len(tgt)
            if group and product == t and (d != 1 or not last):
                break
            if product * d > t and not (t == 0 and d == 0):
                return None
            group.append(i)
            product *= d
            i += 1
        if not group or product != t:
            return None
        groups.append(group)
    return groups if i == len(src) else None


# ---------------------------------------------------------------------------
# Elementwise expressions
# ---------------------------------------------------------------------------

class Expr:
    """An elementwise value not yet written: an op over operand expressions,
    a leaf tensor (broadcast to the expression's shape when written) or a
    constant."""

    def __init__(self, kind, dtype, shape, operands=(), payload=None):
        self.kind = kind          # 'leaf', 'const', 'seed' or an op text
        self.dtype = dtype
        self.shape = tuple(shape)
        self.operands = list(operands)
        self.payload = payload    # the leaf's Tensor, the constant's value

    @staticmethod
    def leaf(tensor):
        return Expr("leaf", tensor.dtype, tensor.shape, payload=tensor)

    @staticmethod
    def const(value, dtype):
        return Expr("const", dtype, (), payload=value)


class Transposed:
    """A transpose not yet written: where its reader is another transpose
    the two compose (t(t(W)) is W), so only transposes some other op reads
    are written, once each, and zero-fold-transposes can fold those that a
    GEMM reads."""

    def __init__(self, source, perm, loc):
        self.source = source
        self.perm = list(perm)
        self.shape = tuple(source.shape[p] for p in perm)
        self.dtype = source.dtype
        self.loc = loc
        self.written = None


def is_float(dtype):
    return dtype in FLOAT_TYPES


class Lowering:
    """The state of one graph's lowering: values by node, and the builder."""

    def __init__(self, graph, placeholders, float_type, describe):
        self.graph = graph
        self.b = Builder()
        self.values = dict(placeholders)  # fx node -> Tensor / Expr / python
        self.float_type = float_type
        self.describe = describe           # node -> "module 'fc1', aten.mm"
        self.bounds = {}                   # data Tensor name -> class count
        self.reshaped = {}                 # reshape result name -> source
        self.reshapes = {}                 # (source name, shape) -> result
        self.broadcasts = {}               # (name, shape) -> broadcast
        self.written = {}                  # id(Expr) -> (Expr, Tensor)
        self.reductions = {}               # (name, dims, combiner) -> Tensor
        self.masks = {}                    # (rows, columns, diagonal, dtype)
        #                                    -> triangular mask
        self.one_hots = {}                 # (labels, classes, dtype) -> Tensor
        self.normalized = {}               # layer norm rstd name -> x_hat
        self.loss = None
        self.node = None                   # the node being lowered

    # -- errors --------------------------------------------------------------

    def fail(self, node, message):
        raise TorchImportError(f"{self.describe(node)}: {message}")

    # -- values --------------------------------------------------------------

    def tensor(self, value):
        """`value` written as a Tensor."""
        if isinstance(value, Tensor):
            return value
        if isinstance(value, Transposed):
            if value.written is None:
                loc, self.b.loc = self.b.loc, value.loc
                value.written = self.b.transpose(value.source, value.perm)
                self.b.loc = loc
            return value.written
        if isinstance(value, LogSoftmax):
            return self.write(value.expr(self))
        if isinstance(value, Undefined):
            raise TorchImportError(f"{self.describe(self.node)}: reads a tensor "
                               "that aten.empty left undefined")
        if isinstance(value, Expr):
            if value.kind == "leaf":
                # A leaf may stand for its tensor broadcast (expand).
                return self.expand_to(value.payload, value.shape)
            return self.write(value)
        raise TypeError(f"not a tensor: {value!r}")

    def expr(self, value, dtype=None):
        if isinstance(value, Expr):
            return value
        if isinstance(value, (Tensor, Transposed)):
            return Expr.leaf(self.tensor(value))
        if isinstance(value, LogSoftmax):
            return value.expr(self)
        if isinstance(value, (bool, int, float)):
            return Expr.const(value, dtype or self.float_type)
        raise TypeError(f"not an elementwise operand: {value!r}")

    def triangle(self, rows, columns, diagonal, dtype):
        """[rows, columns]: 1 where column - row <= diagonal (torch.tril of
        ones), written once: every layer's mask is the same."""
        key = (rows, columns, diagonal, dtype)
        if key not in self.masks:
            self.masks[key] = self.b.causal_mask(rows, columns, diagonal,
                                                 dtype)
        return self.masks[key]

    def one_hot(self, labels, classes, dtype):
        """The labels' one-hot rows, written once: the cross-entropy's
        forward and backward read the same (as zero-model's step does)."""
        key = (labels.name, classes, dtype)
        if key not in self.one_hots:
            self.one_hots[key] = self.b.one_hot(labels, classes, dtype)
        return self.one_hots[key]

    def transpose(self, x, perm):
        """`x` with its dimensions permuted, written where read."""
        if isinstance(x, Transposed):
            perm = [x.perm[p] for p in perm]
            x = x.source
        else:
            x = self.tensor(x)
        if perm == sorted(perm):
            return x
        return Transposed(x, perm, self.b.loc)

    def expand_to(self, x, shape):
        """`x` broadcast to `shape` by PyTorch's rules, written once per
        tensor and shape for the node being lowered (a broadcast kept for
        a later node would keep its bytes live until then; writing it again
        costs less)."""
        shape = tuple(shape)
        if x.shape == shape:
            return x
        key = (x.name, shape)
        if key not in self.broadcasts:
            self.broadcasts[key] = self._expand_to(x, shape)
        return self.broadcasts[key]

    def _expand_to(self, x, shape):
        offset = len(shape) - len(x.shape)
        kept = [i for i, d in enumerate(x.shape) if d == shape[i + offset]]
        if len(kept) != len(x.shape):
            x = self.reshape(x, [x.shape[i] for i in kept])
        added = [d for d in range(len(shape))
                 if d - offset not in kept or d < offset]
        return self.b.broadcast(x, shape, added)

    def reshape(self, x, shape):
        shape = tuple(shape)
        # A reshape of a reshape starts from the first one's source.
        x = self.reshaped.get(x.name, x)
        if x.shape == shape:
            return x
        # A view: the same reshape of the same tensor is written once.
        key = (x.name, shape)
        if key not in self.reshapes:
            out = self._reshape(x, shape)
            self.reshaped[out.name] = x
            self.reshapes[key] = out
        return self.reshapes[key]

    def _reshape(self, x, shape):
        groups = coarsen(x.shape, shape)
        if groups is not None:
            return self.b.reshape(x, shape, groups, collapse=True)
        groups = coarsen(shape, x.shape)
        if groups is not None:
            return self.b.reshape(x, shape, groups, collapse=False)
        flat = self._reshape(x, (x.numel,))
        return self._reshape(flat, shape)

    def write(self, root):
        """Writes expression `root` as one linalg.map (once: a second
        reader gets the same tensor)."""
        if id(root) not in self.written:
            self.written[id(root)] = (root, self._write(root))
        return self.written[id(root)][1]

    def _write(self, root):
        leaves = []
        def collect(e):
            if e.kind == "leaf":
                if all(l is not e.payload for l in leaves):
                    leaves.append(e.payload)
            for o in e.operands:
                collect(o)
        collect(root)
        if not leaves:
            if root.kind in ("const", "seed"):
                return self.b.fill(self.fold(root), root.shape, root.dtype)
            # Ops on constants only (exp of a filled tensor): the first
            # constant becomes a filled tensor, the map's one input.
            return self._write(self._with_filled_constant(root))
        inputs = [self.expand_to(t, root.shape) for t in leaves]

        def body(region, args):
            names = {id(t): a for t, a in zip(leaves, args)}
            written = {}
            def emit(e):
                if id(e) in written:
                    return written[id(e)]
                if e.kind == "leaf":
                    value = names[id(e.payload)]
                elif e.kind == "const":
                    value = region.constant(e.payload, e.dtype)
                elif e.kind == "seed":
                    value = region.constant(1.0, e.dtype, seed=True)
                else:
                    operands = [emit(o) for o in e.operands]
                    value = region.op(e.kind.format(
                        *operands, t=e.operands[0].dtype, r=e.dtype))
                written[id(e)] = value
                return value
            return emit(root)
        return self.b.map(inputs, root.shape, root.dtype, body)

    def _with_filled_constant(self, root):
        done = []

        def rebuild(e):
            if e.kind in ("const", "seed") and not done:
                done.append(e)
                return Expr.leaf(self.b.fill(self.fold(e), root.shape,
                                             e.dtype))
            if not e.operands:
                return e
            return Expr(e.kind, e.dtype, e.shape,
                        [rebuild(o) for o in e.operands], e.payload)
        return rebuild(root)

    def fold(self, e):
        if e.kind in ("const", "seed"):
            return 1.0 if e.kind == "seed" else e.payload
        raise TypeError("only constants fold")

    # -- elementwise builders ------------------------------------------------

    def pointwise(self, text, operands, dtype=None):
        operands = list(operands)
        shape = broadcast_shapes(*(o.shape for o in operands))
        return Expr(text, dtype or operands[0].dtype, shape, operands)

    def promote(self, ea, eb):
        """PyTorch's type promotion of two tensor operands: an integer one
        converts to the other's float type, the narrower float to the
        wider."""
        if (ea.kind == "const") != (eb.kind == "const"):
            # A Python scalar: a float one makes a bool or integer tensor
            # the default float type, an int one a bool tensor an integer.
            tensor, scalar = (ea, eb) if eb.kind == "const" else (eb, ea)
            target = None
            if type(scalar.payload) is float and is_float(scalar.dtype) \
                    and not is_float(tensor.dtype):
                target = self.float_type
            elif type(scalar.payload) is int and tensor.dtype == "i1":
                target = "i32"
            if target is not None:
                converted = self.convert(tensor, target)
                return (converted, eb) if tensor is ea else (ea, converted)
        if ea.kind not in ("const",) and eb.kind not in ("const",):
            if is_float(ea.dtype) and not is_float(eb.dtype):
                eb = self.convert(eb, ea.dtype)
            elif is_float(eb.dtype) and not is_float(ea.dtype):
                ea = self.convert(ea, eb.dtype)
            elif is_float(ea.dtype) and ea.dtype != eb.dtype:
                wider = max(ea.dtype, eb.dtype, key=FLOAT_TYPES.index)
                ea, eb = self.convert(ea, wider), self.convert(eb, wider)
        return ea, eb

    def binary(self, a, b, float_op, int_op=None):
        ea, eb = self.promote(self.expr(a), self.expr(b))
        dtype = ea.dtype if ea.kind not in ("const",) else eb.dtype
        if eb.kind == "const" and ea.kind != "const":
            eb = Expr.const(eb.payload, ea.dtype)
        if ea.kind == "const" and eb.kind != "const":
            ea = Expr.const(ea.payload, eb.dtype)
        op = float_op if is_float(dtype) else int_op
        return self.pointwise(f"{op} {{0}}, {{1}} : {{r}}", [ea, eb], dtype)

    def unary(self, x, op):
        e = self.expr(x)
        return self.pointwise(f"{op} {{0}} : {{r}}", [e])

    def compare(self, a, b, predicate):
        ea, eb = self.promote(self.expr(a), self.expr(b))
        if eb.kind == "const":
            eb = Expr.const(eb.payload, ea.dtype)
        if ea.kind == "const":
            ea = Expr.const(ea.payload, eb.dtype)
        if is_float(ea.dtype):
            return self.pointwise(f"arith.cmpf {predicate}, {{0}}, {{1}} : {{t}}",
                                  [ea, eb], "i1")
        ipred = {"oeq": "eq", "une": "ne", "olt": "slt", "ole": "sle",
                 "ogt": "sgt", "oge": "sge"}[predicate]
        return self.pointwise(f"arith.cmpi {ipred}, {{0}}, {{1}} : {{t}}",
                              [ea, eb], "i1")

    def select(self, cond, a, b):
        ec, ea, eb = self.expr(cond, "i1"), self.expr(a), self.expr(b)
        dtype = ea.dtype if ea.kind != "const" else eb.dtype
        # A filled tensor (torch.full) keeps its shape: the select's result
        # has it even where the condition is smaller.
        if ea.kind == "const":
            ea = Expr("const", dtype, ea.shape, payload=ea.payload)
        if eb.kind == "const":
            eb = Expr("const", dtype, eb.shape, payload=eb.payload)
        return self.pointwise("arith.select {0}, {1}, {2} : {r}", [ec, ea, eb],
                              dtype)

    def convert(self, x, dtype):
        e = self.expr(x)
        if e.dtype == dtype:
            return e
        if is_float(e.dtype) and is_float(dtype):
            wider = FLOAT_TYPES.index(dtype) > FLOAT_TYPES.index(e.dtype)
            op = "arith.extf" if wider else "arith.truncf"
        elif e.dtype == "i1" and is_float(dtype):
            op = "arith.uitofp"
        elif is_float(dtype):
            op = "arith.sitofp"
        else:
            raise TypeError(f"no conversion from {e.dtype} to {dtype}")
        return self.pointwise(f"{op} {{0}} : {{t}} to {{r}}", [e], dtype)


def reduce_sum(lw, x, dims, keepdim, combiner="arith.addf"):
    """Reduces `dims` of `x`; a reduction the graph repeats (the mean a
    variance recomputes) is written once: its result is small."""
    x = lw.tensor(x)
    rank = len(x.shape)
    dims = sorted({d % rank for d in dims}) if rank else []
    key = (x.name, tuple(dims), combiner)
    if key not in lw.reductions:
        lw.reductions[key] = lw.b.reduce(x, dims, combiner) if dims else x
    out = lw.reductions[key]
    if keepdim:
        shape = [1 if i in dims else d for i, d in enumerate(x.shape)]
        out = lw.reshape(out, shape)
    return out


# ---------------------------------------------------------------------------
# aten rules: (lowering, node, args, kwargs) -> value
# ---------------------------------------------------------------------------

RULES = {}


def rule(*names):
    def register(fn):
        for name in names:
            RULES[name] = fn
        return fn
    return register


@rule("aten.detach.default", "aten.clone.default")
def _identity(lw, node, args, kwargs):
    return args[0]


@rule("aten.t.default")
def _t(lw, node, args, kwargs):
    x = args[0]
    if len(x.shape) < 2:
        return x
    return lw.transpose(x, [1, 0])


@rule("aten.transpose.int")
def _transpose(lw, node, args, kwargs):
    x = args[0]
    rank = len(x.shape)
    a, b = args[1] % rank, args[2] % rank
    if a == b:
        return x
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return lw.transpose(x, perm)


@rule("aten.permute.default")
def _permute(lw, node, args, kwargs):
    x = args[0]
    return lw.transpose(x, [d % len(x.shape) for d in args[1]])


@rule("aten.view.default", "aten._unsafe_view.default")
def _view(lw, node, args, kwargs):
    x = lw.tensor(args[0])
    shape = list(args[1])
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        shape[shape.index(-1)] = x.numel // known if known else 0
    return lw.reshape(x, shape)


@rule("aten._reshape_alias.default")
def _reshape_alias(lw, node, args, kwargs):
    # What aten.reshape becomes where a view will do: the strides place the
    # view in the input's storage, the values are the logical reshape's.
    return lw.reshape(lw.tensor(args[0]), list(args[1]))


@rule("aten.slice.Tensor")
def _slice(lw, node, args, kwargs):
    x = lw.tensor(args[0])
    rank = len(x.shape)
    dim = (args[1] if len(args) > 1 else 0) % rank
    size = x.shape[dim]
    start = args[2] if len(args) > 2 and args[2] is not None else 0
    end = args[3] if len(args) > 3 and args[3] is not None else size
    step = args[4] if len(args) > 4 else 1
    if step != 1:
        lw.fail(node, f"a slice with step {step} is not supported")
    start = min(max(start + size if start < 0 else start, 0), size)
    end = min(max(end + size if end < 0 else end, start), size)
    if (start, end) == (0, size):
        return x
    offsets = [0] * rank
    offsets[dim] = start
    sizes = list(x.shape)
    sizes[dim] = end - start
    return lw.b.extract_slice(x, offsets, sizes)


@rule("aten.select.int")
def _select(lw, node, args, kwargs):
    x = lw.tensor(args[0])
    dim = args[1] % len(x.shape)
    index = args[2] % x.shape[dim]
    offsets = [0] * len(x.shape)
    offsets[dim] = index
    sizes = list(x.shape)
    sizes[dim] = 1
    picked = lw.b.extract_slice(x, offsets, sizes)
    return lw.reshape(picked, x.shape[:dim] + x.shape[dim + 1:])


@rule("aten.select_backward.default")
def _select_backward(lw, node, args, kwargs):
    grad, sizes, dim, index = args[:4]
    grad = lw.tensor(grad)
    dim %= len(sizes)
    offsets = [0] * len(sizes)
    offsets[dim] = index % sizes[dim]
    unit = list(sizes)
    unit[dim] = 1
    zeros = lw.b.fill(0.0, list(sizes), grad.dtype)
    return lw.b.insert_slice(lw.reshape(grad, unit), zeros, offsets)


@rule("aten.slice_backward.default")
def _slice_backward(lw, node, args, kwargs):
    grad, sizes, dim, start, end, step = args[:6]
    grad = lw.tensor(grad)
    dim %= len(sizes)
    if step != 1:
        lw.fail(node, f"a slice with step {step} is not supported")
    start = min(max(start + sizes[dim] if start < 0 else start, 0),
                sizes[dim])
    if list(grad.shape) == list(sizes):
        return grad
    offsets = [0] * len(sizes)
    offsets[dim] = start
    zeros = lw.b.fill(0.0, list(sizes), grad.dtype)
    return lw.b.insert_slice(grad, zeros, offsets)


@rule("aten.split.Tensor", "aten.split_with_sizes.default")
def _split(lw, node, args, kwargs):
    x = lw.tensor(args[0])
    dim = (args[2] if len(args) > 2 else kwargs.get("dim", 0)) % len(x.shape)
    size = x.shape[dim]
    if isinstance(args[1], int):
        sizes = [min(args[1], size - s) for s in range(0, size, args[1])]
    else:
        sizes = list(args[1])
    parts, offset = [], 0
    for n in sizes:
        offsets = [0] * len(x.shape)
        offsets[dim] = offset
        shape = list(x.shape)
        shape[dim] = n
        parts.append(x if n == size else
                     lw.b.extract_slice(x, offsets, shape))
        offset += n
    return parts


@rule("aten.cat.default")
def _cat(lw, node, args, kwargs):
    parts = [lw.tensor(t) for t in args[0]]
    dim = (args[1] if len(args) > 1 else kwargs.get("dim", 0)) % len(
        parts[0].shape)
    shape = list(parts[0].shape)
    shape[dim] = sum(t.shape[dim] for t in parts)
    # The parts cover the destination: its initial contents are never read.
    out = lw.b.empty(shape, parts[0].dtype)
    offset = 0
    for t in parts:
        offsets = [0] * len(shape)
        offsets[dim] = offset
        out = lw.b.insert_slice(t, out, offsets)
        offset += t.shape[dim]
    return out


class Arange:
    """aten.arange(n): kept symbolic, since its uses are positions that an
    embedding reads as a slice of its table."""

    def __init__(self, size):
        self.size = size
        self.shape = (size,)
        self.dtype = "i32"


@rule("aten.arange.default")
def _arange(lw, node, args, kwargs):
    return Arange(args[0])


def _flat_indices(lw, indices):
    indices = lw.tensor(indices)
    return lw.reshape(indices, (indices.numel,))


@rule("aten.embedding.default")
def _embedding(lw, node, args, kwargs):
    table, indices = lw.tensor(args[0]), args[1]
    if isinstance(indices, Arange):
        # Positions 0..n-1: the table's first n rows.
        if indices.size == table.shape[0]:
            return table
        return lw.b.extract_slice(table, [0, 0], [indices.size,
                                                  table.shape[1]])
    _note_bound(lw, node, lw.tensor(indices), table.shape[0])
    rows = lw.b.gather_rows(table, _flat_indices(lw, indices))
    return lw.reshape(rows, tuple(indices.shape) + (table.shape[1],))


@rule("aten.embedding_dense_backward.default")
def _embedding_backward(lw, node, args, kwargs):
    grad, indices, num_weights, padding_idx, scale = args[:5]
    if scale:
        lw.fail(node, "embedding with scale_grad_by_freq is not supported")
    grad = lw.tensor(grad)
    hidden = grad.shape[-1]
    if isinstance(indices, Arange):
        rows = lw.reshape(grad, (indices.size, hidden))
        if indices.size == num_weights:
            return rows
        zeros = lw.b.fill(0.0, [num_weights, hidden], grad.dtype)
        return lw.b.insert_slice(rows, zeros, [0, 0])
    if padding_idx is not None and padding_idx >= 0:
        lw.fail(node, "embedding with a padding_idx is not supported")
    flat = _flat_indices(lw, indices)
    grad = lw.reshape(grad, (flat.shape[0], hidden))
    # The scatter-add as a matmul: onehot(indices)^T grad.
    one_hot = lw.b.one_hot(flat, num_weights, grad.dtype, transposed=True)
    zeros = lw.b.fill(0.0, [num_weights, hidden], grad.dtype)
    return lw.b.matmul(one_hot, grad, zeros)


@rule("aten.unsqueeze.default")
def _unsqueeze(lw, node, args, kwargs):
    x = lw.tensor(args[0])
    dim = args[1] % (len(x.shape) + 1)
    return lw.reshape(x, x.shape[:dim] + (1,) + x.shape[dim:])


@rule("aten.squeeze.dim")
def _squeeze(lw, node, args, kwargs):
    x = lw.tensor(args[0])
    dim = args[1] % max(len(x.shape), 1)
    if not x.shape or x.shape[dim] != 1:
        return x
    return lw.reshape(x, x.shape[:dim] + x.shape[dim + 1:])


def broadcast_lazily(lw, value, shape):
    """`value` broadcast to `shape` by PyTorch's rules, written only where a
    non-elementwise op reads it: an elementwise reader's map broadcasts its
    leaves itself."""
    if isinstance(value, Expr) and value.kind in ("const", "seed"):
        return Expr(value.kind, value.dtype, shape, payload=value.payload)
    tensor = lw.tensor(value)
    return Expr("leaf", tensor.dtype, shape, payload=tensor)


@rule("aten.expand.default")
def _expand(lw, node, args, kwargs):
    value = args[0]
    shape = list(args[1])
    rank = len(value.shape)
    for i, d in enumerate(shape):
        if d == -1:
            shape[i] = value.shape[i - len(shape) + rank]
    return broadcast_lazily(lw, value, shape)


@rule("prims.broadcast_in_dim.default")
def _broadcast_in_dim(lw, node, args, kwargs):
    value, shape, dims = args[0], list(args[1]), list(args[2])
    units = [value.shape[dims.index(d)] if d in dims else 1
             for d in range(len(shape))]
    if isinstance(value, Expr) and value.kind in ("const", "seed"):
        return broadcast_lazily(lw, value, shape)
    return broadcast_lazily(lw, lw.reshape(lw.tensor(value), units), shape)


@rule("aten.mm.default", "aten.bmm.default")
def _mm(lw, node, args, kwargs):
    a, b = lw.tensor(args[0]), lw.tensor(args[1])
    shape = a.shape[:-1] + b.shape[-1:]
    return lw.b.matmul(a, b, lw.b.fill(0.0, shape, a.dtype))


@rule("aten.addmm.default", "aten.baddbmm.default")
def _addmm(lw, node, args, kwargs):
    """beta input + alpha (a b), batched or not. With alpha 1 it is one
    GEMM accumulating into the broadcast input (y = x W + b; 2.x's
    nn.MultiheadAttention adds its mask so); beta 0 ignores the input, as
    PyTorch does (a NaN there does not propagate)."""
    beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
    a, b = lw.tensor(args[1]), lw.tensor(args[2])
    shape = tuple(a.shape[:-1]) + tuple(b.shape[-1:])
    bias = None if beta == 0 else args[0] if beta == 1 else \
        lw.binary(args[0], beta, "arith.mulf")
    if alpha == 1:
        init = lw.b.fill(0.0, shape, a.dtype) if bias is None else \
            lw.expand_to(lw.tensor(bias), shape)
        return lw.b.matmul(a, b, init)
    product = lw.binary(lw.b.matmul(a, b, lw.b.fill(0.0, shape, a.dtype)),
                        alpha, "arith.mulf")
    return product if bias is None else lw.binary(bias, product,
                                                  "arith.addf")


@rule("aten.sum.dim_IntList")
def _sum(lw, node, args, kwargs):
    keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    if kwargs.get("dtype") is not None:
        lw.fail(node, "aten.sum with a dtype is not supported")
    return reduce_sum(lw, args[0], args[1], keepdim)


@rule("prims.sum.default")
def _prims_sum(lw, node, args, kwargs):
    return reduce_sum(lw, args[0], args[1], False)


@rule("aten.sum.default")
def _sum_all(lw, node, args, kwargs):
    x = lw.tensor(args[0])
    return reduce_sum(lw, x, range(len(x.shape)), False)


@rule("aten.amax.default")
def _amax(lw, node, args, kwargs):
    keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    return reduce_sum(lw, args[0], args[1], keepdim, "arith.maximumf")


@rule("aten.all.dim", "aten.any.dim")
def _all_any(lw, node, args, kwargs):
    """Over a mask: any(m) is max(m as float) > 0, all(m) is max(not m as
    float) == 0, reductions the op set has (2.x's _safe_softmax asks
    whether a row is all -inf)."""
    m = lw.expr(args[0])
    if m.dtype != "i1":
        lw.fail(node, f"{node.target} of {m.dtype} data is not supported "
                      "(only of masks)")
    dim = args[1] if len(args) > 1 else kwargs["dim"]
    keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    every = str(node.target).startswith("aten.all")
    if every:
        m = _not(lw, node, [m], {})
    flags = lw.tensor(lw.convert(m, lw.float_type))
    dims = [dim % len(flags.shape)]
    largest = reduce_sum(lw, flags, dims, keepdim, "arith.maximumf")
    return lw.compare(largest, 0.5, "olt" if every else "ogt")


def _scaled(lw, value, alpha):
    return value if alpha == 1 else lw.binary(value, alpha, "arith.mulf",
                                               "arith.muli")


@rule("aten.add.Tensor", "aten.add.Scalar")
def _add(lw, node, args, kwargs):
    return lw.binary(args[0], _scaled(lw, args[1], kwargs.get("alpha", 1)),
                     "arith.addf", "arith.addi")


@rule("aten.sub.Tensor", "aten.sub.Scalar")
def _sub(lw, node, args, kwargs):
    return lw.binary(args[0], _scaled(lw, args[1], kwargs.get("alpha", 1)),
                     "arith.subf", "arith.subi")


@rule("aten.mul.Tensor", "aten.mul.Scalar")
def _mul(lw, node, args, kwargs):
    return lw.binary(args[0], args[1], "arith.mulf", "arith.muli")


@rule("aten.div.Tensor", "aten.div.Scalar", "prims.div.default")
def _div(lw, node, args, kwargs):
    return lw.binary(args[0], args[1], "arith.divf")


@rule("aten.maximum.default")
def _maximum(lw, node, args, kwargs):
    return lw.binary(args[0], args[1], "arith.maximumf")


@rule("aten.minimum.default")
def _minimum(lw, node, args, kwargs):
    return lw.binary(args[0], args[1], "arith.minimumf")


for _name, _op in [("neg", "arith.negf"), ("exp", "math.exp"),
                   ("log", "math.log"), ("tanh", "math.tanh"),
                   ("rsqrt", "math.rsqrt"), ("sqrt", "math.sqrt"),
                   ("erf", "math.erf"), ("abs", "math.absf"),
                   ("sin", "math.sin"), ("cos", "math.cos"),
                   ("log1p", "math.log1p")]:
    RULES[f"aten.{_name}.default"] = (
        lambda op: lambda lw, node, args, kwargs: lw.unary(args[0], op))(_op)


@rule("aten.reciprocal.default")
def _reciprocal(lw, node, args, kwargs):
    return lw.binary(1.0, args[0], "arith.divf")


@rule("aten.relu.default")
def _relu(lw, node, args, kwargs):
    return lw.binary(args[0], 0.0, "arith.maximumf")


@rule("aten.sigmoid.default")
def _sigmoid(lw, node, args, kwargs):
    e = lw.unary(lw.unary(args[0], "arith.negf"), "math.exp")
    return lw.binary(1.0, lw.binary(1.0, e, "arith.addf"), "arith.divf")


@rule("aten.pow.Tensor_Scalar")
def _pow(lw, node, args, kwargs):
    exponent = args[1]
    if exponent == 2:
        x = lw.expr(args[0])
        return lw.binary(x, x, "arith.mulf")
    if exponent == 1:
        return args[0]
    return lw.binary(args[0], float(exponent), "math.powf")


for _name, _pred in [("gt", "ogt"), ("lt", "olt"), ("ge", "oge"),
                     ("le", "ole"), ("eq", "oeq"), ("ne", "une")]:
    for _kind in ("Scalar", "Tensor"):
        RULES[f"aten.{_name}.{_kind}"] = (
            lambda p: lambda lw, node, args, kwargs:
            lw.compare(args[0], args[1], p))(_pred)


@rule("aten.bitwise_not.default", "aten.logical_not.default")
def _not(lw, node, args, kwargs):
    e = lw.expr(args[0])
    if e.dtype != "i1":
        lw.fail(node, f"bitwise not of {e.dtype} data is not supported")
    return lw.pointwise("arith.xori {0}, {1} : i1",
                        [e, Expr.const(True, "i1")], "i1")


@rule("aten.bitwise_and.Tensor")
def _and(lw, node, args, kwargs):
    a, b = lw.expr(args[0]), lw.expr(args[1])
    if a.dtype != "i1" or b.dtype != "i1":
        lw.fail(node, f"bitwise and of {a.dtype} and {b.dtype} data is not "
                      "supported (only of masks)")
    return lw.pointwise("arith.andi {0}, {1} : i1", [a, b], "i1")


@rule("aten.where.self")
def _where(lw, node, args, kwargs):
    return lw.select(args[0], args[1], args[2])


@rule("aten.masked_fill.Scalar")
def _masked_fill(lw, node, args, kwargs):
    return lw.select(args[1], args[2], args[0])


@rule("aten._to_copy.default")
def _to_copy(lw, node, args, kwargs):
    dtype = torch_dtype_name(kwargs.get("dtype"), lw.float_type)
    return lw.convert(args[0], dtype)


@rule("prims.convert_element_type.default")
def _convert_element_type(lw, node, args, kwargs):
    return lw.convert(args[0], torch_dtype_name(args[1], lw.float_type))


@rule("aten.ones_like.default", "aten.zeros_like.default",
      "aten.full_like.default")
def _full_like(lw, node, args, kwargs):
    target = str(node.target)
    x = args[0]
    dtype = torch_dtype_name(kwargs.get("dtype"), x.dtype)
    if target.startswith("aten.ones_like") and x is lw.loss:
        # d loss / d loss: the backward pass's seed (docs/TrainingStepIR.md).
        return Expr("seed", dtype, x.shape)
    value = {"aten.ones_like.default": 1.0,
             "aten.zeros_like.default": 0.0}.get(target)
    if value is None:
        value = args[1]
    return Expr("const", dtype, x.shape, payload=value)


FILL_VALUES = {"zeros": 0.0, "ones": 1.0}


@rule("aten.new_zeros.default", "aten.zeros.default",
      "aten.new_ones.default", "aten.ones.default",
      "aten.new_full.default", "aten.full.default")
def _filled(lw, node, args, kwargs):
    op = str(node.target).split(".")[1]
    method = op.startswith("new_")
    if method:
        op = op[len("new_"):]
    shape = args[1] if method else args[0]
    operands = args[2:] if method else args[1:]
    value = FILL_VALUES[op] if op in FILL_VALUES else operands[0]
    # torch.full infers its type from the value (bool, int64, float).
    default = args[0].dtype if method else (
        "i1" if isinstance(value, bool) else
        "i32" if isinstance(value, int) else lw.float_type)
    try:
        dtype = torch_dtype_name(kwargs.get("dtype"), default)
    except TorchImportError:
        return Undefined(shape)  # a type the step has no use for: unread
    return Expr("const", dtype, shape, payload=value)


@rule("aten.tril.default", "aten.triu.default")
def _triangle(lw, node, args, kwargs):
    """torch.tril keeps the elements where column - row <= diagonal,
    torch.triu those where column - row >= diagonal: the complement of
    tril's with diagonal - 1. Both select through one mask, whether they
    build a causal mask from torch.ones or torch.full or mask a
    gradient."""
    x = args[0]
    diagonal = args[1] if len(args) > 1 else kwargs.get("diagonal", 0)
    lower = str(node.target).startswith("aten.tril")
    rows, columns = x.shape[-2:]
    mask = lw.triangle(rows, columns, diagonal if lower else diagonal - 1,
                       "i1")
    zero = Expr("const", x.dtype, x.shape,
                payload=False if x.dtype == "i1" else 0.0)
    return lw.select(mask, x, zero) if lower else lw.select(mask, zero, x)


@rule("aten.empty.memory_format")
def _empty(lw, node, args, kwargs):
    # Decompositions allocate outputs they return unread (BatchNorm's saved
    # statistics in eval mode); a reader would see undefined values, as in
    # PyTorch.
    return Undefined(args[0])


class Undefined:
    """aten.empty's result, which no op may read."""

    def __init__(self, shape):
        self.shape = tuple(shape)
        self.dtype = None


@rule("aten.scalar_tensor.default")
def _scalar_tensor(lw, node, args, kwargs):
    dtype = torch_dtype_name(kwargs.get("dtype"), lw.float_type)
    return Expr.const(args[0], dtype)


class LogSoftmax:
    """log_softmax(x) over the last dimension, kept as its parts: the row
    maximum m, e = exp(x - m) and its row sum s; log p = x - m - log s.
    The cross-entropy reads these, never a written [N, C] log p (the
    gradient is e / s - onehot)."""

    def __init__(self, lw, x):
        self.x = lw.tensor(x)
        self.shape, self.dtype = self.x.shape, self.x.dtype
        last = len(self.shape) - 1
        self.rowmax = lw.reshape(reduce_sum(lw, self.x, [last], False,
                                            "arith.maximumf"),
                                 self.shape[:-1] + (1,))
        self.e = lw.tensor(lw.unary(lw.binary(self.x, self.rowmax,
                                              "arith.subf"), "math.exp"))
        self.rowsum = lw.reshape(reduce_sum(lw, self.e, [last], False),
                                 self.shape[:-1] + (1,))

    def expr(self, lw):
        shifted = lw.binary(self.x, self.rowmax, "arith.subf")
        return lw.binary(shifted, lw.unary(self.rowsum, "math.log"),
                         "arith.subf")


@rule("aten._log_softmax.default")
def _log_softmax(lw, node, args, kwargs):
    x, dim = args[0], args[1]
    if dim % len(x.shape) != len(x.shape) - 1:
        lw.fail(node, "log_softmax over a dimension other than the last is "
                      "not supported")
    return LogSoftmax(lw, x)


@rule("aten._log_softmax_backward_data.default")
def _log_softmax_backward(lw, node, args, kwargs):
    grad, output = args[0], args[1]
    softmax = lw.binary(output.e, output.rowsum, "arith.divf")
    # grad - softmax * rowsum(grad); the cross-entropy's gradient sums to
    # -g / N over each row exactly (one nonzero), so no reduction reads it.
    total = getattr(grad, "row_sum", None)
    if total is None:
        last = len(output.shape) - 1
        total = lw.reshape(reduce_sum(lw, grad, [last], False),
                           output.shape[:-1] + (1,))
    return lw.binary(grad, lw.binary(softmax, total, "arith.mulf"),
                     "arith.subf")


@rule("aten.native_layer_norm.default")
def _layer_norm(lw, node, args, kwargs):
    """(x - mean) * rstd * w + b over the last dimension, as PyTorch's
    decomposition computes it (mean = sum / n, var = sum((x - mean)^2) / n,
    rstd = rsqrt(var + eps)), with x_hat written once: the backward pass
    reads it (zero-model's layer norm)."""
    x, shape, weight, bias, eps = args[:5]
    x = lw.tensor(x)
    if len(shape) != 1 or shape[0] != x.shape[-1]:
        lw.fail(node, f"layer norm over {list(shape)} of a tensor of shape "
                      f"{list(x.shape)}: only the last dimension is "
                      "supported")
    last, n = len(x.shape) - 1, float(x.shape[-1])
    rows = x.shape[:-1] + (1,)
    mean = lw.reshape(lw.tensor(lw.binary(reduce_sum(lw, x, [last], False),
                                          n, "arith.divf")), rows)
    centered = lw.tensor(lw.binary(x, mean, "arith.subf"))
    var = lw.binary(reduce_sum(lw, lw.tensor(lw.binary(
        centered, centered, "arith.mulf")), [last], False), n, "arith.divf")
    rstd = lw.reshape(lw.tensor(lw.unary(lw.binary(var, float(eps),
                                                   "arith.addf"),
                                         "math.rsqrt")), rows)
    x_hat = lw.tensor(lw.binary(centered, rstd, "arith.mulf"))
    lw.normalized[rstd.name] = x_hat
    out = Expr.leaf(x_hat)
    if weight is not None:
        out = lw.binary(out, weight, "arith.mulf")
    if bias is not None:
        out = lw.binary(out, bias, "arith.addf")
    return (out, mean, rstd)


@rule("aten.native_layer_norm_backward.default")
def _layer_norm_backward(lw, node, args, kwargs):
    """dx = rstd * (g - mean(g) - x_hat * mean(g * x_hat)) with
    g = dy * w, dw = colsum(dy * x_hat), db = colsum(dy)."""
    grad, x, shape, mean, rstd, weight, bias, mask = args[:8]
    grad = lw.tensor(grad)
    last, n = len(grad.shape) - 1, float(grad.shape[-1])
    rows = grad.shape[:-1] + (1,)
    x_hat = lw.normalized.get(getattr(rstd, "name", None))
    if x_hat is None:
        lw.fail(node, "importer bug: a layer norm's backward without its "
                      "forward")
    g = lw.tensor(lw.binary(grad, weight, "arith.mulf")) \
        if weight is not None else grad
    mean_g = lw.binary(lw.reshape(reduce_sum(lw, g, [last], False), rows),
                       n, "arith.divf")
    mean_gx = lw.binary(lw.reshape(reduce_sum(lw, lw.tensor(lw.binary(
        g, x_hat, "arith.mulf")), [last], False), rows), n, "arith.divf")
    inner = lw.binary(lw.binary(g, mean_g, "arith.subf"),
                      lw.binary(x_hat, mean_gx, "arith.mulf"), "arith.subf")
    dx = lw.binary(rstd, inner, "arith.mulf") if mask[0] else None
    outer = list(range(last))
    dw = reduce_sum(lw, lw.tensor(lw.binary(grad, x_hat, "arith.mulf")),
                    outer, False) if mask[1] and weight is not None else None
    db = reduce_sum(lw, grad, outer, False) \
        if mask[2] and bias is not None else None
    return (dx, dw, db)


@rule("aten.nll_loss_forward.default")
def _nll_loss_forward(lw, node, args, kwargs):
    logp, target, weight, reduction, ignore = args[:5]
    _check_nll(lw, node, logp, weight, reduction)
    rows, classes = logp.shape
    target = lw.tensor(target)
    _note_bound(lw, node, target, classes)
    one_hot = lw.one_hot(target, classes, logp.dtype)
    if isinstance(logp, LogSoftmax):
        # Each row's log p at its label, (x[t] - m) - log s, computed per
        # row as PyTorch computes it per element: one exp per element
        # (in e), one log per row.
        x_at = lw.reshape(reduce_sum(
            lw, lw.binary(Expr.leaf(one_hot), logp.x, "arith.mulf"), [1],
            False), (rows, 1))
        picked = lw.tensor(lw.binary(
            lw.binary(x_at, logp.rowmax, "arith.subf"),
            lw.unary(logp.rowsum, "math.log"), "arith.subf"))
    else:
        picked = lw.write(lw.binary(Expr.leaf(one_hot), lw.expr(logp),
                                    "arith.mulf"))
    total = reduce_sum(lw, picked, range(len(picked.shape)), False)
    loss = lw.binary(lw.unary(total, "arith.negf"), float(rows), "arith.divf")
    return (loss, Expr.const(float(rows), logp.dtype))


@rule("aten.nll_loss_backward.default")
def _nll_loss_backward(lw, node, args, kwargs):
    grad, logp, target, weight, reduction, ignore, _ = args[:7]
    _check_nll(lw, node, logp, weight, reduction)
    target = lw.tensor(target)
    rows, classes = logp.shape
    one_hot = lw.one_hot(target, classes, logp.dtype)
    # -onehot * grad / N, the seed (or any 0-d gradient) kept in the map.
    scaled = lw.binary(lw.expr(grad), float(rows), "arith.divf")
    result = lw.unary(lw.binary(Expr.leaf(one_hot), scaled, "arith.mulf"),
                      "arith.negf")
    # Each row holds one nonzero: its sum is exactly that entry's value.
    result.row_sum = lw.unary(scaled, "arith.negf")
    return result


def _check_nll(lw, node, logp, weight, reduction):
    if weight is not None:
        lw.fail(node, "nll_loss with class weights is not supported")
    if reduction != 1:
        lw.fail(node, "nll_loss with a reduction other than 'mean' is not "
                      "supported (the loss is the mean over the batch)")
    if len(logp.shape) != 2:
        lw.fail(node, f"nll_loss over a tensor of shape {list(logp.shape)}; "
                      "expected [N, C] (flatten the batch dimensions first)")


def _note_bound(lw, node, target, classes):
    """Records that `target`'s values lie in [0, classes): a data
    argument's bound, where `target` is one (or a reshape of one)."""
    target = lw.reshaped.get(target.name, target)
    previous = lw.bounds.get(target.name)
    if previous is not None and previous != classes:
        lw.fail(node, f"the targets index {classes} classes here but "
                      f"{previous} elsewhere")
    lw.bounds[target.name] = classes


def torch_dtype_name(dtype, default):
    if dtype is None:
        return default
    import torch
    names = {torch.float32: "f32", torch.float64: "f64",
             torch.bfloat16: "bf16", torch.float16: "f16",
             torch.int32: "i32", torch.int64: "i32", torch.bool: "i1"}
    if dtype not in names:
        raise TorchImportError(f"tensors of {dtype} are not supported")
    return names[dtype]


# ---------------------------------------------------------------------------
# The graph
# ---------------------------------------------------------------------------

def constant_mask(shape, dtype):
    """Writes a causal-mask buffer (torch.tril of ones, with leading unit
    dimensions) of `shape` as a generic: a mask is computed, never an
    argument."""
    def write(lw):
        return lw.reshape(lw.triangle(shape[-1], shape[-1], 0, dtype), shape)
    return write


def lower(graph, inputs, float_type, describe):
    """Lowers `graph` (capture.py) whose placeholders are `inputs`, a list
    of (Tensor, attribute text) in order, or for a constant the function
    that writes it (constant_mask). Returns the builder, the results'
    tensors and the class count bounding each integer input, by name."""
    lw = Lowering(graph, {}, float_type, describe)
    placeholders = [n for n in graph.graph.nodes if n.op == "placeholder"]
    for node, value in zip(placeholders, inputs):
        lw.values[node] = value(lw) if callable(value) else value[0]
    output = next(n for n in graph.graph.nodes if n.op == "output")
    outputs = output.args[0]
    loss_node = outputs[0]

    import operator
    sinks = find_sinks(graph, loss_node)
    for node in graph.graph.nodes:
        if node.op != "call_function":
            continue
        lw.b.loc = describe(node)
        lw.node = node
        lw.broadcasts.clear()
        args = [_lookup(lw, a) for a in node.args]
        kwargs = {k: _lookup(lw, v) for k, v in node.kwargs.items()}
        if node.target is operator.getitem:
            value = args[0][args[1]]
        else:
            fn = RULES.get(str(node.target)) or RULES.get(
                _functional_name(node))
            if fn is None:
                lw.fail(node, "has no lowering to the training-step op set "
                              "(docs/ImportTorch.md lists the aten ops that "
                              "do)")
            value = fn(lw, node, args, kwargs)
        if isinstance(value, Expr) and value.kind not in ("const", "seed",
                                                          "leaf"):
            # Written as a map where a non-elementwise op reads it, or where
            # several read an expression too large to compute in each of
            # them (Inductor's rule: recomputing a few elementwise ops costs
            # less than a tensor's round trip through memory).
            elementwise_users = all(
                u.op == "call_function" and _is_elementwise(u)
                for u in node.users)
            shared = len(node.users) > 1 and sinks.get(node) is None and \
                expression_size(value) > INLINED_EXPRESSION_LIMIT
            if not node.users or not elementwise_users or shared or \
                    node is loss_node:
                value = Expr.leaf(lw.write(value))
        lw.values[node] = value
        if node is loss_node:
            lw.loss = value

    lw.b.loc = None
    results = []
    for i, out in enumerate(outputs):
        value = lw.values.get(out) if out is not None else None
        results.append(None if value is None else lw.tensor(value))
    return lw.b, results, lw.bounds


def find_sinks(graph, loss_node):
    """For each node, the node whose map computes it: itself where an op
    other than an elementwise one reads it (or it is the loss), else the
    one sink all its readers share, or None where they end in different
    maps. An expression whose readers share a sink is computed once there,
    in one body, however many of them read it."""
    sinks = {}
    for node in reversed(list(graph.graph.nodes)):
        if node.op != "call_function":
            continue
        users = list(node.users)
        if not users or node is loss_node or \
                not all(_fuses_into_map(u) for u in users):
            sinks[node] = node
            continue
        readers = {sinks.get(u, u) for u in users}
        sinks[node] = readers.pop() if len(readers) == 1 else None
    return sinks


def _fuses_into_map(node):
    """Whether `node` computes its operands in its own map's body (an
    expand or broadcast writes its operand as a tensor first)."""
    return node.op == "call_function" and _is_elementwise(node) and \
        str(node.target) not in ("aten.expand.default",
                                 "prims.broadcast_in_dim.default")


# The ops an expression read by several elementwise ops may hold and still
# be computed in each of them: a few arithmetic ops, no transcendental
# function (a tanh costs tens of adds).
INLINED_EXPRESSION_LIMIT = 3


def expression_size(e, limit=INLINED_EXPRESSION_LIMIT, shape=None):
    """The ops a map computes for `e` (repeated subexpressions counted each
    time, as the reader's body repeats them); a transcendental function, or
    a leaf that would be broadcast (a full-sized copy), counts past
    `limit`, and counting stops there."""
    shape = e.shape if shape is None else shape
    if e.kind == "leaf":
        return 0 if e.payload.shape == shape else limit + 1
    if e.kind in ("const", "seed"):
        return 0
    size = limit + 1 if e.kind.startswith("math.") else 1
    for o in e.operands:
        if size > limit:
            break
        size += expression_size(o, limit, shape)
    return size


ELEMENTWISE = {
    "aten.add.Tensor", "aten.add.Scalar", "aten.sub.Tensor",
    "aten.sub.Scalar", "aten.mul.Tensor",
    "aten.mul.Scalar", "aten.div.Tensor", "aten.div.Scalar",
    "prims.div.default", "prims.broadcast_in_dim.default",
    "aten.expand.default",
    "aten.maximum.default", "aten.minimum.default", "aten.neg.default",
    "aten.exp.default", "aten.log.default", "aten.tanh.default",
    "aten.rsqrt.default", "aten.sqrt.default", "aten.erf.default",
    "aten.abs.default", "aten.sin.default", "aten.cos.default",
    "aten.log1p.default", "aten.reciprocal.default", "aten.relu.default",
    "aten.sigmoid.default", "aten.pow.Tensor_Scalar", "aten.where.self",
    "aten.masked_fill.Scalar", "aten._to_copy.default",
    "aten.bitwise_not.default", "aten.logical_not.default",
    "aten.bitwise_and.Tensor", "aten.tril.default", "aten.triu.default",
    "prims.convert_element_type.default",
    "aten.nll_loss_backward.default", "aten._log_softmax_backward_data.default",
} | {f"aten.{c}.{k}" for c in ("gt", "lt", "ge", "le", "eq", "ne")
     for k in ("Scalar", "Tensor")}


def _functional_name(node):
    """aten.masked_fill_.Scalar -> aten.masked_fill.Scalar: an in-place op
    that capture.py let through writes a temporary, and is lowered as its
    functional form."""
    parts = str(node.target).split(".")
    if len(parts) == 3 and parts[1].endswith("_"):
        return ".".join((parts[0], parts[1][:-1], parts[2]))
    return None


def _is_elementwise(node):
    return str(node.target) in ELEMENTWISE or \
        _functional_name(node) in ELEMENTWISE


def _lookup(lw, a):
    import torch.fx
    if isinstance(a, torch.fx.Node):
        return lw.values[a]
    if isinstance(a, (list, tuple)):
        return type(a)(_lookup(lw, x) for x in a)
    return a
