// GPT-2's token embedding is used twice, far apart: by the embedding lookup
// at the start and by the LM head (logits = x wte^T) and its backward at the
// end. No annotation is needed (DeepSpeed requires registering it as an
// "external parameter"): every use is in the IR. At stage 3 with no reuse
// allowed, wte is gathered for each group of uses and released after it;
// the schedule verifier at the end of the pipeline proves that no use
// follows a release.
// RUN: zero-model gpt --num-layers 1 --hidden-size 8 --num-attention-heads 2 \
// RUN:   --seq-length 4 --batch-size 1 --vocab-size 16 \
// RUN: | zero-opt --zero-pipeline="stage=3 world-size=2 param-persistence-threshold=0 max-reuse-distance=0 prefetch-bucket-size=0 fold-transposes=false" \
// RUN: | FileCheck %s
// With the default reuse distance, wte stays gathered from the lookup to
// the LM head: one gather, one release.
// RUN: zero-model gpt --num-layers 1 --hidden-size 8 --num-attention-heads 2 \
// RUN:   --seq-length 4 --batch-size 1 --vocab-size 16 \
// RUN: | zero-opt --zero-pipeline="stage=3 world-size=2 param-persistence-threshold=0 prefetch-bucket-size=0 fold-transposes=false" \
// RUN: | FileCheck %s --check-prefix=REUSE

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[WTE:[^:]*]]: tensor<64xf32> {zero.layout = #zero.layout<shape = [16, 8], world_size = 2>, {{.*}}zero.param = "wte.weight"}

// The lookup reads the gathered table inside its body.
// CHECK:      %[[H1:.*]] = zero.all_gather_start %[[WTE]] layouts [#zero.layout<shape = [16, 8], world_size = 2>] : tensor<64xf32>
// CHECK-NEXT: %[[F1:.*]] = zero.wait %[[H1]] {{.*}}: tensor<16x8xf32>
// CHECK-NEXT: linalg.generic
// CHECK:      tensor.extract %[[F1]][
// CHECK:      zero.release %[[F1]] : tensor<16x8xf32>
// CHECK-NOT:  %[[F1]]{{[^0-9a-z_]}}

// The LM head: transposed for the logits, read again by the backward pass
// (d ln_f = d logits @ wte), then released.
// CHECK:      %[[H2:.*]] = zero.all_gather_start %[[WTE]] layouts [#zero.layout<shape = [16, 8], world_size = 2>] : tensor<64xf32>
// CHECK-NEXT: %[[F2:.*]] = zero.wait %[[H2]] {{.*}}: tensor<16x8xf32>
// CHECK-NEXT: linalg.transpose ins(%[[F2]] : tensor<16x8xf32>)
// CHECK:      linalg.matmul {{.*}}ins(%{{.*}}, %[[F2]] : tensor<4x16xf32>, tensor<16x8xf32>)
// CHECK-NEXT: zero.release %[[F2]] : tensor<16x8xf32>
// CHECK-NOT:  %[[F2]]{{[^0-9a-z_]}}
// CHECK-NOT:  zero.all_gather_start %[[WTE]] layouts

// Both uses' gradients are summed into one gradient, reduce-scattered once.
// CHECK:      zero.reduce_scatter_start avg {{.*}}"wte.weight"
// CHECK-NOT:  "wte.weight"]
// CHECK:      return

// REUSE-LABEL: func.func @train_step(
// REUSE-SAME: %[[WTE:[^:]*]]: tensor<64xf32> {zero.layout = #zero.layout<shape = [16, 8], world_size = 2>, {{.*}}zero.param = "wte.weight"}
// REUSE:      %[[H:.*]] = zero.all_gather_start %[[WTE]] layouts
// REUSE-NEXT: %[[F:.*]] = zero.wait %[[H]]
// REUSE:      tensor.extract %[[F]][
// REUSE:      linalg.transpose ins(%[[F]] : tensor<16x8xf32>)
// REUSE:      zero.release %[[F]] : tensor<16x8xf32>
// REUSE-NOT:  zero.all_gather_start %[[WTE]] layouts
// REUSE:      return
