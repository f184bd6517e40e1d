"""Captures a module's value-and-grad step as one aten graph.

The step is traced with make_fx (the tracer under functorch's aot_function
in PyTorch 1.13 and under torch.export in 2.x, where it has the same
signature): forward, the loss and torch.autograd.grad of every trainable
parameter, in one graph, through a decomposition table that leaves the op
set lower.py knows. Parameters are swapped in with the helper under both
versions' functional_call. What differs between the versions is in
`_version_context` and `DECOMPOSED`: 2.x's scaled_dot_product_attention is
traced as its math form, and its newer ops are decomposed.

The traps that would give a silently wrong step are refused here, each
naming the module path and the aten op or parameter: randomness, buffers
mutated in place, shapes that depend on data, and tensors the module holds
outside its parameters and buffers. Tied parameters are passed under every
name they have, so each use reads the same input and the gradient is the sum
of all uses.
"""

import contextlib

import torch
import torch.fx.experimental.proxy_tensor as proxy_tensor

from .lower import TorchImportError

from torch.nn.utils.stateless import _reparametrize_module

aten = torch.ops.aten
TORCH_MAJOR = int(torch.__version__.split(".")[0])

# Decomposed into what lower.py knows. Embedding, log-softmax, the negative
# log likelihood and LayerNorm stay whole: 1.13's nll_loss decomposition
# fails on ignore_index targets, the embedding's backward decomposes into
# index_put, and lower.py writes the cross-entropy and LayerNorm as
# zero-model does (the gradient (softmax - onehot) / N; x_hat saved for the
# backward pass).
DECOMPOSED = [
    aten.gelu, aten.gelu_backward, aten._softmax,
    aten._softmax_backward_data, aten.threshold_backward, aten.silu,
    aten.silu_backward, aten.sigmoid_backward, aten.tanh_backward,
    aten.mean, aten.var_mean, aten.var, aten.hardtanh, aten.mse_loss,
    aten.mse_loss_backward, aten.rsub, aten.native_batch_norm,
    aten.native_batch_norm_backward,
]
if TORCH_MAJOR >= 2:
    # The math form of scaled_dot_product_attention softmaxes through
    # _safe_softmax (2.5 and later), which decomposes to _softmax's ops.
    DECOMPOSED += [getattr(aten, name) for name in ("_safe_softmax",)
                   if hasattr(aten, name)]

RANDOM_OPS = ("bernoulli", "native_dropout", "rand", "randn", "randint",
              "normal", "uniform", "multinomial", "randperm", "exponential")
DATA_DEPENDENT_OPS = ("nonzero", "masked_select", "unique", "_unique2",
                      "masked_scatter", "index_put")


class Aliases:
    """The parameters and buffers of a module by tensor, with every name
    each one has (tied weights have several)."""

    def __init__(self, model):
        self.params = []       # (primary name, tensor), named_parameters order
        self.frozen = []       # (name, tensor): requires_grad False, buffers
        self.masks = []        # (name, tensor): causal-mask buffers
        self.others = []       # (name, tensor): other non-float buffers
        self.names = {}        # id(tensor) -> all names
        for prefix, module in model.named_modules(remove_duplicate=False):
            dot = prefix + "." if prefix else ""
            for table in (module._parameters, module._buffers):
                for name, tensor in table.items():
                    if tensor is not None:
                        self.names.setdefault(id(tensor), []).append(dot + name)
        self.parameters = list(model.named_parameters())
        for name, p in self.parameters:
            (self.params if p.requires_grad else self.frozen).append((name, p))
        for name, b in model.named_buffers():
            if b.is_meta:
                raise TorchImportError(
                    f"buffer '{name}' is on the meta device: the step needs "
                    "its values (a causal mask is computed from them, other "
                    "buffers are frozen weights); create the module's "
                    "buffers on the CPU, only its parameters on meta")
            if is_causal_mask(b):
                self.masks.append((name, b))
            elif b.is_floating_point():
                self.frozen.append((name, b))
            else:
                self.others.append((name, b))

    def on_meta(self):
        """Whether the parameters are on the meta device (a model too large
        to hold, as DeepSpeed's zero.Init allows): the step is then traced
        on meta tensors, from shapes alone."""
        meta = [p.is_meta for _, p in self.parameters]
        return bool(meta) and all(meta)

    def inputs(self):
        """Every tensor the step takes before the data, in its order."""
        return self.params + self.frozen + self.masks + self.others


