// RUN: zero-model gpt --num-layers 2 --hidden-size 8 --num-attention-heads 2 \
// RUN:   --seq-length 4 --batch-size 2 --vocab-size 11 | FileCheck %s
// RUN: zero-model gpt --num-layers 2 --hidden-size 8 --num-attention-heads 2 \
// RUN:   --seq-length 4 --batch-size 2 --vocab-size 11 --dtype f64 \
// RUN:   | FileCheck %s --check-prefix=F64
// RUN: zero-model gpt --num-layers 2 --hidden-size 8 --num-attention-heads 2 \
// RUN:   --seq-length 4 --batch-size 2 --vocab-size 11 \
// RUN:   | FileCheck %s --check-prefix=NODENSE

// GPT-2 with B=2, S=4, H=8, A=2 (D=4), V=11: N = B*S = 8 tokens.

// The signature: parameters in model order, then data; the loss, then one
// gradient per parameter in parameter order.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME:   %[[WTE:arg0]]: tensor<11x8xf32> {zero.param = "wte.weight"},
// CHECK-SAME:   %[[WPE:arg1]]: tensor<4x8xf32> {zero.param = "wpe.weight"},
// CHECK-SAME:   %arg2: tensor<8xf32> {zero.param = "h.0.ln_1.weight"},
// CHECK-SAME:   %arg3: tensor<8xf32> {zero.param = "h.0.ln_1.bias"},
// CHECK-SAME:   %arg4: tensor<8x24xf32> {zero.param = "h.0.attn.c_attn.weight"},
// CHECK-SAME:   %arg5: tensor<24xf32> {zero.param = "h.0.attn.c_attn.bias"},
// CHECK-SAME:   %arg6: tensor<8x8xf32> {zero.param = "h.0.attn.c_proj.weight"},
// CHECK-SAME:   %arg7: tensor<8xf32> {zero.param = "h.0.attn.c_proj.bias"},
// CHECK-SAME:   %arg8: tensor<8xf32> {zero.param = "h.0.ln_2.weight"},
// CHECK-SAME:   %arg9: tensor<8xf32> {zero.param = "h.0.ln_2.bias"},
// CHECK-SAME:   %arg10: tensor<8x32xf32> {zero.param = "h.0.mlp.c_fc.weight"},
// CHECK-SAME:   %arg11: tensor<32xf32> {zero.param = "h.0.mlp.c_fc.bias"},
// CHECK-SAME:   %arg12: tensor<32x8xf32> {zero.param = "h.0.mlp.c_proj.weight"},
// CHECK-SAME:   %arg13: tensor<8xf32> {zero.param = "h.0.mlp.c_proj.bias"},
// CHECK-SAME:   %arg14: tensor<8xf32> {zero.param = "h.1.ln_1.weight"},
// CHECK-SAME:   %arg15: tensor<8xf32> {zero.param = "h.1.ln_1.bias"},
// CHECK-SAME:   %arg16: tensor<8x24xf32> {zero.param = "h.1.attn.c_attn.weight"},
// CHECK-SAME:   %arg17: tensor<24xf32> {zero.param = "h.1.attn.c_attn.bias"},
// CHECK-SAME:   %arg18: tensor<8x8xf32> {zero.param = "h.1.attn.c_proj.weight"},
// CHECK-SAME:   %arg19: tensor<8xf32> {zero.param = "h.1.attn.c_proj.bias"},
// CHECK-SAME:   %arg20: tensor<8xf32> {zero.param = "h.1.ln_2.weight"},
// CHECK-SAME:   %arg21: tensor<8xf32> {zero.param = "h.1.ln_2.bias"},
// CHECK-SAME:   %arg22: tensor<8x32xf32> {zero.param = "h.1.mlp.c_fc.weight"},
// CHECK-SAME:   %arg23: tensor<32xf32> {zero.param = "h.1.mlp.c_fc.bias"},
// CHECK-SAME:   %arg24: tensor<32x8xf32> {zero.param = "h.1.mlp.c_proj.weight"},
// CHECK-SAME:   %arg25: tensor<8xf32> {zero.param = "h.1.mlp.c_proj.bias"},
// CHECK-SAME:   %arg26: tensor<8xf32> {zero.param = "ln_f.weight"},
// CHECK-SAME:   %arg27: tensor<8xf32> {zero.param = "ln_f.bias"},
// CHECK-SAME:   %[[TOKENS:arg28]]: tensor<2x4xi32> {zero.data = "tokens", zero.data_bound = 11 : i64},
// CHECK-SAME:   %[[TARGETS:arg29]]: tensor<2x4xi32> {zero.data = "targets", zero.data_bound = 11 : i64})
// CHECK-SAME: -> (tensor<f32> {zero.loss},
// CHECK-SAME:   tensor<11x8xf32> {zero.grad = "wte.weight"},
// CHECK-SAME:   tensor<4x8xf32> {zero.grad = "wpe.weight"},
// CHECK-SAME:   tensor<8xf32> {zero.grad = "h.0.ln_1.weight"},
// CHECK-SAME:   tensor<8xf32> {zero.grad = "h.0.ln_1.bias"},
// CHECK-SAME:   tensor<8x24xf32> {zero.grad = "h.0.attn.c_attn.weight"},
// CHECK-SAME:   tensor<24xf32> {zero.grad = "h.0.attn.c_attn.bias"},
// CHECK-SAME:   tensor<8x8xf32> {zero.grad = "h.0.attn.c_proj.weight"},
// CHECK-SAME:   tensor<8xf32> {zero.grad = "h.0.attn.c_proj.bias"},
// CHECK-SAME:   tensor<8xf32> {zero.grad = "h.0.ln_2.weight"},
// CHECK-SAME:   tensor<8xf32> {zero.grad = "h.0.ln_2.bias"},
// CHECK-SAME:   tensor<8x32xf32> {zero.grad = "h.0.mlp.c_fc.weight"},
// CHECK-SAME:   tensor<32xf32> {zero.grad = "h.0.mlp.c_fc.bias"},
// CHECK-SAME:   tensor<32x8xf32> {zero.grad = "h.0.mlp.c_proj.weight"},
// CHECK-SAME:   tensor<8xf32> {zero.grad = "h.0.mlp.c_proj.bias"},
// CHECK-SAME:   tensor<8xf32> {zero.grad = "h.1.ln_1.weight"},
// CHECK-SAME:   tensor<8xf32> {zero.grad = "h.1.ln_1.bias"},
// CHECK-SAME:   tensor<8x24xf32> {zero.grad = "h.1.attn.c_attn.weight"},
// CHECK-SAME:   tensor<24xf32> {zero.grad = "h.1.attn.c_attn.bias"},
// CHECK-SAME:   tensor<8x8xf32> {zero.grad = "h.1.attn.c_proj.weight"},
// CHECK-SAME:   tensor<8xf32> {zero.grad = "h.1.attn.c_proj.bias"},
// CHECK-SAME:   tensor<8xf32> {zero.grad = "h.1.ln_2.weight"},
// CHECK-SAME:   tensor<8xf32> {zero.grad = "h.1.ln_2.bias"},
// CHECK-SAME:   tensor<8x32xf32> {zero.grad = "h.1.mlp.c_fc.weight"},
// CHECK-SAME:   tensor<32xf32> {zero.grad = "h.1.mlp.c_fc.bias"},
// CHECK-SAME:   tensor<32x8xf32> {zero.grad = "h.1.mlp.c_proj.weight"},
// CHECK-SAME:   tensor<8xf32> {zero.grad = "h.1.mlp.c_proj.bias"},
// CHECK-SAME:   tensor<8xf32> {zero.grad = "ln_f.weight"},
// CHECK-SAME:   tensor<8xf32> {zero.grad = "ln_f.bias"})

