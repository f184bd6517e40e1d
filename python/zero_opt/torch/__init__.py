"""Bring your own PyTorch model: a module's training step as zero-opt IR.

    from zero_opt.torch import export_train_step, load_weights
    export_train_step(model, loss_fn, batch, "model.mlir",
                      weights="init.safetensors")
    ... zero-opt, zero-run --init-from init.safetensors --export out.safetensors
    load_weights(model, "out.safetensors")

docs/ImportTorch.md describes the capture, the op coverage and what is
refused.
"""

import os
import shutil
import subprocess

import numpy as np

from .. import safetensors
from .ir import Tensor
from .lower import TorchImportError
from .lower import constant_mask, lower

__all__ = ["export_train_step", "load_weights", "TorchImportError"]

FLOAT_TYPES = {"f32": "float32", "f64": "float64"}


def _quote(name):
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def find_tool(name):
    """`name` next to this package (the build tree's bin/, or the install
    tree's), or on PATH."""
    here = os.path.dirname(os.path.abspath(__file__))
    python_dir = os.path.dirname(os.path.dirname(here))
    for bin_dir in (os.path.join(python_dir, "..", "bin"),
                    os.path.join(python_dir, "..", "..", "..", "bin")):
        candidate = os.path.normpath(os.path.join(bin_dir, name))
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(name)
    if not found:
        raise TorchImportError(f"{name} is neither next to the zero_opt package "
                           "nor on PATH")
    return found


def export_train_step(model, loss_fn, example_batch, path, dtype="f32",
                      data_bounds=None, weights=None, verify=True):
    """Writes the training step of `model` under `loss_fn` to `path`.

    loss_fn(model, batch) returns the 0-d mean loss; `example_batch` is a
    dict of tensors whose keys name the step's data arguments and whose
    shapes are one micro-batch. `dtype` is the step's float type ("f32" or
    "f64"). Integer data needs a bound (its values lie in [0, N)):
    `data_bounds[key]`, or the class count where it is the target of a
    cross-entropy. `weights`, a path: the module's parameters and buffers,
    as fp32 safetensors for zero-run --init-from. The parameters may all
    be on the meta device (a model too large to hold; its buffers on the
    CPU): the step is traced from shapes, and there are no weights to
    write. The step is checked by
    zero-opt --zero-verify-train-step before this returns; nothing is
    written when anything is refused.
    """
    import torch

    from .capture import capture, describe

    if dtype not in FLOAT_TYPES:
        raise TorchImportError(f"dtype '{dtype}': expected one of "
                           f"{', '.join(FLOAT_TYPES)}")
    float_dtype = getattr(torch, FLOAT_TYPES[dtype])
    data_bounds = dict(data_bounds or {})
    for key in data_bounds:
        if key not in example_batch:
            raise TorchImportError(f"data_bounds['{key}']: the batch has no "
                               f"entry '{key}' (it has "
                               f"{', '.join(example_batch)})")
    graph, aliases, keys, data = capture(model, loss_fn, example_batch,
                                         float_dtype)
    if weights and aliases.on_meta():
        raise TorchImportError(
            f"weights '{weights}': the parameters are on the meta device, "
            "there are no values to write (zero-run initializes them, or "
            "--init-from a file of yours)")

    inputs = []
    index = 0
    def argument(shape, element, attrs):
        nonlocal index
        tensor = Tensor(f"%arg{index}", shape, element)
        index += 1
        inputs.append((tensor, attrs))
        return tensor
    for name, p in aliases.params:
        argument(p.shape, dtype, f"zero.param = {_quote(name)}")
    # Frozen tensors (buffers, parameters without a gradient) are what the
    # module holds, not a starting point: no initializer, the values come
    # from the weights file (zero-run refuses to start without one).
    for name, t in aliases.frozen:
        argument(t.shape, dtype, f"zero.param = {_quote(name)}, zero.frozen, "
                 'zero.init = "file"')
    masks = [constant_mask(tuple(t.shape), "i1" if t.dtype == torch.bool
                           else dtype) for _, t in aliases.masks]
    # Unread (capture refuses a read one): nothing to write.
    masks += [lambda lw: None for _ in aliases.others]
    data_args = []
    for key, value in zip(keys, data):
        element = dtype if value.is_floating_point() else "i32"
        data_args.append(argument(value.shape, element,
                                  f"zero.data = {_quote(key)}"))

    arguments = len(inputs) - len(data_args)
    builder, results, bounds = lower(
        graph, inputs[:arguments] + masks + inputs[arguments:], dtype,
        describe)

    for (tensor, attrs), key, value in zip(inputs[-len(keys):] if keys else [],
                                           keys, data):
        if value.is_floating_point():
            continue
        bound = data_bounds.get(key, bounds.get(tensor.name))
        if bound is None:
            raise TorchImportError(
                f"batch['{key}'] is integer data without a bound: pass "
                f"data_bounds={{'{key}': N}} (its values lie in [0, N))")
        high = int(value.max()) if value.numel() else -1
        if int(value.min() if value.numel() else 0) < 0 or high >= bound:
            raise TorchImportError(f"batch['{key}'] holds values outside "
                               f"[0, {bound})")
        inputs[inputs.index((tensor, attrs))] = (
            tensor, attrs + f", zero.data_bound = {int(bound)} : i64")

    loss, grads = results[0], results[1:]
    outputs = [(loss, "zero.loss")]
    for (name, p), grad in zip(aliases.params, grads):
        if grad is None:
            raise TorchImportError(f"parameter '{name}' does not affect the "
                               "loss; freeze it (requires_grad_(False))")
        outputs.append((grad, f"zero.grad = {_quote(name)}"))
    text = builder.function(inputs, outputs)

    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    try:
        if verify:
            _verify(tmp)
        if weights:
            tensors = {name: t.detach().to(torch.float32).cpu().numpy()
                       for name, t in aliases.params + aliases.frozen}
            safetensors.write(weights, tensors)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _verify(path):
    result = subprocess.run(
        [find_tool("zero-opt"), path, "--zero-verify-train-step", "-o",
         os.devnull], capture_output=True, text=True)
    if result.returncode != 0:
        raise TorchImportError(
            "importer bug: zero-opt --zero-verify-train-step refused the "
            "exported step (the location names the aten node):\n" +
            result.stderr.strip())


def load_weights(model, path):
    """Loads safetensors written by zero-run --export (or zero-ckpt
    consolidate) into `model`, every alias of a tied parameter included, by
    model.load_state_dict."""
    import torch

    from .capture import Aliases

    tensors, _ = safetensors.read(path)
    aliases = Aliases(model)
    # Non-persistent buffers are not in the state dict: they stay as they are.
    persistent = set(model.state_dict())
    state = {}
    for name, tensor in aliases.params + aliases.frozen:
        if name not in tensors:
            raise TorchImportError(f"{path}: no tensor '{name}'")
        value = torch.from_numpy(np.array(tensors[name])).to(tensor.dtype)
        for alias in aliases.names[id(tensor)]:
            if alias in persistent:
                state[alias] = value
    # Causal masks were computed in the step, not trained: the module's own.
    for name, tensor in aliases.masks:
        for alias in aliases.names[id(tensor)]:
            if alias in persistent:
                state[alias] = tensor
    model.load_state_dict(state, strict=True)