def is_causal_mask(tensor):
    """Whether `tensor` is torch.tril(torch.ones(S, S)) (float or bool),
    with any leading unit dimensions."""
    if tensor.dim() < 2 or tensor.shape[-1] != tensor.shape[-2] or \
            any(d != 1 for d in tensor.shape[:-2]):
        return False
    size = tensor.shape[-1]
    expected = torch.tril(torch.ones(size, size, dtype=torch.bool))
    flat = tensor.reshape(size, size)
    if tensor.dtype == torch.bool:
        return bool(torch.equal(flat, expected))
    return tensor.is_floating_point() and bool(torch.equal(flat, expected.to(
        tensor.dtype)))


class ModulePaths:
    """Which submodule each traced node came from: forward hooks keep the
    path of the module running, the tracer records it on the nodes it
    creates."""

    def __init__(self, model):
        self.stack = []
        self.handles = []
        # Set once the loss is computed: ops outside every module are then
        # the backward pass's, before it the loss function's.
        self.backward = False
        for path, module in model.named_modules():
            self.handles.append(module.register_forward_pre_hook(
                self._enter(path)))
            self.handles.append(module.register_forward_hook(self._leave))

    def _enter(self, path):
        def hook(module, inputs):
            self.stack.append(path)
        return hook

    def _leave(self, module, inputs, output):
        self.stack.pop()

    def current(self):
        if self.stack:
            return self.stack[-1]
        return "backward" if self.backward else "loss"

    def close(self):
        for h in self.handles:
            h.remove()


@contextlib.contextmanager
def _version_context():
    """PyTorch 2.x: F.scaled_dot_product_attention runs its math form
    (matmuls and a softmax, which the graph then holds) instead of a fused
    CPU kernel, one op with no lowering. 1.13 has no such function."""
    if TORCH_MAJOR < 2:
        yield
        return
    attention = getattr(torch.nn, "attention", None)
    if attention is not None and hasattr(attention, "sdpa_kernel"):  # 2.3+
        with attention.sdpa_kernel(attention.SDPBackend.MATH):
            yield
    else:
        with torch.backends.cuda.sdp_kernel(enable_flash=False,
                                            enable_mem_efficient=False,
                                            enable_math=True):
            yield


@contextlib.contextmanager
def _recording_tracer(paths):
    base = proxy_tensor.PythonKeyTracer

    class Tracer(base):
        def create_proxy(self, *args, **kwargs):
            proxy = super().create_proxy(*args, **kwargs)
            path = paths.current()
            proxy.node.meta["zero_module"] = path or "the model"
            return proxy

    proxy_tensor.PythonKeyTracer = Tracer
    try:
        yield
    finally:
        proxy_tensor.PythonKeyTracer = base


def describe(node):
    """Where a node came from: its module path and aten op."""
    module = node.meta.get("zero_module", "the model")
    place = {"backward": "the backward pass",
             "loss": "the loss function"}.get(module, f"module '{module}'")
    return f"{place}, {node.target}"


