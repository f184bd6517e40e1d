"""Writes a training step in the op set of docs/TrainingStepIR.md, as MLIR text.

The builder knows nothing of PyTorch: it holds SSA tensors with their shapes
and element types and appends one upstream op per call (linalg in destination
style, tensor reshapes, scalar constants). lower.py decides which calls an
aten node becomes.
"""

import math
import struct

FLOAT_TYPES = ("f16", "bf16", "f32", "f64")


def tensor_type(shape, dtype):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def format_float(value, dtype):
    """`value` rounded to `dtype`, as an MLIR literal that parses back exactly."""
    if dtype == "f32":
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        value = struct.unpack("<f", struct.pack("<I", bits))[0]
        if math.isfinite(value):
            return "%.9e" % value
        return "0x%08X" % bits
    if dtype == "f64":
        if math.isfinite(value):
            return "%.17e" % value
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]
    raise ValueError(f"no literal for a {dtype} constant")


class Tensor:
    """A materialized tensor: an SSA name, a static shape and an element type."""

    def __init__(self, name, shape, dtype):
        self.name = name
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype

    @property
    def type(self):
        return tensor_type(self.shape, self.dtype)

    @property
    def numel(self):
        return math.prod(self.shape)


class Body:
    """The scalar ops of a region (linalg.map/reduce/generic), one per line."""

    def __init__(self, builder, indent):
        self._builder = builder
        self.indent = indent
        self.lines = []
        self._constants = {}

    def op(self, text):
        """Appends `text`, a whole op with its types, and returns its
        result."""
        name = self._builder.fresh("s")
        self.lines.append(f"{self.indent}{name} = {text}")
        return name

    def constant(self, value, dtype, seed=False):
        """A scalar constant, written once per body."""
        key = (repr(value), dtype, seed)
        if key not in self._constants:
            self._constants[key] = self._constant(value, dtype, seed)
        return self._constants[key]

    def _constant(self, value, dtype, seed):
        if dtype in FLOAT_TYPES:
            literal = format_float(float(value), dtype)
        elif dtype == "i1":  # typed by the literal itself
            return self.op("arith.constant " + ("true" if value else "false"))
        else:
            literal = str(int(value))
        attr = " {zero.backward_seed}" if seed else ""
        return self.op(f"arith.constant{attr} {literal} : {dtype}")


