// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-mixed-precision="precision=bf16" \
// RUN:   --zero-compute-precision="compute-type=auto precision=bf16" \
// RUN:   | FileCheck %s
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-compute-precision="compute-type=f16" \
// RUN:   | FileCheck %s --check-prefix=F16
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-mixed-precision="precision=bf16" \
// RUN:   --zero-compute-precision="compute-type=f32 precision=bf16" \
// RUN:   | FileCheck %s --check-prefix=F32
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-compute-precision="compute-type=auto precision=fp32" \
// RUN:   | FileCheck %s --check-prefix=F32
// RUN: zero-opt %S/Inputs/two-layer-step.mlir --zero-fold-transposes \
// RUN:   --zero-mixed-precision="precision=bf16" \
// RUN:   --zero-compute-precision="compute-type=auto precision=bf16" \
// RUN:   | FileCheck %s --check-prefix=FOLDED
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-compute-precision="compute-type=tf32" \
// RUN:   | FileCheck %s --check-prefix=TF32
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-compute-precision="compute-type=tf16" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD

// auto under bf16 storage: every GEMM reads bf16 operands and accumulates
// into its f32 init. A parameter is read as its bf16 self (the f32 copy
// zero-mixed-precision made is gone), a transposed parameter is transposed
// in bf16, and an activation is truncated once, right after it is made, for
// every GEMM that reads it.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[W0:[^:]*]]: tensor<4x4xbf16> {zero.param = "w0"}
// CHECK-SAME: %[[W1:[^:]*]]: tensor<4x4xbf16> {zero.param = "w1"}
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32> {zero.data = "x"}
// CHECK:      %[[XB:.*]] = linalg.map { arith.truncf } ins(%[[X]] : tensor<2x4xf32>)
// CHECK:      %[[H0:.*]] = linalg.matmul ins(%[[XB]], %[[W0]] : tensor<2x4xbf16>, tensor<4x4xbf16>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK-NEXT: tensor.empty() : tensor<2x4xbf16>
// CHECK-NEXT: %[[H0B:.*]] = linalg.map { arith.truncf } ins(%[[H0]] : tensor<2x4xf32>)
// CHECK-NEXT: %[[H1:.*]] = linalg.matmul ins(%[[H0B]], %[[W1]] : tensor<2x4xbf16>, tensor<4x4xbf16>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:      %[[W1T:.*]] = linalg.transpose ins(%[[W1]] : tensor<4x4xbf16>) outs(%{{.*}} : tensor<4x4xbf16>) permutation = [1, 0]
// CHECK:      linalg.matmul ins(%{{.*}}, %[[W1T]] : tensor<2x4xbf16>, tensor<4x4xbf16>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:      %[[H0T:.*]] = linalg.transpose ins(%[[H0B]] : tensor<2x4xbf16>) outs(%{{.*}} : tensor<4x2xbf16>) permutation = [1, 0]
// CHECK:      linalg.matmul ins(%[[H0T]], %{{.*}} : tensor<4x2xbf16>, tensor<2x4xbf16>) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK-NOT:  linalg.matmul ins({{.*}} : tensor<{{.*}}xf32>, tensor<{{.*}}xf32>)
// CHECK:      return

// An explicit compute type applies whatever the storage: f16 operands.
// F16-LABEL: func.func @step(
// F16-COUNT-6: linalg.matmul ins({{.*}} : tensor<{{[0-9x]+}}xf16>, tensor<{{[0-9x]+}}xf16>) outs({{.*}} : tensor<{{[0-9x]+}}xf32>)

// f32, or auto under fp32 storage, leaves the GEMMs as they are.
// F32-COUNT-6: linalg.matmul ins({{.*}} : tensor<{{[0-9x]+}}xf32>, tensor<{{[0-9x]+}}xf32>)
// F32-NOT: arith.truncf {{.*}} to bf16

// tf32 keeps the f32 operands and marks every GEMM as rounding them to tf32
// (tensor cores' f32 mode); nothing is truncated.
// TF32-LABEL: func.func @step(
// TF32-COUNT-6: linalg.matmul {zero.round_operands = tf32} ins({{.*}} : tensor<{{[0-9x]+}}xf32>, tensor<{{[0-9x]+}}xf32>) outs({{.*}} : tensor<{{[0-9x]+}}xf32>)
// TF32-NOT: arith.truncf

// The option is an enum: auto, f32, tf32, bf16, f16 (--help).
// BAD: zero-opt: for the --compute-type option: Cannot find option named 'tf16'!

// A GEMM that reads an operand transposed (zero-fold-transposes, which the
// pipeline runs first) keeps its maps: the bf16 parameter is read
// transposed in place, and the bf16 activation too.
// FOLDED-DAG:  #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// FOLDED-DAG:  #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// FOLDED-DAG:  #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// FOLDED-DAG:  #[[AT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// FOLDED-DAG:  #[[B:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// FOLDED-LABEL: func.func @step(
// FOLDED-SAME: %[[W0:[^:]*]]: tensor<4x4xbf16> {zero.param = "w0"}
// FOLDED-SAME: %[[W1:[^:]*]]: tensor<4x4xbf16> {zero.param = "w1"}
// FOLDED:      linalg.matmul indexing_maps = [#[[A]], #[[BT]], #[[C]]] ins(%{{.*}}, %[[W1]] : tensor<2x4xbf16>, tensor<4x4xbf16>) outs(%{{.*}} : tensor<2x4xf32>)
// FOLDED:      linalg.matmul indexing_maps = [#[[AT]], #[[B]], #[[C]]] ins(%{{.*}}, %{{.*}} : tensor<2x4xbf16>, tensor<2x4xbf16>) outs(%{{.*}} : tensor<4x4xf32>)
// FOLDED-NOT:  linalg.transpose
