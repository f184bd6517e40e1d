#!/usr/bin/env python3
"""GPT-2 124M training steps in PyTorch: the baseline of benchmarks/gpu.

The model of zero-model gpt (test/zero-model/numerics/Inputs/zero_numerics.py
is its exact math): learned token and position embeddings, pre-LayerNorm
blocks (biased LayerNorm, eps 1e-5), causal multi-head attention, a 4x MLP
with tanh GELU, a final LayerNorm, the output projection tied to the token
embedding, and the mean cross entropy. Defaults: GPT-2 124M (12 layers,
hidden 768, 12 heads, 1024 positions, vocabulary 50257), micro-batch 8.

bf16 as PyTorch users train it: fp32 parameters, the forward and backward
under torch.autocast(bfloat16), and torch.optim.AdamW(fused=True) on the
fp32 parameters (zero-opt's bf16 keeps bf16 parameters and gradients and
fp32 master weights and moments: the same matmuls, a little less memory
traffic). --mode compile wraps the model in torch.compile (the optimizer
step is already one fused kernel). --attention sdpa (default) uses
F.scaled_dot_product_attention (flash attention), naive the explicit
masked softmax of zero-model's IR.

Each step: forward, backward, optimizer step, zero_grad; the GPU is
synchronized at the end of every step (as zero-run does) and the step's
wall time taken. Prints one JSON object (and writes it with --out): the
median step time and tokens/s over the steps after --warmup, the first
steps' time (compilation), the peak memory, and the losses.

Usage: torch_gpt2.py [--mode eager|compile] [--attention sdpa|naive]
                     [--steps 20] [--warmup 5] [--out FILE]
"""

import argparse
import json
import math
import statistics
import sys
import time


def build_model(args, torch):
    nn = torch.nn
    F = torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            H = args.hidden
            self.ln_1 = nn.LayerNorm(H, eps=1e-5)
            self.c_attn = nn.Linear(H, 3 * H)
            self.c_proj = nn.Linear(H, H)
            self.ln_2 = nn.LayerNorm(H, eps=1e-5)
            self.c_fc = nn.Linear(H, 4 * H)
            self.mlp_proj = nn.Linear(4 * H, H)

        def attention(self, x):
            B, S, H = x.shape
            A = args.heads
            q, k, v = self.c_attn(x).split(H, dim=2)
            q = q.view(B, S, A, H // A).transpose(1, 2)
            k = k.view(B, S, A, H // A).transpose(1, 2)
            v = v.view(B, S, A, H // A).transpose(1, 2)
            if args.attention == "sdpa":
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(H // A))
                causal = torch.ones(S, S, dtype=torch.bool,
                                    device=x.device).tril()
                att = att.masked_fill(~causal, float("-inf"))
                y = torch.softmax(att, dim=-1) @ v
            return self.c_proj(y.transpose(1, 2).reshape(B, S, H))

        def forward(self, x):
            x = x + self.attention(self.ln_1(x))
            h = F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")
            return x + self.mlp_proj(h)

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(args.vocab, args.hidden)
            self.wpe = nn.Embedding(args.seq, args.hidden)
            self.h = nn.ModuleList(Block() for _ in range(args.layers))
            self.ln_f = nn.LayerNorm(args.hidden, eps=1e-5)
            # GPT-2's initialization, as the runtime's: normal(0, 0.02),
            # biases zero, LayerNorm weights one.
            for module in self.modules():
                if isinstance(module, nn.Linear):
                    nn.init.normal_(module.weight, 0.0, 0.02)
                    nn.init.zeros_(module.bias)
                elif isinstance(module, nn.Embedding):
                    nn.init.normal_(module.weight, 0.0, 0.02)

        def forward(self, tokens, targets):
            S = tokens.shape[1]
            positions = torch.arange(S, device=tokens.device)
            x = self.wte(tokens) + self.wpe(positions)
            for block in self.h:
                x = block(x)
            logits = self.ln_f(x) @ self.wte.weight.t()  # tied
            return F.cross_entropy(logits.view(-1, logits.size(-1)).float(),
                                   targets.reshape(-1))

    return GPT()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mode", choices=["eager", "compile"], default="eager")
    parser.add_argument("--attention", choices=["sdpa", "naive"],
                        default="sdpa")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--vocab", type=int, default=50257)
    parser.add_argument("--lr", type=float, default=6e-4)
    parser.add_argument("--weight-decay", type=float, default=0.1)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out")
    # cpu: a smoke test of this script on a machine without a GPU.
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    args = parser.parse_args()
    if args.steps <= args.warmup:
        sys.exit("torch_gpt2.py: --steps must exceed --warmup")

    import torch

    cuda = args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        sys.exit("torch_gpt2.py: PyTorch sees no CUDA device")
    torch.manual_seed(args.seed)
    # fp32 matmuls (none under autocast but the loss) stay fp32, as zero-run's.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = torch.device(args.device)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    model = build_model(args, torch).to(device)
    params = sum(p.numel() for p in model.parameters())
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr,
                                  betas=(0.9, 0.999), eps=1e-8,
                                  weight_decay=args.weight_decay,
                                  **({"fused": True} if cuda else {}))
    step_model = torch.compile(model) if args.mode == "compile" else model

    # A few batches of uniform tokens, cycled (the runtime's synthetic data).
    batches = [torch.randint(0, args.vocab, (args.batch, args.seq + 1),
                             device=device) for _ in range(4)]

    def step(i):
        data = batches[i % len(batches)]
        with torch.autocast(device_type=args.device, dtype=torch.bfloat16):
            loss = step_model(data[:, :-1], data[:, 1:])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    sync()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    times, losses = [], []
    for i in range(args.steps):
        start = time.perf_counter()
        loss = step(i)
        sync()
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
        if not math.isfinite(losses[-1]):
            sys.exit("torch_gpt2.py: step %d: loss %r" % (i + 1, losses[-1]))
    timed = times[args.warmup:]
    median = statistics.median(timed)
    tokens = args.batch * args.seq
    result = {
        "framework": "pytorch %s (%s, attention %s)" % (
            torch.__version__, args.mode, args.attention),
        "mode": args.mode, "attention": args.attention,
        "device": torch.cuda.get_device_name() if cuda else "cpu",
        "parameters": params, "tokens_per_step": tokens,
        "steps": args.steps, "warmup": args.warmup,
        "step_time_s": median, "step_time_min_s": min(timed),
        "step_time_max_s": max(timed), "tokens_per_s": tokens / median,
        "first_steps_s": sum(times[:args.warmup]),
        "peak_bytes": torch.cuda.max_memory_allocated() if cuda else 0,
        "losses": losses,
    }
    text = json.dumps(result)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
