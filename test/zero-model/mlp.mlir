// RUN: zero-model mlp --layers 2 --hidden 4 --batch-size 2 | FileCheck %s
// RUN: zero-model mlp --layers 2 --hidden 4 --batch-size 2 --dtype f64 \
// RUN:   | FileCheck %s --check-prefix=F64
// RUN: zero-model mlp --layers 2 --hidden 4 --batch-size 2 -o %t
// RUN: FileCheck %s < %t

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME:    %[[W0:arg0]]: tensor<4x4xf32> {zero.param = "fc0.weight"},
// CHECK-SAME:    %[[B0:arg1]]: tensor<4xf32> {zero.param = "fc0.bias"},
// CHECK-SAME:    %[[W1:arg2]]: tensor<4x4xf32> {zero.param = "fc1.weight"},
// CHECK-SAME:    %[[B1:arg3]]: tensor<4xf32> {zero.param = "fc1.bias"},
// CHECK-SAME:    %[[X:arg4]]: tensor<2x4xf32> {zero.data = "inputs"},
// CHECK-SAME:    %[[LABELS:arg5]]: tensor<2xi32> {zero.data = "labels", zero.data_bound = 4 : i64})
// CHECK-SAME: -> (tensor<f32> {zero.loss},
// CHECK-SAME:    tensor<4x4xf32> {zero.grad = "fc0.weight"},
// CHECK-SAME:    tensor<4xf32> {zero.grad = "fc0.bias"},
// CHECK-SAME:    tensor<4x4xf32> {zero.grad = "fc1.weight"},
// CHECK-SAME:    tensor<4xf32> {zero.grad = "fc1.bias"})

// Layer 0: x W0 accumulated onto the broadcast bias, then ReLU; its ops
// are segment 0 (docs/TrainingStepIR.md), layer 1's segment 1.
// CHECK:      %[[BB0:.*]] = linalg.broadcast ins(%[[B0]] : tensor<4xf32>) outs(%{{.*}} : tensor<2x4xf32>) dimensions = [0] {zero.segment = 0 : i64}
// CHECK:      %[[Z0:.*]] = linalg.matmul {zero.segment = 0 : i64} ins(%[[X]], %[[W0]] : tensor<2x4xf32>, tensor<4x4xf32>) outs(%[[BB0]] : tensor<2x4xf32>)
// CHECK:      %[[A1:.*]] = linalg.map ins(%[[Z0]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xf32>) {zero.segment = 0 : i64}
// CHECK:        arith.maximumf
// Layer 1 gives the logits; no ReLU after it.
// CHECK:      %[[BB1:.*]] = linalg.broadcast ins(%[[B1]] : tensor<4xf32>)
// CHECK:      %[[LOGITS:.*]] = linalg.matmul {zero.segment = 1 : i64} ins(%[[A1]], %[[W1]] : tensor<2x4xf32>, tensor<4x4xf32>) outs(%[[BB1]] : tensor<2x4xf32>)
// CHECK-NOT:    arith.maximumf %in, %cst
// Cross-entropy: logsumexp minus the label's logit, picked with a one-hot.
// CHECK:      linalg.reduce ins(%[[LOGITS]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<2xf32>) dimensions = [1]
// CHECK:        arith.maximumf
// CHECK:      %[[ONEHOT:.*]] = linalg.generic {{.*}} ins(%[[LABELS]] : tensor<2xi32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:        linalg.index 1
// CHECK:        arith.cmpi eq
// CHECK:      %[[LOSS:.*]] = linalg.reduce ins(%{{.*}} : tensor<2xf32>) outs(%{{.*}} : tensor<f32>) dimensions = [0]
// dlogits = (softmax - onehot) / B.
// CHECK:      %[[DZ1:.*]] = linalg.map ins(%{{.*}}, %{{.*}}, %[[ONEHOT]] : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK:        arith.divf
// CHECK:        arith.subf
// Layer 1 backward: dW1 = a1^T dz1, db1 = colsum(dz1), da1 = dz1 W1^T.
// CHECK:      %[[A1T:.*]] = linalg.transpose ins(%[[A1]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<4x2xf32>) permutation = [1, 0]
// CHECK:      %[[DW1:.*]] = linalg.matmul ins(%[[A1T]], %[[DZ1]] : tensor<4x2xf32>, tensor<2x4xf32>)
// CHECK:      %[[DB1:.*]] = linalg.reduce ins(%[[DZ1]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<4xf32>) dimensions = [0]
// CHECK:      %[[W1T:.*]] = linalg.transpose ins(%[[W1]] : tensor<4x4xf32>)
// CHECK:      %[[DA1:.*]] = linalg.matmul ins(%[[DZ1]], %[[W1T]] : tensor<2x4xf32>, tensor<4x4xf32>)
// ReLU backward: pass the gradient where z0 > 0.
// CHECK:      %[[DZ0:.*]] = linalg.map ins(%[[Z0]], %[[DA1]] : tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK:        arith.cmpf ogt
// CHECK:        arith.select
// Layer 0 backward needs no dx.
// CHECK:      %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<2x4xf32>)
// CHECK:      %[[DW0:.*]] = linalg.matmul ins(%[[XT]], %[[DZ0]] : tensor<4x2xf32>, tensor<2x4xf32>)
// CHECK:      %[[DB0:.*]] = linalg.reduce ins(%[[DZ0]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<4xf32>) dimensions = [0]
// CHECK-NOT:  linalg.matmul
// CHECK:      return %[[LOSS]], %[[DW0]], %[[DB0]], %[[DW1]], %[[DB1]] : tensor<f32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4xf32>

// F64-LABEL: func.func @train_step(
// F64-SAME:    tensor<4x4xf64> {zero.param = "fc0.weight"}
// F64-SAME:    tensor<2x4xf64> {zero.data = "inputs"}, %arg5: tensor<2xi32> {zero.data = "labels", zero.data_bound = 4 : i64})
// F64-SAME:    -> (tensor<f64> {zero.loss}, tensor<4x4xf64> {zero.grad = "fc0.weight"}
// F64-NOT:     f32