// Embedding: the tied wte is gathered with the flattened tokens; wpe is
// repeated for every sequence.
// CHECK:      %[[TOK:.*]] = tensor.collapse_shape %[[TOKENS]] {{\[\[}}0, 1]] : tensor<2x4xi32> into tensor<8xi32>
// CHECK:      %[[TGT:.*]] = tensor.collapse_shape %[[TARGETS]] {{\[\[}}0, 1]] : tensor<2x4xi32> into tensor<8xi32>
// CHECK:      linalg.broadcast ins(%[[WPE]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<2x4x8xf32>) dimensions = [0]
// CHECK:      linalg.generic {{.*}} ins(%[[TOK]] : tensor<8xi32>) outs(%{{.*}} : tensor<8x8xf32>)
// CHECK:        arith.index_cast
// CHECK:        linalg.index 1
// CHECK:        tensor.extract %[[WTE]][

// The causal mask, built once: -inf where key > query.
// CHECK:      linalg.generic {{.*}} outs(%{{.*}} : tensor<4x4xf32>)
// CHECK:        %[[QI:.*]] = linalg.index 0
// CHECK:        %[[KI:.*]] = linalg.index 1
// CHECK:        arith.cmpi sgt, %[[KI]], %[[QI]]
// CHECK:        arith.constant 0xFF800000 : f32
// CHECK:      %[[MASK:.*]] = linalg.broadcast ins(%{{.*}} : tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4x4xf32>) dimensions = [0]

