"""The models of models.py with their parameters on the meta device (no
values, as for a model too large to hold) and their buffers on the CPU;
meta_buffer also moves a causal-mask buffer to meta (refused), and
meta_weights asks for the weights of meta parameters (refused)."""

import torch

import models


def parameters_on_meta(model):
    """Every parameter replaced by a meta one of its shape, a tied one by
    the same meta parameter under each of its names."""
    replaced = {}
    for module in model.modules():
        for name, p in list(module._parameters.items()):
            if p is None:
                continue
            if id(p) not in replaced:
                replaced[id(p)] = torch.nn.Parameter(
                    torch.empty_like(p, device="meta"),
                    requires_grad=p.requires_grad)
            module._parameters[name] = replaced[id(p)]
    return model


def _on_meta(factory):
    def make():
        model, loss_fn, batch = factory()
        return parameters_on_meta(model), loss_fn, batch
    return make


mlp = _on_meta(models.mlp)
gpt = _on_meta(models.gpt)
llama = _on_meta(models.llama)
vit = _on_meta(models.vit)


def meta_buffer():
    model, loss_fn, batch = gpt()
    model.h[1].attn.bias = model.h[1].attn.bias.to("meta")
    return model, loss_fn, batch


def half_on_meta():
    model, loss_fn, batch = models.gpt()
    model.ln_f.weight = torch.nn.Parameter(
        torch.empty_like(model.ln_f.weight, device="meta"))
    return model, loss_fn, batch
