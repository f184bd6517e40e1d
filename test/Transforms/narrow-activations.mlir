// RUN: zero-opt %s --zero-narrow-activations="precision=bf16" | FileCheck %s
// RUN: zero-opt %s --zero-narrow-activations="compute-type=f16" \
// RUN:   | FileCheck %s --check-prefix=F16
// RUN: zero-opt %s --zero-narrow-activations="compute-type=f32 precision=bf16" \
// RUN:   | FileCheck %s --check-prefix=F32
// RUN: zero-opt %s --zero-narrow-activations \
// RUN:   | FileCheck %s --check-prefix=F32
// RUN: zero-opt %s --zero-narrow-activations="precision=fp16" \
// RUN:   | FileCheck %s --check-prefix=F32

// Under bf16 (compute-type auto), what the elementwise ops make is stored
// in bf16 and read widened; what GEMMs and reductions make, the statistics
// made from reductions only, and what the step returns stay f32.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[W:[^:]*]]: tensor<4x4xbf16>
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32>
// The gather reads the bf16 parameter (its f32 copy is gone) and yields the
// element as it is: no widening and rounding back.
// CHECK:      %[[EMB:.*]] = linalg.generic
// CHECK-SAME:   outs(%{{.*}} : tensor<2x4xbf16>)
// CHECK:        %[[V:.*]] = tensor.extract %[[W]][{{.*}}] : tensor<4x4xbf16>
// CHECK-NEXT:   linalg.yield %[[V]] : bf16
// The sum computes in f32 and rounds what it yields; the data stays f32.
// CHECK:      %[[H:.*]] = linalg.map ins(%[[EMB]], %[[X]] : tensor<2x4xbf16>, tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xbf16>)
// CHECK-NEXT:   (%[[IN:.*]]: bf16, %[[IN1:.*]]: f32, %{{.*}}: bf16) {
// CHECK-NEXT:   %[[WIDE:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT:   %[[SUM:.*]] = arith.addf %[[WIDE]], %[[IN1]] : f32
// CHECK-NEXT:   %[[ROUND:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK-NEXT:   linalg.yield %[[ROUND]] : bf16
// A reduction widens what it reads and accumulates in f32; the statistic
// made from it, and its broadcast, stay f32.
// CHECK:      %[[S:.*]] = linalg.reduce ins(%[[H]] : tensor<2x4xbf16>) outs(%{{.*}} : tensor<2xf32>)
// CHECK-NEXT:   (%{{.*}}: bf16, %{{.*}}: f32) {
// CHECK-NEXT:   arith.extf
// CHECK:      %[[R:.*]] = linalg.map { math.rsqrt } ins(%[[S]] : tensor<2xf32>) outs(%{{.*}} : tensor<2xf32>)
// CHECK:      %[[RB:.*]] = linalg.broadcast ins(%[[R]] : tensor<2xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:      %[[N:.*]] = linalg.map ins(%[[H]], %[[RB]] : tensor<2x4xbf16>, tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xbf16>)
// The GEMM's operand cast rounded a value that is bf16 now: erased.
// CHECK-NOT:  linalg.map { arith.truncf }
// CHECK:      %[[Y:.*]] = linalg.matmul ins(%[[N]], %[[W]] : tensor<2x4xbf16>, tensor<4x4xbf16>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:      %[[A:.*]] = linalg.map ins(%[[Y]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xbf16>)
// CHECK:      %[[LOSS:.*]] = linalg.reduce ins(%[[A]] : tensor<2x4xbf16>) outs(%{{.*}} : tensor<f32>)
// A statistic with a constant beside it (a variance plus epsilon) is a
// statistic; an activation that a GEMM's init reads stays f32.
// CHECK:      %[[EPS:.*]] = linalg.fill
// CHECK:      %[[VAR:.*]] = linalg.map { arith.addf } ins(%[[S]], %[[EPS]] : tensor<2xf32>, tensor<2xf32>) outs(%{{.*}} : tensor<2xf32>)
// CHECK:      %[[BIAS:.*]] = linalg.map ins(%[[H]], %{{.*}} : tensor<2x4xbf16>, tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:      %[[Y2:.*]] = linalg.matmul ins(%[[N]], %[[W]] : tensor<2x4xbf16>, tensor<4x4xbf16>) outs(%[[BIAS]] : tensor<2x4xf32>)
// CHECK:      %[[KEPT:.*]] = linalg.map { arith.mulf } ins(%[[Y]], %[[Y2]] : tensor<2x4xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// A constant made from no tensor (a causal mask) is no statistic: it and its
// broadcast are narrowed as one group, the broadcast moving bf16 elements.
// CHECK:      %[[MASK:.*]] = linalg.generic
// CHECK-SAME:   outs(%{{.*}} : tensor<2x2xbf16>)
// CHECK:      %[[MASKB:.*]] = linalg.broadcast ins(%[[MASK]] : tensor<2x2xbf16>) outs(%{{.*}} : tensor<2x2x2xbf16>)
// CHECK:      %[[MASKED:.*]] = linalg.map ins(%[[MASKB]] : tensor<2x2x2xbf16>) outs(%{{.*}} : tensor<2x2x2xbf16>)
// CHECK:      %[[TOTAL:.*]] = linalg.reduce ins(%[[MASKED]] : tensor<2x2x2xbf16>) outs(%{{.*}} : tensor<f32>)
// CHECK:      return %[[LOSS]], %[[KEPT]], %[[TOTAL]] : tensor<f32>, tensor<2x4xf32>, tensor<f32>