class Builder:
    """Appends ops to the body of @train_step."""

    def __init__(self):
        self.lines = []
        self._counter = 0
        # Where the ops written next come from (the aten node), as an MLIR
        # location: the compiler's and runtime's errors then name it.
        self.loc = None

    def fresh(self, prefix="v"):
        self._counter += 1
        return f"%{prefix}{self._counter}"

    def _emit(self, text):
        self.lines.append("    " + text)

    def _end_op(self):
        """Puts the current location on the op whose last line was just
        written."""
        if self.loc is not None:
            escaped = self.loc.replace("\\", "\\\\").replace('"', '\\"')
            self.lines[-1] += f' loc("{escaped}")'

    def _result(self, shape, dtype):
        return Tensor(self.fresh(), shape, dtype)

    def empty(self, shape, dtype):
        out = self._result(shape, dtype)
        self._emit(f"{out.name} = tensor.empty() : {out.type}")
        self._end_op()
        return out

    def fill(self, value, shape, dtype):
        literal = (format_float(float(value), dtype) if dtype in FLOAT_TYPES
                   else str(int(value)))
        scalar = self.fresh("c")
        self._emit(f"{scalar} = arith.constant {literal} : {dtype}")
        self._end_op()
        init = self.empty(shape, dtype)
        out = self._result(shape, dtype)
        self._emit(f"{out.name} = linalg.fill ins({scalar} : {dtype}) "
                   f"outs({init.name} : {init.type}) -> {out.type}")
        self._end_op()
        return out

    def broadcast(self, x, shape, dims):
        """`x` with the dimensions `dims` of `shape` added."""
        init = self.empty(shape, x.dtype)
        out = self._result(shape, x.dtype)
        self._emit(f"{out.name} = linalg.broadcast ins({x.name} : {x.type}) "
                   f"outs({init.name} : {init.type}) dimensions = "
                   f"[{', '.join(map(str, dims))}]")
        self._end_op()
        return out

    def transpose(self, x, perm):
        shape = [x.shape[p] for p in perm]
        init = self.empty(shape, x.dtype)
        out = self._result(shape, x.dtype)
        self._emit(f"{out.name} = linalg.transpose ins({x.name} : {x.type}) "
                   f"outs({init.name} : {init.type}) permutation = "
                   f"[{', '.join(map(str, perm))}]")
        self._end_op()
        return out

    def matmul(self, a, b, init):
        """a b + init: linalg.matmul ([M,K] x [K,N]) or, on rank-3
        operands, linalg.batch_matmul."""
        op = "linalg.batch_matmul" if len(a.shape) == 3 else "linalg.matmul"
        out = self._result(init.shape, init.dtype)
        self._emit(f"{out.name} = {op} ins({a.name}, {b.name} : {a.type}, "
                   f"{b.type}) outs({init.name} : {init.type}) -> {out.type}")
        self._end_op()
        return out

    def reduce(self, x, dims, combiner):
        """Reduces `dims` of `x` with `combiner` (arith.addf or
        arith.maximumf) from its identity."""
        identity = 0.0 if combiner == "arith.addf" else -math.inf
        shape = [d for i, d in enumerate(x.shape) if i not in dims]
        init = self.fill(identity, shape, x.dtype)
        out = self._result(shape, x.dtype)
        body = Body(self, "        ")
        value = body.op(f"{combiner} %in, %init : {x.dtype}")
        self._emit(f"{out.name} = linalg.reduce ins({x.name} : {x.type}) "
                   f"outs({init.name} : {init.type}) dimensions = "
                   f"[{', '.join(map(str, sorted(dims)))}]")
        self.lines.append(f"      (%in: {x.dtype}, %init: {x.dtype}) {{")
        self.lines.extend(body.lines)
        self.lines.append(f"        linalg.yield {value} : {x.dtype}")
        self.lines.append("      }")
        self._end_op()
        return out

    def map(self, inputs, shape, dtype, write_body):
        """linalg.map over `inputs` (all of `shape`); `write_body(body, args)`
        writes the region and returns the yielded scalar."""
        init = self.empty(shape, dtype)
        out = self._result(shape, dtype)
        body = Body(self, "        ")
        args = [self.fresh("in") for _ in inputs]
        value = write_body(body, args)
        ins = ", ".join(t.name for t in inputs)
        types = ", ".join(t.type for t in inputs)
        self._emit(f"{out.name} = linalg.map ins({ins} : {types}) "
                   f"outs({init.name} : {init.type})")
        params = [f"{a}: {t.dtype}" for a, t in zip(args, inputs)]
        params.append(f"%init: {dtype}")
        self.lines.append(f"      ({', '.join(params)}) {{")
        self.lines.extend(body.lines)
        self.lines.append(f"        linalg.yield {value} : {dtype}")
        self.lines.append("      }")
        self._end_op()
        return out

    def one_hot(self, labels, classes, dtype, transposed=False):
        """[N, classes] of `dtype`: 1 where the column is the row's label;
        `transposed`, [classes, N] (the embedding's scatter-add as a
        matmul, onehot^T x grad)."""
        class_loop = 0 if transposed else 1

        def body(region, args):
            index = region.op(f"arith.index_cast {args[0]} : {labels.dtype} "
                              "to index")
            column = region.op(f"linalg.index {class_loop} : index")
            hit = region.op(f"arith.cmpi eq, {column}, {index} : index")
            one = region.constant(1.0, dtype)
            zero = region.constant(0.0, dtype)
            return region.op(f"arith.select {hit}, {one}, {zero} : {dtype}")
        shape = [labels.shape[0], classes]
        return self._generic([labels], [[1 - class_loop]],
                             shape[::-1] if transposed else shape, dtype, body)

    def _generic(self, inputs, maps, shape, dtype, write_body):
        """linalg.generic with parallel loops over `shape`: `maps[i]` lists
        the loop dimensions that index input i; the body gets the inputs'
        elements and returns the yielded scalar."""
        rank = len(shape)
        dims = ", ".join(f"d{i}" for i in range(rank))
        affine = [f"affine_map<({dims}) -> ({', '.join(f'd{i}' for i in m)})>"
                  for m in maps]
        affine.append(f"affine_map<({dims}) -> ({dims})>")
        init = self.empty(shape, dtype)
        out = self._result(shape, dtype)
        iterators = ", ".join(['"parallel"'] * rank)
        ins = ""
        if inputs:
            ins = (f"ins({', '.join(t.name for t in inputs)} : "
                   f"{', '.join(t.type for t in inputs)}) ")
        self._emit(f"{out.name} = linalg.generic {{indexing_maps = "
                   f"[{', '.join(affine)}], iterator_types = [{iterators}]}} "
                   f"{ins}outs({init.name} : {init.type}) {{")
        args = [self.fresh("in") for _ in inputs]
        params = [f"{a}: {t.dtype}" for a, t in zip(args, inputs)]
        params.append(f"%out: {dtype}")
        self.lines.append(f"    ^bb0({', '.join(params)}):")
        body = Body(self, "      ")
        value = write_body(body, args)
        self.lines.extend(body.lines)
        self.lines.append(f"      linalg.yield {value} : {dtype}")
        self.lines.append(f"    }} -> {out.type}")
        self._end_op()
        return out

    def causal_mask(self, rows, columns, diagonal, dtype):
        """[rows, columns]: 1 where column - row <= diagonal, 0 elsewhere
        (torch.tril(ones, diagonal); diagonal 0 is the causal mask), in
        `dtype` (float, or i1)."""
        def body(region, args):
            row = region.op("linalg.index 0 : index")
            column = region.op("linalg.index 1 : index")
            if diagonal != 0:
                offset = region.constant(diagonal, "index")
                row = region.op(f"arith.addi {row}, {offset} : index")
            below = region.op(f"arith.cmpi sle, {column}, {row} : index")
            if dtype == "i1":
                return below
            one = region.constant(1.0, dtype)
            zero = region.constant(0.0, dtype)
            return region.op(f"arith.select {below}, {one}, {zero} : {dtype}")
        return self._generic([], [], [rows, columns], dtype, body)

    def gather_rows(self, table, indices):
        """[N, H]: row indices[n] of `table` [V, H] (the embedding lookup)."""
        shape = [indices.shape[0], table.shape[1]]
        def body(region, args):
            row = region.op(f"arith.index_cast {args[0]} : {indices.dtype} "
                            "to index")
            column = region.op("linalg.index 1 : index")
            return region.op(f"tensor.extract {table.name}[{row}, {column}] : "
                             f"{table.type}")
        return self._generic([indices], [[0]], shape, table.dtype, body)

    def extract_slice(self, x, offsets, sizes):
        out = self._result(sizes, x.dtype)
        self._emit(f"{out.name} = tensor.extract_slice {x.name}"
                   f"[{', '.join(map(str, offsets))}] "
                   f"[{', '.join(map(str, sizes))}] "
                   f"[{', '.join('1' for _ in sizes)}] : {x.type} to "
                   f"{out.type}")
        self._end_op()
        return out

    def insert_slice(self, source, dest, offsets):
        out = self._result(dest.shape, dest.dtype)
        self._emit(f"{out.name} = tensor.insert_slice {source.name} into "
                   f"{dest.name}[{', '.join(map(str, offsets))}] "
                   f"[{', '.join(map(str, source.shape))}] "
                   f"[{', '.join('1' for _ in source.shape)}] : "
                   f"{source.type} into {dest.type}")
        self._end_op()
        return out

    def reshape(self, x, shape, reassociation, collapse):
        op = "tensor.collapse_shape" if collapse else "tensor.expand_shape"
        groups = ", ".join("[" + ", ".join(map(str, g)) + "]"
                           for g in reassociation)
        out = self._result(shape, x.dtype)
        if collapse:
            self._emit(f"{out.name} = {op} {x.name} [{groups}] : {x.type} "
                       f"into {out.type}")
            self._end_op()
        else:
            sizes = ", ".join(map(str, shape))
            self._emit(f"{out.name} = {op} {x.name} [{groups}] output_shape "
                       f"[{sizes}] : {x.type} into {out.type}")
            self._end_op()
        return out

    def function(self, arguments, results):
        """The module text: `arguments` and `results` are (Tensor or type,
        attribute text) pairs; the body returns the results' tensors."""
        params = ", ".join(f"{t.name}: {t.type} {{{attrs}}}"
                           for t, attrs in arguments)
        types = ", ".join(f"{t.type} {{{attrs}}}" for t, attrs in results)
        names = ", ".join(t.name for t, _ in results)
        plain = ", ".join(t.type for t, _ in results)
        return "\n".join(
            ["module {",
             f"  func.func @train_step({params}) -> ({types}) {{",
             *self.lines,
             f"    return {names} : {plain}",
             "  }",
             "}",
             ""])
