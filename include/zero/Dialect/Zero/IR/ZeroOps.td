//===- ZeroOps.td - zero dialect ops -----------------------*- tablegen -*-===//

#ifndef ZERO_DIALECT_ZERO_IR_ZEROOPS_TD
#define ZERO_DIALECT_ZERO_IR_ZEROOPS_TD

include "zero/Dialect/Zero/IR/ZeroAttrs.td"
include "zero/Dialect/Zero/IR/ZeroInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// The communication and memory state of the runtime. Collectives, waits,
// releases and swaps read and write it: CSE and DCE keep them, and they stay
// in order among themselves, without being barriers for other memory ops.
def Zero_RuntimeResource : Resource<"::mlir::zero::RuntimeResource">;

defvar Zero_RuntimeEffects = MemoryEffects<[MemRead<Zero_RuntimeResource>,
                                            MemWrite<Zero_RuntimeResource>]>;

//===----------------------------------------------------------------------===//
// Start ops
//===----------------------------------------------------------------------===//

class Zero_StartOp<string mnemonic, list<Trait> traits = []>
    : Zero_Op<mnemonic, traits # [
        DeclareOpInterfaceMethods<Zero_AsyncStartOpInterface>,
        DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
        Zero_RuntimeEffects]> {
  let results = (outs Zero_HandleType:$handle);
  let hasVerifier = 1;
}