// An explicit compute type applies whatever the storage.
// F16-LABEL: func.func @step(
// F16: linalg.map ins({{.*}}) outs(%{{.*}} : tensor<2x4xf16>)

// f32, or auto under fp32 (or fp16) storage, leaves the step as it is: the
// one rounding is the GEMM operand's cast, the one widening the parameter's.
// F32-LABEL: func.func @step(
// F32-NOT:   : bf16
// F32:       linalg.map { arith.extf } ins(%{{.*}} : tensor<4x4xbf16>) outs(%{{.*}} : tensor<4x4xf32>)
// F32-NOT:   : bf16
// F32:       linalg.map { arith.truncf } ins(%{{.*}} : tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xbf16>)
// F32-NOT:   : bf16
func.func @step(%w: tensor<4x4xbf16> {zero.param = "w"},
                %tokens: tensor<2xi32> {zero.data = "tokens"},
                %x: tensor<2x4xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<2x4xf32>, tensor<f32>) {
  %e = tensor.empty() : tensor<2x4xf32>
  %e44 = tensor.empty() : tensor<4x4xf32>
  %wf = linalg.map { arith.extf } ins(%w : tensor<4x4xbf16>) outs(%e44 : tensor<4x4xf32>)
  %emb = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokens : tensor<2xi32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%t: i32, %out: f32):
    %i = arith.index_cast %t : i32 to index
    %j = linalg.index 1 : index
    %v = tensor.extract %wf[%i, %j] : tensor<4x4xf32>
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  %h = linalg.map { arith.addf } ins(%emb, %x : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>)
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
  %sum = linalg.reduce { arith.addf } ins(%h : tensor<2x4xf32>) outs(%acc : tensor<2xf32>) dimensions = [1]
  %rstd = linalg.map { math.rsqrt } ins(%sum : tensor<2xf32>) outs(%e2 : tensor<2xf32>)
  %rstdb = linalg.broadcast ins(%rstd : tensor<2xf32>) outs(%e : tensor<2x4xf32>) dimensions = [1]
  %n = linalg.map { arith.mulf } ins(%h, %rstdb : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>)
  %eb = tensor.empty() : tensor<2x4xbf16>
  %nb = linalg.map { arith.truncf } ins(%n : tensor<2x4xf32>) outs(%eb : tensor<2x4xbf16>)
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul ins(%nb, %w : tensor<2x4xbf16>, tensor<4x4xbf16>) outs(%init : tensor<2x4xf32>) -> tensor<2x4xf32>
  %a = linalg.map { math.tanh } ins(%y : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>)
  %e0 = tensor.empty() : tensor<f32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce { arith.addf } ins(%a : tensor<2x4xf32>) outs(%acc0 : tensor<f32>) dimensions = [0, 1]
  %eps = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
  %var = linalg.map { arith.addf } ins(%sum, %eps : tensor<2xf32>, tensor<2xf32>) outs(%e2 : tensor<2xf32>)
  %varb = linalg.broadcast ins(%var : tensor<2xf32>) outs(%e : tensor<2x4xf32>) dimensions = [1]
  %bias = linalg.map { arith.mulf } ins(%h, %varb : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>)
  %y2 = linalg.matmul ins(%nb, %w : tensor<2x4xbf16>, tensor<4x4xbf16>) outs(%bias : tensor<2x4xf32>) -> tensor<2x4xf32>
  %kept = linalg.map { arith.mulf } ins(%y, %y2 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>)
  %e22 = tensor.empty() : tensor<2x2xf32>
  %mask = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e22 : tensor<2x2xf32>) {
  ^bb0(%out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %above = arith.cmpi sgt, %i1, %i0 : index
    %ninf = arith.constant 0xFF800000 : f32
    %m = arith.select %above, %ninf, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x2xf32>
  %e222 = tensor.empty() : tensor<2x2x2xf32>
  %maskb = linalg.broadcast ins(%mask : tensor<2x2xf32>) outs(%e222 : tensor<2x2x2xf32>) dimensions = [0]
  %masked = linalg.map { math.exp } ins(%maskb : tensor<2x2x2xf32>) outs(%e222 : tensor<2x2x2xf32>)
  %acc1 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %total = linalg.reduce { arith.addf } ins(%masked : tensor<2x2x2xf32>) outs(%acc1 : tensor<f32>) dimensions = [0, 1, 2]
  return %loss, %kept, %total : tensor<f32>, tensor<2x4xf32>, tensor<f32>
}