// Block 0 attention: one c_attn matmul (bias as its init), q, k, v split
// along the columns, heads as a [B*A, S, D] batch. Every forward op of
// block i is marked zero.segment = i (the embedding, the mask, ln_f and the
// head are not).
// CHECK:      %[[QKV:.*]] = linalg.matmul {zero.segment = 0 : i64} ins(%{{.*}}, %arg4 : tensor<8x8xf32>, tensor<8x24xf32>)
// CHECK:      tensor.extract_slice %[[QKV]][0, 0] [8, 8] [1, 1]
// CHECK:      tensor.extract_slice %[[QKV]][0, 8] [8, 8] [1, 1]
// CHECK:      tensor.extract_slice %[[QKV]][0, 16] [8, 8] [1, 1]
// CHECK:      tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2, 3]] output_shape [2, 4, 2, 4] {zero.segment = 0 : i64} : tensor<8x8xf32> into tensor<2x4x2x4xf32>
// CHECK:      linalg.transpose ins(%{{.*}} : tensor<2x4x2x4xf32>) outs(%{{.*}} : tensor<2x2x4x4xf32>) permutation = [0, 2, 1, 3]
// CHECK:      tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] {zero.segment = 0 : i64} : tensor<2x2x4x4xf32> into tensor<4x4x4xf32>
// CHECK:      %[[SCORES:.*]] = linalg.batch_matmul {zero.segment = 0 : i64} ins(%{{.*}}, %{{.*}} : tensor<4x4x4xf32>, tensor<4x4x4xf32>)
// CHECK:      linalg.map ins(%[[SCORES]], %[[MASK]] : tensor<4x4x4xf32>, tensor<4x4x4xf32>)
// CHECK:        arith.constant 5.000000e-01 : f32
// CHECK:      linalg.reduce ins(%{{.*}} : tensor<4x4x4xf32>) outs(%{{.*}} : tensor<4x4xf32>) dimensions = [2]
// CHECK:        arith.maximumf
// CHECK:        math.exp
// CHECK:      %[[PV:.*]] = linalg.batch_matmul
// CHECK:      tensor.expand_shape %[[PV]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 2, 4, 4]
// CHECK:      linalg.transpose {{.*}} permutation = [0, 2, 1, 3]
// CHECK:      tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2, 3]] {zero.segment = 0 : i64} : tensor<2x4x2x4xf32> into tensor<8x8xf32>
// CHECK:      linalg.matmul {zero.segment = 0 : i64} ins(%{{.*}}, %arg6 : tensor<8x8xf32>, tensor<8x8xf32>)
// Block 0 MLP with tanh GELU.
// CHECK:      linalg.matmul {zero.segment = 0 : i64} ins(%{{.*}}, %arg10 : tensor<8x8xf32>, tensor<8x32xf32>)
// CHECK:        math.tanh
// CHECK:      linalg.matmul {zero.segment = 0 : i64} ins(%{{.*}}, %arg12 : tensor<8x32xf32>, tensor<32x8xf32>)
// Block 1.
// CHECK:      linalg.matmul {zero.segment = 1 : i64} ins(%{{.*}}, %arg16 : tensor<8x8xf32>, tensor<8x24xf32>)

