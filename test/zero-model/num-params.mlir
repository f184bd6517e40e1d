// Parameter counts: V*H + S*H + L*(12H^2 + 13H) + 2H for gpt, N*(H^2 + H)
// for mlp.

// GPT-2 XL (1.5B).
// RUN: zero-model gpt --num-layers 48 --hidden-size 1600 \
// RUN:   --num-attention-heads 16 --seq-length 1024 --batch-size 1 \
// RUN:   --vocab-size 50257 --print-num-params | FileCheck %s --check-prefix=XL
// XL: parameters: 1557611200

// The defaults are GPT-2 small (124M).
// RUN: zero-model gpt --print-num-params | FileCheck %s --check-prefix=SMALL
// SMALL: parameters: 124439808

// RUN: zero-model mlp --layers 3 --hidden 64 --batch-size 8 --print-num-params \
// RUN:   | FileCheck %s --check-prefix=MLP
// MLP: parameters: 12480

// The full 1.5B step is generated from shapes alone: no dense constants, and
// it passes the contract checker.
// RUN: zero-model gpt --num-layers 48 --hidden-size 1600 \
// RUN:   --num-attention-heads 16 --seq-length 1024 --batch-size 1 \
// RUN:   --vocab-size 50257 | zero-opt --zero-verify-train-step \
// RUN:   | FileCheck %s --check-prefix=XLIR
// XLIR:      %arg0: tensor<50257x1600xf32> {zero.param = "wte.weight"}
// XLIR-SAME: %arg574: tensor<1600x6400xf32> {zero.param = "h.47.mlp.c_fc.weight"}
// XLIR-SAME: %arg579: tensor<1600xf32> {zero.param = "ln_f.bias"}
// XLIR-SAME: %arg580: tensor<1x1024xi32> {zero.data = "tokens", zero.data_bound = 50257 : i64}
// XLIR-SAME: tensor<1600xf32> {zero.grad = "ln_f.bias"})
// XLIR-NOT:  dense<
