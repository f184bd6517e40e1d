"""Model factories for the importer's tests: each returns (model, loss_fn,
batch) as zero-import-torch expects, with the batch of one rank's
micro-batch. Written as a user would write them, with torch.nn modules."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def cross_entropy(model, batch):
    return F.cross_entropy(model(batch["inputs"]), batch["labels"])


class Classifier(nn.Module):
    """An MLP classifier: Linear, LayerNorm, GELU, ReLU."""

    def __init__(self, features=12, hidden=16, classes=5):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        x = F.gelu(self.norm(self.fc1(x)))
        return self.head(F.relu(self.fc2(x)))


def mlp():
    torch.manual_seed(0)
    batch = {"inputs": torch.randn(4, 12),
             "labels": torch.randint(0, 5, (4,))}
    return Classifier(), cross_entropy, batch


class CausalSelfAttention(nn.Module):
    def __init__(self, hidden, heads, seq):
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(hidden, 3 * hidden)
        self.c_proj = nn.Linear(hidden, hidden)
        # nanoGPT's attention: PyTorch 2's fused function where there is
        # one, else a causal mask in a buffer of ones below the diagonal.
        self.flash = hasattr(F, "scaled_dot_product_attention")
        if not self.flash:
            self.register_buffer("bias", torch.tril(torch.ones(seq, seq))
                                 .view(1, 1, seq, seq))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0,
                                  float("-inf"))
            y = F.softmax(att, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, hidden, heads, seq):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden)
        self.attn = CausalSelfAttention(hidden, heads, seq)
        self.ln_2 = nn.LayerNorm(hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, 4 * hidden),
                                 nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * hidden, hidden))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """nanoGPT's GPT-2: learned positions, pre-LayerNorm blocks, the LM head
    tied to the token embedding."""

    def __init__(self, vocab=64, seq=16, hidden=32, heads=4, layers=2):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(seq, hidden)
        self.h = nn.ModuleList(Block(hidden, heads, seq)
                               for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        self.lm_head.weight = self.wte.weight
        for module in self.modules():  # nanoGPT's initialization
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.wte(tokens) + self.wpe(positions)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def language_model_loss(model, batch):
    logits = model(batch["tokens"])
    return F.cross_entropy(logits.view(-1, logits.size(-1)),
                           batch["targets"].view(-1))


def gpt():
    torch.manual_seed(0)
    batch = {"tokens": torch.randint(0, 64, (2, 16)),
             "targets": torch.randint(0, 64, (2, 16))}
    return GPT(), language_model_loss, batch


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) \
            * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaAttention(nn.Module):
    """Grouped-query attention with rotary position embeddings."""

    def __init__(self, hidden, heads, kv_heads, seq):
        super().__init__()
        self.heads, self.kv_heads = heads, kv_heads
        self.head_dim = hidden // heads
        self.q_proj = nn.Linear(hidden, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, hidden, bias=False)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2).float()
                                    / self.head_dim))
        angles = torch.outer(torch.arange(seq).float(), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq,
                                                           dtype=torch.bool)),
                             persistent=False)

    def forward(self, x):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.kv_heads, self.head_dim) \
            .transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.kv_heads, self.head_dim) \
            .transpose(1, 2)
        q = q * self.cos + rotate_half(q) * self.sin
        k = k * self.cos + rotate_half(k) * self.sin
        repeat = self.heads // self.kv_heads
        k = k[:, :, None].expand(B, self.kv_heads, repeat, T, self.head_dim) \
            .reshape(B, self.heads, T, self.head_dim)
        v = v[:, :, None].expand(B, self.kv_heads, repeat, T, self.head_dim) \
            .reshape(B, self.heads, T, self.head_dim)
        scores = q @ k.transpose(-2, -1) / self.head_dim ** 0.5
        scores = scores.masked_fill(~self.mask, float("-inf"))
        y = F.softmax(scores, dim=-1) @ v
        return self.o_proj(y.transpose(1, 2).reshape(B, T, -1))


class LlamaBlock(nn.Module):
    def __init__(self, hidden, heads, kv_heads, seq, ffn):
        super().__init__()
        self.input_layernorm = RMSNorm(hidden)
        self.self_attn = LlamaAttention(hidden, heads, kv_heads, seq)
        self.post_attention_layernorm = RMSNorm(hidden)
        self.gate_proj = nn.Linear(hidden, ffn, bias=False)
        self.up_proj = nn.Linear(hidden, ffn, bias=False)
        self.down_proj = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class Llama(nn.Module):
    """A LLaMA-style decoder: RMSNorm, SiLU-gated MLP, rotary embeddings,
    grouped-query attention, an untied head."""

    def __init__(self, vocab=64, seq=16, hidden=32, heads=4, kv_heads=2,
                 layers=2, ffn=48):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList(
            LlamaBlock(hidden, heads, kv_heads, seq, ffn)
            for _ in range(layers))
        self.norm = RMSNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)

    def forward(self, tokens):
        x = self.embed_tokens(tokens)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


def llama():
    torch.manual_seed(0)
    batch = {"tokens": torch.randint(0, 64, (2, 16)),
             "targets": torch.randint(0, 64, (2, 16))}
    return Llama(), language_model_loss, batch


class EncoderBlock(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(hidden)
        self.attn = nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, 2 * hidden), nn.GELU(),
                                 nn.Linear(2 * hidden, hidden))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class VisionTransformer(nn.Module):
    """A small ViT: patches by reshape and a linear map (no convolution), a
    class token, learned positions, nn.MultiheadAttention encoder blocks."""

    def __init__(self, image=8, patch=4, channels=3, hidden=16, heads=2,
                 layers=2, classes=10):
        super().__init__()
        self.patch = patch
        patches = (image // patch) ** 2
        self.patch_embed = nn.Linear(channels * patch * patch, hidden)
        self.cls_token = nn.Parameter(torch.randn(1, 1, hidden) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, patches + 1, hidden) * 0.02)
        self.blocks = nn.ModuleList(EncoderBlock(hidden, heads)
                                    for _ in range(layers))
        self.norm = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, classes)

    def forward(self, images):
        B, C, H, W = images.shape
        p = self.patch
        x = images.reshape(B, C, H // p, p, W // p, p) \
            .permute(0, 2, 4, 1, 3, 5).reshape(B, (H // p) * (W // p), C * p * p)
        x = self.patch_embed(x)
        x = torch.cat((self.cls_token.expand(B, -1, -1), x), dim=1)
        x = x + self.pos_embed
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x)[:, 0])


def classify_images(model, batch):
    return F.cross_entropy(model(batch["images"]), batch["labels"])


def vit():
    torch.manual_seed(0)
    batch = {"images": torch.randn(3, 3, 8, 8),
             "labels": torch.randint(0, 10, (3,))}
    return VisionTransformer(), classify_images, batch


class Elementwise(nn.Module):
    """A regression model that reads its activations through the rest of
    the elementwise and shape ops the importer lowers: comparisons, where,
    logical not, abs, maximum and minimum, log and log1p, sin and cos,
    rsub, scalar subtraction, filled tensors, triangles (tril, triu), all
    and any, baddbmm,
    reshape, permute, split_with_sizes and a variance. Every op is per sample (a statistic over the batch
    would differ between one process's batch and each rank's part of
    it)."""

    def __init__(self, features=6, hidden=8):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.fc1(x)
        positive = h > 0
        small = torch.logical_not(h.abs() >= 2.0)
        h = torch.where(positive & small, h, h.sin() * 0.5)
        h = torch.maximum(h, torch.full_like(h, -1.0)) + torch.minimum(
            h.cos(), torch.ones_like(h))
        h = h + torch.log1p(h * h) - 0.5 * torch.log(h * h + 1.0) \
            + (1.0 - h) * 0.25 - 0.5
        a, b = torch.split(h, [3, 5], dim=1)
        h = torch.cat((b, a), dim=1).reshape(-1, 2, 4).permute(0, 2, 1) \
            .reshape(-1, 8)
        # Triangular masks built in forward, as attention code builds its
        # causal mask: a bool one from torch.ones, an additive one from
        # torch.full, and the activations' own triangles.
        t = h.reshape(-1, 2, 4)
        keep = torch.ones(2, 4, dtype=torch.bool).tril()
        penalty = torch.full((2, 4), -0.5).triu(1)
        t = t.masked_fill(~keep, 0.0) + penalty + 0.25 * (
            t.tril(-1) - t.triu(2))
        h = t.reshape(-1, 8)
        # A row of all -inf gets 0, not NaN, from a softmax (2.x's
        # _safe_softmax): any and all along a dimension.
        pairs = h.reshape(-1, 4, 2)
        low = pairs < 0
        pairs = torch.where(torch.all(low, 2, keepdim=True), 0.5 * pairs,
                            pairs) + torch.any(low, -1, keepdim=True) * 0.125
        h = pairs.reshape(-1, 8)
        # baddbmm, as 2.x's nn.MultiheadAttention adds its mask: into the
        # broadcast input, and scaled.
        t = h.reshape(-1, 2, 4)
        bias = torch.full((1, 2, 2), 0.25)
        scores = torch.baddbmm(bias, t, t.transpose(1, 2)) * 0.1 + \
            torch.baddbmm(bias, t, t.transpose(1, 2), beta=0.5, alpha=0.05)
        h = h + 0.1 * (scores @ t).reshape(-1, 8)
        h = h + torch.zeros(h.shape) + h.lt(h.mean(1, keepdim=True)).float() \
            * 0.25 - h.ne(h).float()
        h = h / (h.var(1, keepdim=True) + 1.0)
        return self.fc2(h).squeeze(1) + 0.01 * h.sum(1)


def mean_squared_error(model, batch):
    """MSE, plus a penalty on the predictions summed over the batch (a sum
    over every element) divided by its size: a mean over the samples."""
    predictions = model(batch["inputs"])
    return F.mse_loss(predictions, batch["targets"]) + \
        0.1 * (predictions ** 2).sum() / predictions.shape[0]


def elementwise():
    torch.manual_seed(0)
    batch = {"inputs": torch.randn(4, 6), "targets": torch.randn(4)}
    return Elementwise(), mean_squared_error, batch