def capture(model, loss_fn, batch, float_dtype):
    """The step's graph, and the inputs in the graph's order: trainable
    parameters, frozen tensors, causal masks, then the batch's entries."""
    aliases = Aliases(model)
    params = [p.detach().to(float_dtype).requires_grad_()
              for _, p in aliases.params]
    frozen = [t.detach().to(float_dtype) for _, t in aliases.frozen]
    masks = [t.detach() if t.dtype == torch.bool else t.detach().to(
        float_dtype) for _, t in aliases.masks]
    others = [t.detach() for _, t in aliases.others]
    keys = list(batch)
    data = []
    for key in keys:
        value = batch[key]
        if not isinstance(value, torch.Tensor):
            raise TorchImportError(f"batch['{key}'] is a {type(value).__name__}; "
                               "the batch holds tensors only")
        data.append(value.to(float_dtype) if value.is_floating_point()
                    else value)

    def step(*flat):
        mapping = {}
        tensors = list(flat[:len(aliases.inputs())])
        for (_, original), tensor in zip(aliases.inputs(), tensors):
            for alias in aliases.names[id(original)]:
                mapping[alias] = tensor
        inputs = dict(zip(keys, flat[len(tensors):]))
        with _reparametrize_module(model, mapping):
            loss = loss_fn(model, inputs)
        paths.backward = True
        if not isinstance(loss, torch.Tensor) or loss.dim() != 0:
            raise TorchImportError("loss_fn must return the 0-d mean loss")
        grads = torch.autograd.grad(loss, flat[:len(params)],
                                    allow_unused=True)
        return (loss, *grads)

    traced = [*params, *frozen, *masks, *others, *data]
    if aliases.on_meta():
        # Shapes alone: the data and buffers follow the parameters (meta
        # kernels compute each op's result shape, not its values).
        traced = [t.to("meta") for t in traced]
    elif any(p.is_meta for _, p in aliases.parameters):
        meta = next(n for n, p in aliases.parameters if p.is_meta)
        raise TorchImportError(
            f"parameter '{meta}' is on the meta device and others are not: "
            "put all of the parameters on meta, or none")
    paths = ModulePaths(model)
    table = torch._decomp.get_decompositions(DECOMPOSED)
    try:
        with _recording_tracer(paths), _version_context():
            graph = proxy_tensor.make_fx(step, decomposition_table=table)(
                *traced)
    finally:
        paths.close()
    check_traps(graph)
    # Non-float buffers other than masks (BatchNorm's batch counter in eval
    # mode) may be there unread; read, they would be arguments of a type
    # the contract has no place for.
    placeholders = [n for n in graph.graph.nodes if n.op == "placeholder"]
    first = len(params) + len(frozen) + len(masks)
    for (name, tensor), node in zip(aliases.others,
                                    placeholders[first:first + len(others)]):
        if node.users:
            users = ", ".join(sorted({describe(u) for u in node.users}))
            raise TorchImportError(
                f"{users}: reads buffer '{name}' of {tensor.dtype}; buffers "
                "the step reads must be float or a causal mask")
    return graph, aliases, keys, data


def _is_in_place(node):
    return node.op == "call_function" and hasattr(node.target, "_schema") \
        and node.target._schema.is_mutable


VIEW_OPS = ("view", "_reshape_alias", "_unsafe_view", "reshape", "slice",
            "select", "t", "transpose", "permute", "expand", "unsqueeze",
            "squeeze", "detach", "alias", "as_strided")


def _aliases_input(node):
    """Whether `node` is an input of the step, or a view of one."""
    while node.op == "call_function" and hasattr(node.target, "_schema") \
            and node.target._schema.name.split("::")[-1] in VIEW_OPS:
        node = node.args[0]
    return node.op == "placeholder"


def _writes_temporary(node):
    """Whether in-place op `node` writes a temporary that no view shares
    and nothing reads after it but through `node` (the backward pass's
    masked_fill_ of a fresh gradient): lowered as the functional op, its
    readers see the same values."""
    target = node.args[0] if node.args else None
    if not hasattr(target, "op") or _aliases_input(target):
        return False
    if target.op == "call_function" and hasattr(target.target, "_schema") \
            and target.target._schema.name.split("::")[-1] in VIEW_OPS:
        return False
    order = {n: i for i, n in enumerate(node.graph.nodes)}
    for user in target.users:
        if user is node:
            continue
        if order[user] > order[node] or (
                hasattr(user.target, "_schema") and
                user.target._schema.name.split("::")[-1] in VIEW_OPS):
            return False
    return True


def check_traps(graph):
    for node in graph.graph.nodes:
        if node.op == "get_attr":
            users = ", ".join(describe(u) for u in node.users)
            raise TorchImportError(
                f"{users}: reads a tensor the module holds outside its "
                "parameters and buffers; register it with register_buffer")
        if node.op != "call_function" or not hasattr(node.target, "_schema"):
            continue
        name = node.target._schema.name.split("::")[-1]
        if name == "index" and any(
                getattr(i, "meta", {}).get("tensor_meta") is not None and
                i.meta["tensor_meta"].dtype == torch.bool
                for i in node.args[1] if i is not None):
            name = "masked_select"
        if any(name == op or name == op + "_" for op in RANDOM_OPS):
            raise TorchImportError(
                f"{describe(node)}: draws random numbers (dropout in train "
                "mode?); the step must be deterministic: call model.eval() "
                "or set the dropout probability to 0")
        if name in DATA_DEPENDENT_OPS:
            raise TorchImportError(
                f"{describe(node)}: its result's shape depends on the data "
                "(boolean-mask indexing?); the step's shapes must be static")
        if _is_in_place(node) and not _writes_temporary(node):
            raise TorchImportError(
                f"{describe(node)}: writes its input in place (a buffer "
                "updated in forward, as BatchNorm's running statistics in "
                "train mode?); the step must be a pure function")