// Tied LM head: logits = ln_f(x) wte^T.
// CHECK:      %[[WTET:.*]] = linalg.transpose ins(%[[WTE]] : tensor<11x8xf32>) outs(%{{.*}} : tensor<8x11xf32>) permutation = [1, 0]
// CHECK:      linalg.matmul ins(%[[LNF:[^,]+]], %[[WTET]] : tensor<8x8xf32>, tensor<8x11xf32>)
// Cross-entropy against the one-hot targets; the mean loss.
// CHECK:      linalg.generic {{.*}} ins(%[[TGT]] : tensor<8xi32>) outs(%{{.*}} : tensor<8x11xf32>)
// CHECK:        linalg.index 1
// CHECK:        arith.cmpi eq
// CHECK:      %[[LOSS:.*]] = linalg.reduce ins(%{{.*}} : tensor<8xf32>) outs(%{{.*}} : tensor<f32>) dimensions = [0]
// CHECK:      %[[DLOGITS:.*]] = linalg.map ins(

// LM head backward: d ln_f = dlogits wte; the head's part of d wte is
// dlogits^T ln_f.
// CHECK:      linalg.matmul ins(%[[DLOGITS]], %[[WTE]] : tensor<8x11xf32>, tensor<11x8xf32>)
// CHECK:      %[[DLOGITST:.*]] = linalg.transpose ins(%[[DLOGITS]] : tensor<8x11xf32>) outs(%{{.*}} : tensor<11x8xf32>)
// CHECK:      %[[DWTE_HEAD:.*]] = linalg.matmul ins(%[[DLOGITST]], %[[LNF]] : tensor<11x8xf32>, tensor<8x8xf32>)

// Attention backward of block 1 (blocks run in reverse): dV = P^T dY,
// dP = dY V^T, dQ = scale dS K, dK = scale dS^T Q, merged into one dqkv.
// CHECK:      linalg.transpose ins(%{{.*}} : tensor<4x4x4xf32>) outs(%{{.*}} : tensor<4x4x4xf32>) permutation = [0, 2, 1]
// CHECK:      linalg.batch_matmul
// CHECK:      linalg.batch_matmul
// CHECK:      linalg.batch_matmul
// CHECK:      linalg.batch_matmul
// CHECK:      tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [8, 8] [1, 1] : tensor<8x8xf32> into tensor<8x24xf32>
// CHECK:      tensor.insert_slice %{{.*}} into %{{.*}}[0, 8] [8, 8] [1, 1] : tensor<8x8xf32> into tensor<8x24xf32>
// CHECK:      tensor.insert_slice %{{.*}} into %{{.*}}[0, 16] [8, 8] [1, 1] : tensor<8x8xf32> into tensor<8x24xf32>

// wpe's gradient sums dx over the batch.
// CHECK:      tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 4, 8] : tensor<8x8xf32> into tensor<2x4x8xf32>
// CHECK:      %[[DWPE:.*]] = linalg.reduce ins(%{{.*}} : tensor<2x4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>) dimensions = [0]
// wte's gradient: the lookup's scatter-add as onehot(tokens)^T dx, accumulated
// onto the LM head's part.
// CHECK:      %[[ONEHOT_T:.*]] = linalg.generic {{.*}} ins(%[[TOK]] : tensor<8xi32>) outs(%{{.*}} : tensor<11x8xf32>)
// CHECK:        linalg.index 0
// CHECK:      %[[DWTE:.*]] = linalg.matmul ins(%[[ONEHOT_T]], %{{.*}} : tensor<11x8xf32>, tensor<8x8xf32>) outs(%[[DWTE_HEAD]] : tensor<11x8xf32>)
// CHECK:      return %[[LOSS]], %[[DWTE]], %[[DWPE]], {{.*}} : tensor<f32>, tensor<11x8xf32>, tensor<4x8xf32>,

// No dense constants at all (the IR holds shapes, not weights): scalars and
// fills only.
// NODENSE-NOT: dense<

// F64-LABEL: func.func @train_step(
// F64-SAME:    tensor<11x8xf64> {zero.param = "wte.weight"}
// F64-SAME:    tensor<2x4xi32> {zero.data = "tokens", zero.data_bound = 11 : i64}
// F64-SAME:    -> (tensor<f64> {zero.loss}, tensor<11x8xf64> {zero.grad = "wte.weight"}
// F64-NOT:     f32