def Zero_AllGatherStartOp : Zero_StartOp<"all_gather_start"> {
  let summary = "start gathering full tensors from the shards of all ranks";
  let description = [{
    Starts an all-gather of a bucket of tensors. Operand `i` is this rank's
    shard of tensor `i`, a `tensor<shard_numel x T>` of `layouts[i]`; waiting
    on the handle yields the full tensors, of the layouts' shapes with the
    shards' element types (the padding is dropped). All layouts must have the
    same world size. With `grid_axes` the gather runs within a group of
    ranks instead of the whole world (below), and the layouts' world size
    is the group's size.

    With `quantize_block_size` = B (ZeRO++'s qwZ) the shards travel
    block-quantized: each rank cuts its shard of every operand into blocks
    of B elements (the last may be shorter) and sends one f32 scale per
    block, absmax / 127, and each element as int8, round(x / scale) to
    nearest even; the full tensors are the dequantized values, q * scale,
    rounded to the element type (f32, bf16 or f16). A block holding an
    infinity or a NaN comes back all NaN (docs/Runtime.md, "Block
    quantization").

    `hierarchical` (MiCS's hierarchical all-gather) gathers one axis of the
    group at a time, the first first: across the nodes (the ranks of one
    local rank), then within each node, every rank passing on all it holds.
    The result is the flat gather's; each hop's bytes are counted as a ring
    within the hop's ranks.

    Example:

    ```mlir
    %h = zero.all_gather_start %w, %b layouts [
        #zero.layout<shape = [16, 16], world_size = 4>,
        #zero.layout<shape = [10], world_size = 4>] : tensor<64xbf16>, tensor<3xbf16>
    %w_full, %b_full = zero.wait %h : tensor<16x16xbf16>, tensor<10xbf16>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$shards,
                       Zero_LayoutArrayAttr:$layouts,
                       OptionalAttr<DenseI16ArrayAttr>:$grid_axes,
                       OptionalAttr<I64Attr>:$quantize_block_size,
                       UnitAttr:$hierarchical);
  let assemblyFormat = [{
    $shards (`grid_axes` `=` $grid_axes^)? (`hierarchical` $hierarchical^)?
    (`quantize_block_size` `=` $quantize_block_size^)? `layouts` $layouts
    attr-dict `:` type($shards)
  }];
  let extraClassDeclaration = [{
    /// With `quantize_block_size`: the bytes each rank sends, its shards'
    /// int8 values (padding included) and one f32 scale per block of each;
    /// nothing without it or when the count overflows int64.
    std::optional<int64_t> getQuantizedBytesPerRank();
    /// With `hierarchical`: each hop in order, the axis of the step's
    /// process grid it runs over and the bytes a rank sends in it (and
    /// receives), its n - 1 peers' copies of every block it holds; nothing
    /// otherwise or on overflow.
    std::optional<SmallVector<std::pair<int16_t, int64_t>, 2>>
    getHierarchicalHopBytes();
  }];
}

def Zero_ReduceScatterStartOp : Zero_StartOp<"reduce_scatter_start"> {
  let summary = "start reducing full tensors and scattering the shards";
  let description = [{
    Starts a reduce-scatter of a bucket of tensors. Operand `i` is this rank's
    full tensor `i`, of the shape of `layouts[i]`; the tensors of all ranks are
    reduced elementwise with `reduction` and waiting on the handle yields this
    rank's shards, `tensor<shard_numel x T>` of each layout. `avg` divides the
    sum by the world size, as DeepSpeed averages gradients. All layouts must
    have the same world size.

    With `quantize_block_size` = B (ZeRO++'s qgZ; B even) the tensors travel
    as int4 blocks of B elements, one f32 scale (absmax / 7) per block,
    through one all-to-all per axis of the group (the ranks of a node first,
    then across the nodes), each hop dequantizing what it receives and
    adding it in f32 before the next re-quantizes the partial sums
    (docs/ScheduleFormat.md, "Quantized reduce-scatters"). `reduction` is
    `sum` or `avg` and the element type f32, bf16 or f16.

    Example:

    ```mlir
    %h = zero.reduce_scatter_start avg %gw layouts [
        #zero.layout<shape = [16, 16], world_size = 4>] : tensor<16x16xf32>
    %gw_shard = zero.wait %h : tensor<64xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$tensors,
                       Zero_ReductionKindAttr:$reduction,
                       Zero_LayoutArrayAttr:$layouts,
                       OptionalAttr<DenseI16ArrayAttr>:$grid_axes,
                       OptionalAttr<I64Attr>:$quantize_block_size);
  let assemblyFormat = [{
    custom<ReductionKind>($reduction) $tensors
    (`grid_axes` `=` $grid_axes^)?
    (`quantize_block_size` `=` $quantize_block_size^)? `layouts` $layouts
    attr-dict `:` type($tensors)
  }];
  let extraClassDeclaration = [{
    /// With `quantize_block_size`: the bytes of one packed chunk C, the
    /// shards of every operand as int4 values and one f32 scale per block;
    /// nothing without it or when the count overflows int64.
    std::optional<int64_t> getQuantizedChunkBytes();
    /// With `quantize_block_size`: each hop of the quantized all-to-all in
    /// order, the axis of the step's process grid it runs over and the
    /// bytes a rank sends in it (and receives); nothing otherwise or on
    /// overflow. Without a grid, one hop over axis 0.
    std::optional<SmallVector<std::pair<int16_t, int64_t>, 2>>
    getQuantizedHopBytes();
    /// With `quantize_block_size`: the staging the hops need, f32 partial
    /// sums then the packed chunks sent and received.
    std::optional<int64_t> getQuantizedStagingBytes();
  }];
}

def Zero_AllReduceStartOp : Zero_StartOp<"all_reduce_start"> {
  let summary = "start reducing tensors across all ranks";
  let description = [{
    Starts an all-reduce of a bucket of tensors: waiting on the handle yields
    tensors of the operands' types, reduced elementwise over all ranks with
    `reduction`. `avg` divides the sum by the world size (with `grid_axes`,
    by the group's size).

    Groups (all three collectives), as upstream's `shard` dialect defines
    them: the step's process grid is `[world_size]`, or `[nodes,
    ranks_per_node]` where `zero.ranks_per_node` puts the ranks on several
    nodes (node-major). `grid_axes` (strictly increasing axes of that grid;
    absent: all of them) groups the ranks that agree on every other axis;
    a rank's place in its group is its row-major index over `grid_axes`.
    On a grid [2, 4], `grid_axes = [1]` is the 4 ranks of a node and
    `grid_axes = [0]` the 2 ranks with the same local rank.

    Example:

    ```mlir
    %h = zero.all_reduce_start sum %gw, %loss : tensor<16x16xf32>, tensor<f32>
    %h2 = zero.all_reduce_start avg %g grid_axes = [0] : tensor<8xf32>
    %gw_sum, %loss_sum = zero.wait %h : tensor<16x16xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$tensors,
                       Zero_ReductionKindAttr:$reduction,
                       OptionalAttr<DenseI16ArrayAttr>:$grid_axes);
  let assemblyFormat = [{
    custom<ReductionKind>($reduction) $tensors
    (`grid_axes` `=` $grid_axes^)? attr-dict `:` type($tensors)
  }];
}

def Zero_SwapOutStartOp : Zero_StartOp<"swap_out_start"> {
  let summary = "start moving tensors out of their memory space";
  let description = [{
    Starts copying a bucket of tensors to `host` or `nvme` memory. Waiting on
    the handle yields the tensors in the target space: the operands' types
    with `#zero.memory_space<target>` as encoding. A tensor without encoding
    lives on the device; an operand must not already live in the target.

    Example:

    ```mlir
    %h = zero.swap_out_start %m, %v to nvme : tensor<64xf32>, tensor<64xf32>
    %m_nvme, %v_nvme = zero.wait %h
        : tensor<64xf32, #zero.memory_space<nvme>>,
          tensor<64xf32, #zero.memory_space<nvme>>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$tensors,
                       Zero_MemorySpaceAttr:$target);
  let assemblyFormat = [{
    $tensors `to` custom<MemorySpace>($target) attr-dict `:` type($tensors)
  }];
}

def Zero_SwapInStartOp : Zero_StartOp<"swap_in_start"> {
  let summary = "start moving swapped-out tensors back to the device";
  let description = [{
    Starts copying a bucket of tensors that live in `host` or `nvme` memory
    back to the device. Waiting on the handle yields the operands' types
    without encoding.

    Example:

    ```mlir
    %h = zero.swap_in_start %m_nvme : tensor<64xf32, #zero.memory_space<nvme>>
    %m = zero.wait %h : tensor<64xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$tensors);
  let assemblyFormat = "$tensors attr-dict `:` type($tensors)";
}

//===----------------------------------------------------------------------===//
// WaitOp
//===----------------------------------------------------------------------===//

def Zero_WaitOp : Zero_Op<"wait", [
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
    Zero_RuntimeEffects]> {
  let summary = "wait for an asynchronous operation and take its results";
  let description = [{
    Blocks until the operation that produced `handle` has completed and yields
    its results, whose types are fixed by the start op: the full tensors of an
    all-gather, the shards of a reduce-scatter, the operand types of an
    all-reduce, the re-encoded tensors of a swap. Every handle is waited
    exactly once. The runtime reads the start op's operands in the background
    until the wait, so their buffers stay alive until then.

    Example:

    ```mlir
    %full = zero.wait %h : tensor<16x16xf32>
    ```
  }];
  let arguments = (ins Zero_HandleType:$handle);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = "$handle attr-dict (`:` type($results)^)?";
  let builders = [
    // Waits on `start`'s handle, with the result types that `start` yields.
    OpBuilder<(ins "::mlir::zero::AsyncStartOpInterface":$start), [{
      ::llvm::SmallVector<::mlir::Type> types;
      (void)start.getAwaitedTypes(types);
      build($_builder, $_state, types, start.getAsyncHandle());
    }]>
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ReleaseOp
//===----------------------------------------------------------------------===//

def Zero_ReleaseOp : Zero_Op<"release", [Zero_RuntimeEffects]> {
  let summary = "end the life of gathered parameters";
  let description = [{
    Declares that the tensors are not used any more, typically full
    parameters gathered by `zero.all_gather_start`: the memory plan frees
    their buffers here, and the verifier rejects any later use.

    Example:

    ```mlir
    zero.release %w_full, %b_full : tensor<16x16xbf16>, tensor<10xbf16>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$tensors);
  let assemblyFormat = "$tensors attr-dict `:` type($tensors)";
  let hasVerifier = 1;
}

def Zero_LocalShardOp : Zero_Op<"local_shard", [
    Pure, DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "this rank's shard of a replicated tensor";
  let description = [{
    Yields the part of a full tensor that this rank owns under `layout`: the
    tensor flattened, padded with zeros to the layout's padded element count
    and cut into `world_size` equal shards; the result is shard number `rank`.
    It is how a rank steps its partition of a parameter or gradient that every
    rank holds whole (ZeRO stages 1 and 2, `reduce_scatter = false`). The
    runtime resolves it to a view where the shard holds no padding.

    Example:

    ```mlir
    %s = zero.local_shard %w layout #zero.layout<shape = [16, 16], world_size = 4>
        into tensor<64xf32> : tensor<16x16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$full, Zero_LayoutAttr:$layout);
  let results = (outs AnyRankedTensor:$shard);
  let assemblyFormat = [{
    $full `layout` qualified($layout) `into` type($shard) attr-dict `:` type($full)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Optimizer ops
//===----------------------------------------------------------------------===//

def Zero_AdamOp : Zero_Op<"adam", [Pure, AttrSizedOperandSegments,
    InferTypeOpAdaptor,
    AllTypesMatch<["param", "param_out"]>,
    AllTypesMatch<["exp_avg", "exp_avg_out"]>,
    AllTypesMatch<["exp_avg_sq", "exp_avg_sq_out"]>]> {
  let summary = "one Adam or AdamW step on a shard";
  let description = [{
    Updates a shard of parameters (the fp32 master copy under mixed precision)
    and its moments with one Adam step and returns the new state. `grad` has
    the shape of `param` and may have another float type (bf16 or fp16
    gradients of an fp32 master). `step` is the 1-based step count for bias
    correction, `lr` the learning rate of this step (a scheduler changes it).

    With `amsgrad` (torch.optim.Adam(amsgrad=True)) the op has a fourth state,
    `max_exp_avg_sq`, the running maximum of `v`, as an operand and a result;
    it has the type of the other states. `beta1_value`, when present, is this
    step's beta1 (a schedule such as DeepSpeed's OneCycle computes it in the
    step): it replaces the `beta1` attribute everywhere, the bias correction
    1 - beta1^t included, and must be in [0, 1) when the step runs.

    With `g = grad` (converted to param's type), `t = step`:

    ```
    l2:    g = g + weight_decay * param
    m      = beta1 * m + (1 - beta1) * g
    v      = beta2 * v + (1 - beta2) * g * g
    amsgrad: v_max = max(v_max, v); v' = v_max   (else v' = v)
    m_hat  = bias_correction ? m / (1 - beta1^t) : m
    v_hat  = bias_correction ? v' / (1 - beta2^t) : v'
    adamw: param = param - lr * weight_decay * param
    param  = param - lr * m_hat / (sqrt(v_hat) + eps)
    ```

    `adamw` (decoupled weight decay) is DeepSpeed's default `adam_w_mode`.

    Under fp16's loss scaling, three optional scalar operands fold the
    gradient's unscaling and the overflow's skipped step into the update,
    as PyTorch's fused Adam does with `grad_scale` and `found_inf`, so that
    the update stays one pass over memory and a multi-tensor group:
    `unscale(%s)` divides the gradient by the loss scale `s` and
    `clip(%c)` multiplies it by the clipping coefficient `c`, both in f32
    before the gradient is converted to param's type
    (`g = f32(grad) / s * c`); with `skip(%overflow)` true every result is
    its operand (DeepSpeed skips the step of a gradient overflow).

    Example:

    ```mlir
    %p1, %m1, %v1 = zero.adam %p, %g, %m, %v, %step, %lr
        {beta2 = 0.95 : f64, weight_decay = 0.01 : f64}
        : tensor<64xf32>, tensor<64xbf16>, tensor<64xf32>, tensor<64xf32>
    %p2, %m2, %v2, %vmax2 = zero.adam %p1, %g, %m1, %v1, %step, %lr
        amsgrad(%vmax) beta1(%b1)
        : tensor<64xf32>, tensor<64xbf16>, tensor<64xf32>, tensor<64xf32>,
          tensor<64xf32>
    %p3, %m3, %v3 = zero.adam %p2, %g16, %m2, %v2, %step, %lr
        unscale(%scale) skip(%overflow)
        : tensor<64xf32>, tensor<64xf16>, tensor<64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$param,
                       AnyRankedTensor:$grad,
                       AnyRankedTensor:$exp_avg,
                       AnyRankedTensor:$exp_avg_sq,
                       Optional<AnyRankedTensor>:$max_exp_avg_sq,
                       I64:$step,
                       F32:$lr,
                       Optional<F32>:$beta1_value,
                       Optional<F32>:$grad_scale,
                       Optional<F32>:$grad_coef,
                       Optional<I1>:$skip,
                       DefaultValuedAttr<F64Attr, "0.9">:$beta1,
                       DefaultValuedAttr<F64Attr, "0.999">:$beta2,
                       DefaultValuedAttr<F64Attr, "1e-8">:$eps,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                       DefaultValuedAttr<Zero_AdamModeAttr,
                           "::mlir::zero::AdamMode::AdamW">:$mode,
                       DefaultValuedAttr<BoolAttr, "true">:$bias_correction,
                       UnitAttr:$amsgrad);
  let results = (outs AnyRankedTensor:$param_out,
                      AnyRankedTensor:$exp_avg_out,
                      AnyRankedTensor:$exp_avg_sq_out,
                      Optional<AnyRankedTensor>:$max_exp_avg_sq_out);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $step `,` $lr
    (`amsgrad` $amsgrad^ `(` $max_exp_avg_sq `)`)?
    (`beta1` `(` $beta1_value^ `)`)?
    (`unscale` `(` $grad_scale^ `)`)? (`clip` `(` $grad_coef^ `)`)?
    (`skip` `(` $skip^ `)`)? attr-dict
    `:` type($param) `,` type($grad) `,` type($exp_avg) `,` type($exp_avg_sq)
    (`,` type($max_exp_avg_sq)^)?
  }];
  let hasVerifier = 1;
}

def Zero_SgdOp : Zero_Op<"sgd", [Pure, AttrSizedOperandSegments,
    AllTypesMatch<["param", "param_out"]>,
    AllTypesMatch<["momentum_buffer", "momentum_buffer_out"]>]> {
  let summary = "one SGD step on a shard";
  let description = [{
    Updates a shard of parameters and its momentum buffer with one step of
    SGD as PyTorch defines it, and returns the new state. `grad` has the shape
    of `param` and may have another float type.

    ```
    g     = grad + weight_decay * param
    buf   = momentum * buf + (1 - dampening) * g     (if momentum > 0)
    g     = nesterov ? g + momentum * buf : buf      (if momentum > 0)
    param = param - lr * g
    ```

    With `momentum == 0` the buffer is returned unchanged. PyTorch sets the
    buffer to the first gradient instead of updating it; a zero-initialized
    buffer gives the same result unless `dampening > 0`.

    `unscale(%s)`, `clip(%c)` and `skip(%overflow)` are zero.adam's: the
    gradient is `f32(grad) / s * c`, and a true `skip` returns the operands.

    Example:

    ```mlir
    %p1, %b1 = zero.sgd %p, %g, %b, %lr {momentum = 0.9 : f64, nesterov = true}
        : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$param,
                       AnyRankedTensor:$grad,
                       AnyRankedTensor:$momentum_buffer,
                       F32:$lr,
                       Optional<F32>:$grad_scale,
                       Optional<F32>:$grad_coef,
                       Optional<I1>:$skip,
                       DefaultValuedAttr<F64Attr, "0.0">:$momentum,
                       DefaultValuedAttr<F64Attr, "0.0">:$dampening,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                       DefaultValuedAttr<BoolAttr, "false">:$nesterov);
  let results = (outs AnyRankedTensor:$param_out,
                      AnyRankedTensor:$momentum_buffer_out);
  let assemblyFormat = [{
    $param `,` $grad `,` $momentum_buffer `,` $lr
    (`unscale` `(` $grad_scale^ `)`)? (`clip` `(` $grad_coef^ `)`)?
    (`skip` `(` $skip^ `)`)? attr-dict
    `:` type($param) `,` type($grad) `,` type($momentum_buffer)
  }];
  let hasVerifier = 1;
}

def Zero_AnyNonFiniteOp : Zero_Op<"any_nonfinite", [Pure]> {
  let summary = "whether any element of float tensors is infinite or NaN";
  let description = [{
    1.0 when some element of some input is an infinity or a NaN, else 0.0:
    the overflow check of a dynamic loss scale over all the gradients of a
    rank, as one pass (PyTorch's `_amp_foreach_non_finite_check_and_unscale_`
    checks its tensors in one multi-tensor launch). An f32 flag, so that the
    ranks combine theirs with an all-reduce of `max`.

    Example:

    ```mlir
    %overflow = zero.any_nonfinite %g0, %g1 : tensor<64xf16>, tensor<8xf16>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs);
  let results = (outs F32:$flag);
  let assemblyFormat = [{
    $inputs attr-dict `:` type($inputs)
  }];
  let hasVerifier = 1;
}

#endif // ZERO_DIALECT_ZERO_IR_ZEROOPS_TD
