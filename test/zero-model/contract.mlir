// The generated steps pass the contract checker unchanged, in both dtypes.

// RUN: zero-model mlp --layers 3 --hidden 8 --batch-size 4 \
// RUN:   | zero-opt --zero-verify-train-step | FileCheck %s --check-prefix=MLP
// RUN: zero-model mlp --layers 1 --hidden 3 --batch-size 1 --dtype f64 \
// RUN:   | zero-opt --zero-verify-train-step | FileCheck %s --check-prefix=MLP64
// RUN: zero-model gpt --num-layers 2 --hidden-size 16 --num-attention-heads 4 \
// RUN:   --seq-length 8 --batch-size 2 --vocab-size 32 \
// RUN:   | zero-opt --zero-verify-train-step | FileCheck %s --check-prefix=GPT
// RUN: zero-model gpt --num-layers 1 --hidden-size 6 --num-attention-heads 3 \
// RUN:   --seq-length 3 --batch-size 1 --vocab-size 7 --dtype f64 \
// RUN:   | zero-opt --zero-verify-train-step | FileCheck %s --check-prefix=GPT64
// RUN: zero-model mlp --layers 2 --hidden 4 --batch-size 1 --freeze='fc0.*' \
// RUN:   | zero-opt --zero-verify-train-step | FileCheck %s --check-prefix=FROZEN

// MLP-LABEL: func.func @train_step(
// MLP-SAME:    {zero.param = "fc2.bias"}
// MLP-SAME:    -> (tensor<f32> {zero.loss}
// MLP-SAME:    tensor<8xf32> {zero.grad = "fc2.bias"})

// MLP64-LABEL: func.func @train_step(
// MLP64-SAME:    -> (tensor<f64> {zero.loss}, tensor<3x3xf64> {zero.grad = "fc0.weight"}, tensor<3xf64> {zero.grad = "fc0.bias"})

// GPT-LABEL: func.func @train_step(
// GPT-SAME:    tensor<32x16xf32> {zero.param = "wte.weight"}
// GPT-SAME:    tensor<2x8xi32> {zero.data = "targets", zero.data_bound = 32 : i64})
// GPT-SAME:    tensor<16xf32> {zero.grad = "ln_f.bias"})

// GPT64-LABEL: func.func @train_step(
// GPT64-SAME:    tensor<7x6xf64> {zero.param = "wte.weight"}
// GPT64-SAME:    -> (tensor<f64> {zero.loss}

// --freeze: the first layer's weight and bias are zero.frozen and have no
// gradient result; the backward keeps only what the second layer's
// gradients need: 3 matmuls (2 forward, fc1's weight gradient) of the 5.
// FROZEN-LABEL: func.func @train_step(
// FROZEN-SAME:    %arg0: tensor<4x4xf32> {zero.frozen, zero.param = "fc0.weight"}, %arg1: tensor<4xf32> {zero.frozen, zero.param = "fc0.bias"}, %arg2: tensor<4x4xf32> {zero.param = "fc1.weight"}
// FROZEN-SAME:    -> (tensor<f32> {zero.loss}, tensor<4x4xf32> {zero.grad = "fc1.weight"}, tensor<4xf32> {zero.grad = "fc1.bias"})
// FROZEN-COUNT-3: linalg.matmul
// FROZEN-NOT:     linalg.matmul
