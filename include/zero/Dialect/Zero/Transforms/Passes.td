//===- Passes.td - zero passes -----------------------------*- tablegen -*-===//

#ifndef ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_TD
#define ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_TD

include "zero/Dialect/Zero/Transforms/PassBase.td"

def ZeroVerifyTrainStepPass : ZeroStepPass<"zero-verify-train-step"> {
  let summary = "Check the training-step input contract";
  let description = [{
    Checks that the module holds one value-and-grad training step as
    docs/TrainingStepIR.md defines it: a `func.func` whose arguments marked
    `zero.param` (a unique, non-empty name) are the parameters, whose results
    hold exactly one scalar floating-point loss marked `zero.loss` and, for
    every parameter not marked `zero.frozen`, exactly one gradient marked
    `zero.grad` with the parameter's name and type. Every argument and op
    result of the step has a tensor size that fits int64 bytes, and so do
    the parameters together. Every violation is reported at the offending
    function, argument, result or op, and the pass fails.

    The candidate functions are those with any `zero.*` argument or result
    attribute. With several candidates, `entry` names the one to use.
  }];
  let stepOptions = [
    Option<"ignoreUnusedParameters", "ignore-unused-parameters", "bool",
           /*default=*/"true",
           "false: a parameter that no op reads is an error (DeepSpeed's "
           "ignore_unused_parameters)">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}


def ZeroInferSegmentsPass : ZeroStepPass<"zero-infer-segments"> {
  let summary = "Mark the segments of a step that has no zero.segment";
  let description = [{
    Activation checkpointing recomputes segments that the input IR marks
    with `zero.segment` (zero-model marks each transformer layer). A step
    from elsewhere has no marks; this pass finds segments in it and marks
    them, and does nothing when any op carries `zero.segment` already.

    The forward pass is the ops the loss depends on. An activation is a
    tensor that a forward op computes from the step's data (`zero.data`
    arguments), so neither parameters, what is computed from them alone
    (casts, transposes of weights) nor constants (a causal mask) count.
    Between two consecutive forward ops, the activations computed before
    and read by a forward op after *cross* that point. The points that
    the fewest activations cross (one in a transformer: the residual
    stream after each residual add) cut the forward pass; of several
    consecutive cut points with the same crossing activations (only
    activation-free ops between them), the first cuts. The forward ops
    between one cut and the next form a segment, numbered in order from 0;
    the ops before the first cut (the embeddings) and after the last (the
    head and the loss) are in none. What a segment's last op computes
    crosses the cut, so the next segment reads it and it is kept; only
    values inside a segment can be recomputed, so a segment of a plain
    chain of ops recomputes nothing.
  }];
  let stepOptions = [
    Option<"cpuCheckpointing", "cpu-checkpointing", "bool",
           /*default=*/"false",
           "The kept inputs will wait in host memory (cpu_checkpointing): "
           "choose the segments by their recomputation alone">,
  ];
}

def ZeroCheckpointActivationsPass
    : ZeroStepPass<"zero-checkpoint-activations"> {
  let summary = "Recompute each segment's activations in the backward pass";
  let description = [{
    Activation checkpointing (Megatron's `--checkpoint-activations`,
    DeepSpeed's `activation_checkpointing`). The forward ops of the step are
    grouped into segments by `zero.segment = i : i64` (one per transformer
    layer in the IR of zero-model; docs/TrainingStepIR.md). Across the
    forward pass only what a segment reads from outside (its inputs: the
    layer input, parameters) and what later forward ops read from it (its
    output, the next segment's input) stay alive; the segment's other
    values are recomputed in the backward pass.

    A forward op is one the loss depends on, or a marked op; every other op
    is a backward op. For each segment, the pass clones the segment's ops
    whose results backward ops read, with the segment ops they need
    transitively, in their original order, right before the first backward
    op that reads one of those results, and redirects every backward use to
    the clones. Originals left without uses are erased. Clones carry no
    `zero.segment`, so the pass does nothing the second time.

    `number-checkpoints` = K > 0 groups the n segment ids (in increasing
    order) into min(K, n) segments of consecutive ids, the first n mod K
    groups one id larger than the others (n = 12, K = 5: 3, 3, 2, 2, 2).
    0 keeps one segment per id.

    `cpu-checkpointing` (DeepSpeed's `cpu_checkpointing`): every tensor the
    recomputation reads from outside its segment that an op computes (the
    layer inputs, the attention mask; not arguments) is swapped out to host
    memory right after its last forward use (`zero.swap_out_start` and its
    `zero.wait`, which frees the device buffer) and swapped back in right
    before its first backward use, which with every later backward use reads
    the copy.

    `auto`: recompute only some segments, the fewest (the cheapest in
    FLOPs per byte they free first) with which the passes of `fit-pipeline`
    accept a copy of the step, found by bisection. The ZeRO pipeline fills
    `fit-pipeline` with its later passes, ending in `zero-plan-memory` with
    the device budget, so the chosen step fits the budget when any does.

    The step records what was recomputed as `zero.recompute` (segment ids,
    FLOPs of the step and of the recomputation) for the memory report.

    A step without any `zero.segment` is an error: checkpointing was asked
    for and there is nothing to checkpoint (the ZeRO pipeline runs
    `zero-infer-segments` first, which marks what it finds). Runs before partitioning, so
    that later passes see the recomputation as ordinary backward ops (at
    stage 3 its parameters are gathered again in the backward pass, as for
    any other backward use).
  }];
  let stepOptions = [
    Option<"numberCheckpoints", "number-checkpoints", "int64_t",
           /*default=*/"0",
           "DeepSpeed's number_checkpoints: group consecutive segments into "
           "at most this many (0: one per zero.segment id)">,
    Option<"cpuCheckpointing", "cpu-checkpointing", "bool",
           /*default=*/"false",
           "DeepSpeed's cpu_checkpointing: keep the recomputation's inputs "
           "in host memory between the forward and the backward pass">,
    Option<"automatic", "auto", "bool", /*default=*/"false",
           "Recompute only the fewest segments, least FLOPs per byte first, "
           "with which fit-pipeline accepts the step">,
    Option<"fitPipeline", "fit-pipeline", "std::string", /*default=*/"\"\"",
           "With auto: the passes that complete and plan the step and check "
           "its budget (the ZeRO pipeline sets them), as a textual pipeline "
           "on builtin.module">,
  ];
}

def ZeroFuseBroadcastInputsPass : ZeroStepPass<"zero-fuse-broadcast-inputs"> {
  let summary = "Read broadcasts' sources in the elementwise maps that use them";
  let description = [{
    Rewrites every `linalg.map` of the training step that reads a
    `linalg.broadcast` into a `linalg.generic` with the same body that reads
    the broadcast's source through an indexing map without the broadcast
    dimensions, and erases the broadcasts nothing else reads: the full-sized
    tensors they materialized (a LayerNorm's statistics and parameters,
    softmax's row max and sum, the causal mask over every batch and head)
    take no memory. The runtime runs both forms as the same loop nest (a
    broadcast operand is a zero stride), so values do not change.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ZeroTileLinearPass : ZeroStepPass<"zero-tile-linear"> {
  let summary = "Split large linear weights into separately gathered tiles";
  let description = [{
    Memory-centric tiling (DeepSpeed's `TiledLinear`). Every 2-D parameter
    W[K, N] with more than `threshold` elements whose every use is the
    right-hand operand of a `linalg.matmul` (y = x W) or of a 2-D
    `linalg.transpose` read only as the right-hand operand of matmuls
    (dx = dy W^T) becomes `in-splits` x `out-splits` parameters, the tiles
    W[i*K/in .. , j*N/out ..], in row-major order in W's place. Each tile
    argument is named `<W>.tile_<i>_<j>` and carries `zero.tile = {param =
    "<W>", offset = array<i64: row0, col0>, shape = array<i64: K, N>}`, so
    the runtime initializes and exports it as that block of W. Every use is
    rewritten per tile; a product that sums over a split dimension chains
    its partial products through the matmul's init (the accumulator), in
    increasing order. W's gradient result becomes one gradient per tile; a
    gradient computed by a matmul is computed per tile, so the full
    gradient never exists either. Parameters used otherwise (GPT's tied
    `wte`: a row gather and the LM head) are left as they are.

    A split below 1, or one that does not divide its dimension of a
    parameter to tile, is an error naming the parameter and the dimension.
    Runs before partitioning: later passes see ordinary parameters, so at
    stage 3 each tile is gathered, used and released on its own.
  }];
  let stepOptions = [
    Option<"threshold", "threshold", "int64_t", /*default=*/"0",
           "Tile only weights with more elements than this">,
    Option<"inSplits", "in-splits", "int64_t", /*default=*/"1",
           "Tiles along the input (row, K) dimension of W[K, N]">,
    Option<"outSplits", "out-splits", "int64_t", /*default=*/"1",
           "Tiles along the output (column, N) dimension of W[K, N]">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ZeroPartitionPass : ZeroStepPass<"zero-partition"> {
  let summary = "Decide how every parameter is partitioned";
  let description = [{
    Marks the training step with the ZeRO stage and world size
    (`zero.stage`, `zero.world_size`; `zero.ranks_per_node` where
    `ranks-per-node` puts the ranks on more than one node: rank r is on
    node r / ranks-per-node) and every parameter argument with its
    `#zero.layout` (flattened, padded to a multiple of the world size, one
    shard per rank). At stage 3, parameters of at most
    `param-persistence-threshold` elements are marked `zero.persistent`
    (kept whole on every rank, still partitioned for the optimizer), in
    argument order while their total stays within
    `model-persistence-threshold`.

    `mics-shard-size` = S (MiCS, stage 3) cuts every parameter, and so its
    gradient and optimizer states, across groups of S consecutive ranks,
    whole nodes, instead of the world: the layouts are for S ranks, rank r
    holds shard r % S, and the groups hold replicas. The collectives the
    later passes build over such layouts run within the group; the
    gradients are then all-reduced across the replicas. A group of several
    nodes (S a multiple of `ranks-per-node` above it) sets
    `zero.mics_shard_size`, and the process grid becomes
    `[N / S, S / ranks-per-node, ranks-per-node]`.
  }];
  let stepOptions = [
    Option<"stage", "stage", "int64_t", /*default=*/"0",
           "ZeRO stage: 0 (data parallel), 1 (optimizer states), "
           "2 (+ gradients), 3 (+ parameters)">,
    Option<"worldSize", "world-size", "int64_t", /*default=*/"1",
           "Number of data-parallel ranks">,
    Option<"ranksPerNode", "ranks-per-node", "int64_t", /*default=*/"0",
           "Ranks per node, node-major; must divide world-size (0: every "
           "rank on one node)">,
    Option<"micsShardSize", "mics-shard-size", "int64_t", /*default=*/"0",
           "Stage 3: ranks that share one copy of the model states (MiCS); "
           "whole nodes, a divisor of the world size (0: the world size)">,
    Option<"paramPersistenceThreshold", "param-persistence-threshold",
           "int64_t", /*default=*/"100000",
           "Stage 3: parameters with at most this many elements stay whole">,
    Option<"modelPersistenceThreshold", "model-persistence-threshold",
           "int64_t", /*default=*/"std::numeric_limits<int64_t>::max()",
           "Stage 3: cap on the total elements of persistent parameters">,
  ];
}

def ZeroMixedPrecisionPass : ZeroStepPass<"zero-mixed-precision"> {
  let summary = "Store parameters and gradients in 16 bits";
  let description = [{
    With `precision=bf16` or `fp16`, parameter arguments and gradient results
    become 16-bit tensors: parameters are extended to the compute type where
    the step reads them and gradients truncated where it returns them, so
    that storage and communication are 16-bit while the arithmetic keeps the
    input's type. The optimizer keeps fp32 master weights
    (`zero-insert-optimizer`). `fp32` leaves the step unchanged.

    With `fp16`, gradients are multiplied by the loss scale, so that small
    gradients survive in 16 bits; the scale is a state argument
    `{zero.state = "loss_scale", zero.initial_value = S}` (S = `loss-scale`,
    or 2^`initial-scale-power` when dynamic, marked `zero.dynamic`), which
    `zero-insert-optimizer` divides out, checks for overflow and updates.
    Where the step marks the constant 1 that seeds its backward pass
    (`zero.backward_seed`), the scale takes its place, as DeepSpeed scales
    the loss before its backward pass, and the argument is marked
    `zero.scales_backward`; otherwise each gradient is multiplied by it
    before it is truncated. Under `fp32` and `bf16` the seed is 1 and its
    products are dropped.
  }];
  let stepOptions = [
    Option<"precision", "precision", "::mlir::zero::Precision",
           /*default=*/"::mlir::zero::Precision::FP32",
           "Parameter and gradient storage",
           "::mlir::zero::getPrecisionValues()">,
    Option<"lossScale", "loss-scale", "double", /*default=*/"0.0",
           "fp16: a static loss scale, or 0 for dynamic loss scaling">,
    Option<"initialScalePower", "initial-scale-power", "int64_t",
           /*default=*/"16",
           "fp16, dynamic: the first loss scale is 2^initial-scale-power">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def ZeroComputePrecisionPass : ZeroStepPass<"zero-compute-precision"> {
  let summary = "Compute the GEMMs in 16 bits with f32 accumulation";
  let description = [{
    With `compute-type=bf16` or `f16` (or `auto` under `precision=bf16`, or
    `fp16` where the loss scale seeds the backward pass: DeepSpeed computes
    in the type it stores; an fp16 step whose gradients are scaled after
    its backward pass stays f32), every `linalg.matmul`
    and `linalg.batch_matmul` whose A and B operands are wider floats reads
    them in the compute type, and keeps its init and result in their own
    type (f32): 16-bit operands, f32 accumulation, what tensor cores do. An
    operand that is the extension of a value of the compute type (a 16-bit
    parameter that zero-mixed-precision widened for this GEMM) is read as
    that value, and the extension erased where nothing else reads it;
    another operand is truncated (a `linalg.map` of `arith.truncf`) once,
    right after it is made, for every GEMM that reads it; a transpose read
    only by the GEMM moves 16-bit elements instead. `tf32` keeps the f32
    operands and marks each f32 GEMM `zero.round_operands = tf32`: its
    operands are rounded to tf32 before they are multiplied. `f32`, or
    `auto` under `precision=fp32` (or `fp16` without a scaled backward
    pass), leaves the step unchanged.
  }];
  let stepOptions = [
    Option<"computeType", "compute-type", "::mlir::zero::ComputeType",
           /*default=*/"::mlir::zero::ComputeType::Auto",
           "The type GEMM operands are computed in",
           "::mlir::zero::getComputeTypeValues()">,
    Option<"precision", "precision", "::mlir::zero::Precision",
           /*default=*/"::mlir::zero::Precision::FP32",
           "Parameter and gradient storage (what auto computes in)",
           "::mlir::zero::getPrecisionValues()">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def ZeroNarrowActivationsPass : ZeroStepPass<"zero-narrow-activations"> {
  let summary = "Store the step's activations in its 16-bit compute type";
  let description = [{
    With a 16-bit compute type (`compute-type=bf16` or `f16`, or `auto`
    under `precision=bf16`, or `fp16` with a scaled backward pass), every
    f32 tensor that an elementwise
    op makes (a `linalg.map`, or a `linalg.generic` of parallel loops that
    writes a fresh tensor) and that only ops able to widen it read (maps,
    generics, reductions, and the views and copies between them: transpose,
    broadcast, reshapes, slices) is stored in the compute type: its maker
    rounds the result it yields (`arith.truncf`), every reader widens what
    it reads (`arith.extf`) and computes in f32 as before. This is the
    activation storage of DeepSpeed's `module.bfloat16()`/`half()`, with
    the arithmetic of each op in f32 registers. What stays f32: the GEMMs'
    results (their f32 accumulation), reductions and the statistics made
    from them (with constants beside them: LayerNorm's mean and rstd,
    softmax's max and sum, the loss), and whatever a GEMM's init, a
    collective, the optimizer or the step's results read. A cast that now rounds a 16-bit value to its own
    type is erased. `f32` or `tf32`, or `auto` under `precision=fp32` (or
    `fp16` without a scaled backward pass), leaves the step unchanged.
  }];
  let stepOptions = [
    Option<"computeType", "compute-type", "::mlir::zero::ComputeType",
           /*default=*/"::mlir::zero::ComputeType::Auto",
           "The 16-bit type activations are stored in",
           "::mlir::zero::getComputeTypeValues()">,
    Option<"precision", "precision", "::mlir::zero::Precision",
           /*default=*/"::mlir::zero::Precision::FP32",
           "Parameter and gradient storage (what auto stores in)",
           "::mlir::zero::getPrecisionValues()">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def ZeroAccumulateGradientsPass
    : ZeroStepPass<"zero-accumulate-gradients"> {
  let summary = "Gradient accumulation over micro-steps";
  let description = [{
    With `steps` = G > 1, the training step becomes G micro-steps: every data
    argument gains a leading dimension G, the forward and backward passes run
    on each slice, the loss is their mean and the gradients are averaged
    over the micro-steps. The micro-steps are an `scf.for` holding one copy
    of the micro-step, whose iteration values are the running sums (started
    at -0.0, which adds no bit), so that the step's size does not grow with
    G.

    At stages 0-1 the gradients are summed into one full gradient per
    parameter, in their type or in `grad-accum-dtype` when that is wider,
    and reduced once at the boundary: the loop is built here. At stages 2-3
    each micro-gradient is scaled by 1/G here and `zero-reduce-gradients`
    builds the loop after reduce-scattering it, so that only shards are
    summed; the step carries `zero.pending_micro_steps = G` until then. A
    `grad-accum-dtype` narrower than the gradients (bf16 or fp16 for an f32
    step) asks for every micro-gradient to be stored before it is added, so
    it defers the loop at stages 0-1 too.

    `unroll` keeps the earlier form: one copy of the micro-step per slice,
    each micro-gradient of stages 2-3 its own result (`zero.micro_step = i`).
    The loop gives the same bits.
  }];
  let stepOptions = [
    Option<"steps", "steps", "int64_t", /*default=*/"1",
           "gradient_accumulation_steps: micro-steps per optimizer step">,
    Option<"gradAccumDtype", "grad-accum-dtype", "std::string",
           /*default=*/"\"\"",
           "fp32, bf16 or fp16: the type of the sum of the micro-step "
           "gradients (empty: the gradients' own)">,
    Option<"unroll", "unroll", "bool", /*default=*/"false",
           "One copy of the micro-step per micro-batch instead of a loop">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def ZeroShardParametersPass : ZeroStepPass<"zero-shard-parameters"> {
  let summary = "Stage 3: gather partitioned parameters around their uses";
  let description = [{
    At stage 3, every parameter argument not marked `zero.persistent` becomes
    the rank's shard. Its uses are grouped in program order: a use joins the
    previous group when the elements of other parameters gathered since that
    group's last use are at most `max-reuse-distance`; each group is preceded
    by an all-gather and wait and followed by a release. Other stages: no
    change.

    `hpz-partition-size` = P (ZeRO++ hpZ; 0, 1 or the world size: off)
    must be the ranks of one node. The first group's all-gather (the
    forward's) runs over the world as before; right after it each rank keeps
    its shard of a secondary partition across the node (`zero.local_shard`
    with a layout for P ranks), and every later group gathers from that copy
    within the node (`grid_axes = [1]`), so that the backward's gathers
    never cross a node.

    `quantize-weights-block-size` = B (ZeRO++ qwZ) puts
    `quantize_block_size = B` on each parameter's first gather: the
    forward's gathers move int8 values and one f32 scale per block of B.

    `quantize-frozen-weights-block-size` = B (ZeRO++'s
    `zero_quantized_nontrainable_weights`) stores the shard of every
    partitioned `zero.frozen` parameter block-quantized: its argument
    becomes `tensor<shard_numel x T, #zero.quantized<bits = 8, block_size =
    B>>`, a quarter (f32) or half (bf16, f16) of the bytes plus a scale per
    block, and every gather of it moves the stored blocks as they are
    (`quantize_block_size = B`). Its values are the dequantized ones from
    the start; nothing updates them.

    `mics-hierarchical-params-gather` (MiCS's
    `mics_hierarchical_params_gather`) marks `hierarchical` every gather of
    a parameter's shards whose group spans several nodes with several ranks
    each: it gathers across the nodes first (the ranks of one local rank),
    then within each node, so that each byte crosses the node boundary once
    per node instead of once per rank.
  }];
  let stepOptions = [
    Option<"maxReuseDistance", "max-reuse-distance", "int64_t",
           /*default=*/"1000000000",
           "Keep a parameter gathered when it is used again within this "
           "many elements of other parameters' gathers">,
    Option<"hpzPartitionSize", "hpz-partition-size", "int64_t",
           /*default=*/"0",
           "ZeRO++ hpZ: ranks of the secondary partition that later gathers "
           "read, the ranks of one node (0, 1 or the world size: off)">,
    Option<"quantizeWeightsBlockSize", "quantize-weights-block-size",
           "int64_t", /*default=*/"0",
           "ZeRO++ qwZ: each parameter's first gather (the forward's) "
           "carries int8 values with one scale per block of this many "
           "elements (0: off)">,
    Option<"quantizeFrozenWeightsBlockSize",
           "quantize-frozen-weights-block-size", "int64_t", /*default=*/"0",
           "ZeRO++: store the shards of zero.frozen parameters as int8 "
           "values with one scale per block of this many elements, gathered "
           "as they are (0: off)">,
    Option<"micsHierarchicalParamsGather", "mics-hierarchical-params-gather",
           "bool", /*default=*/"false",
           "MiCS: gathers over ranks of several nodes run across the nodes "
           "first, then within each node (`hierarchical`)">,
  ];
}

def ZeroReduceGradientsPass : ZeroStepPass<"zero-reduce-gradients"> {
  let summary = "Average gradients across ranks";
  let description = [{
    Stage 0: every gradient is all-reduced (`avg`) where it is produced.
    Stages 1-3: every gradient is reduce-scattered (`avg`) into the rank's
    shard, where it is produced (stages 2-3) or at the end of the backward
    pass (stage 1). With `reduce-scatter=false`, an all-reduce followed by
    `zero.local_shard` replaces the reduce-scatter.

    `communication-data-type` converts each gradient to that type right
    before its reduction; the reduced gradient keeps it. Gradients of
    micro-steps are summed in `grad-accum-dtype` (empty: in the type of what
    is summed): at stages 2-3 the reduced shards as they arrive, at stages
    0-1 the gradients before their one reduction. A step that
    `zero-accumulate-gradients` left with `zero.pending_micro_steps` becomes
    the micro-step loop here, whose iteration values are those sums (the
    loss is averaged over it); unrolled micro-steps (`zero.micro_step`) are
    summed result by result.

    With `quantize-gradients-block-size` B (ZeRO++'s qgZ) the
    reduce-scatter of every gradient of two or more dimensions carries
    `quantize_block_size = B` (vectors are reduced exactly, as DeepSpeed's
    all_to_all_quant_reduce does): the gradients travel as int4 blocks
    through a hierarchical all-to-all, reduced in f32 at each hop. It needs reduce-scatters (stages 1-3) and gradients reduced in f32,
    bf16 or f16; the replicas' all-reduce of MiCS stays unquantized.

    `prescale-gradients` and `gradient-predivide-factor` F split the average
    as DeepSpeed does: prescale multiplies by 1/N before a `sum` reduction;
    otherwise F != 1 multiplies by 1/F before the `sum` and by F/N after it
    (not when F = N). Each scaling is one `linalg.map` in the communication
    type (16-bit values are multiplied in f32 and rounded once); the one after
    the reduction sits right before the first use of the reduced gradient.
  }];
  let stepOptions = [
    Option<"reduceScatter", "reduce-scatter", "bool", /*default=*/"true",
           "Use reduce-scatter (else all-reduce and keep the local shard)">,
    Option<"communicationDataType", "communication-data-type", "std::string",
           /*default=*/"\"\"",
           "fp32, bf16 or fp16: the element type of the reductions (empty: "
           "the gradients' own)">,
    Option<"gradAccumDtype", "grad-accum-dtype", "std::string",
           /*default=*/"\"\"",
           "fp32, bf16 or fp16: the type of the sum of the micro-step "
           "gradients (empty: the type of what is summed)">,
    Option<"prescaleGradients", "prescale-gradients", "bool",
           /*default=*/"false",
           "Divide by the world size before a sum reduction (DeepSpeed's "
           "prescale_gradients)">,
    Option<"gradientPredivideFactor", "gradient-predivide-factor", "double",
           /*default=*/"1.0",
           "Divide by this before a sum reduction and by world size / this "
           "after it (DeepSpeed's gradient_predivide_factor)">,
    Option<"quantizeGradientsBlockSize", "quantize-gradients-block-size",
           "int64_t", /*default=*/"0",
           "ZeRO++ qgZ: reduce-scatter the gradients as int4 blocks of this "
           "many elements (even; 0: unquantized)">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def ZeroInsertOptimizerPass : ZeroStepPass<"zero-insert-optimizer"> {
  let summary = "Insert the partitioned optimizer step";
  let description = [{
    Replaces the reduced gradients by the optimizer step on the rank's
    partition: optimizer-state arguments (`zero.state`) and the step counter
    (`zero.step`) are added, `zero.adam`/`zero.sgd` update each shard (in
    tiles of at most `sub-group-size` elements), gradients are clipped to the
    global norm across ranks (`gradient-clipping`), and updated parameters are
    returned (all-gathered first where the rank holds them whole).

    With fp16 (a `zero.state = "loss_scale"` argument from
    `zero-mixed-precision`), every reduced gradient is divided by the loss
    scale, in f32, before clipping and the optimizer. When the scale is
    `zero.dynamic`, the pass also checks the gradients of all ranks for
    inf/NaN (`zero.all_reduce_start max` from stage 1 on) and skips the step
    on overflow: every updated tensor and the step counter keep their old
    values. It updates the scale as DeepSpeed's DynamicLossScaler does: halved
    (not below `min-loss-scale`) once `hysteresis` overflows are used up,
    doubled after `loss-scale-window` steps without overflow. The scale and
    two new states, `loss_scale_hysteresis` and `good_steps` (first values in
    `zero.initial_value`), are returned updated. A static scale is only
    divided out and is not returned.

    With `load-from-fp32-weights=false` (DeepSpeed's
    `load_from_fp32_weights`) and fp32 master weights, the step is marked
    `zero.load_from_fp32_weights = false`: a run resumed from a checkpoint
    sets the master weights from the checkpoint's 16-bit parameters instead
    of loading them.
  }];
  let stepOptions = [
    Option<"optimizer", "optimizer", "::mlir::zero::OptimizerType",
           /*default=*/"::mlir::zero::OptimizerType::Adam", "The optimizer",
           "::mlir::zero::getOptimizerTypeValues()">,
    Option<"lr", "lr", "double", /*default=*/"1e-3", "Learning rate">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "Adam epsilon">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "Weight decay">,
    Option<"adamWMode", "adam-w-mode", "bool", /*default=*/"true",
           "Adam: decoupled weight decay (DeepSpeed's default) or L2">,
    Option<"biasCorrection", "bias-correction", "bool", /*default=*/"true",
           "Adam: divide the moments by 1 - beta^t (DeepSpeed's default)">,
    Option<"amsgrad", "amsgrad", "bool", /*default=*/"false",
           "Adam: AMSGrad, the running maximum of the second moment in the "
           "denominator (a max_exp_avg_sq state per parameter)">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0",
           "SGD momentum">,
    Option<"dampening", "dampening", "double", /*default=*/"0.0",
           "SGD dampening">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "SGD Nesterov momentum">,
    Option<"gradientClipping", "gradient-clipping", "double",
           /*default=*/"0.0",
           "Clip gradients to this global norm (0: no clipping)">,
    Option<"subGroupSize", "sub-group-size", "int64_t",
           /*default=*/"1000000000",
           "Largest tile, in elements, of one optimizer-step op">,
    Option<"lossScaleWindow", "loss-scale-window", "int64_t",
           /*default=*/"1000",
           "fp16, dynamic: steps without overflow before the scale doubles">,
    Option<"hysteresis", "hysteresis", "int64_t", /*default=*/"2",
           "fp16, dynamic: overflows tolerated before the scale halves">,
    Option<"consecutiveHysteresis", "consecutive-hysteresis", "bool",
           /*default=*/"false",
           "fp16, dynamic: refill the hysteresis after every good step">,
    Option<"minLossScale", "min-loss-scale", "double", /*default=*/"1.0",
           "fp16, dynamic: the scale never falls below this">,
    Option<"loadFromFp32Weights", "load-from-fp32-weights", "bool",
           /*default=*/"true",
           "A run resumed from a checkpoint loads the fp32 master weights "
           "(false: sets them from the 16-bit parameters, with their "
           "precision loss)">,
    Option<"lrSchedule", "lr-schedule", "std::string",
           /*default=*/"\"constant\"",
           "constant, warmup, warmup-decay, warmup-cosine, one-cycle or "
           "range-test (DeepSpeed's WarmupLR, WarmupDecayLR, WarmupCosineLR, "
           "OneCycle, LRRangeTest)">,
    Option<"lastBatchIteration", "last-batch-iteration", "int64_t",
           /*default=*/"-1",
           "Schedule iteration of the step before the first one">,
    Option<"warmupMinLr", "warmup-min-lr", "double", /*default=*/"0.0",
           "warmup, warmup-decay: first rate">,
    Option<"warmupMaxLr", "warmup-max-lr", "double", /*default=*/"1e-3",
           "warmup, warmup-decay: rate after the warm-up">,
    Option<"warmupNumSteps", "warmup-num-steps", "int64_t",
           /*default=*/"1000", "Warm-up length">,
    Option<"warmupType", "warmup-type", "std::string", /*default=*/"\"log\"",
           "Warm-up shape: log or linear">,
    Option<"totalNumSteps", "total-num-steps", "int64_t", /*default=*/"0",
           "warmup-decay, warmup-cosine: length of the schedule">,
    Option<"warmupMinRatio", "warmup-min-ratio", "double", /*default=*/"0.0",
           "warmup-cosine: first rate / lr">,
    Option<"cosMinRatio", "cos-min-ratio", "double", /*default=*/"1e-4",
           "warmup-cosine: last rate / lr">,
    Option<"cycleMinLr", "cycle-min-lr", "double", /*default=*/"0.0",
           "one-cycle: lowest rate">,
    Option<"cycleMaxLr", "cycle-max-lr", "double", /*default=*/"0.0",
           "one-cycle: highest rate">,
    Option<"decayLrRate", "decay-lr-rate", "double", /*default=*/"0.0",
           "one-cycle: rate decay after the cycle">,
    Option<"cycleFirstStepSize", "cycle-first-step-size", "int64_t",
           /*default=*/"2000", "one-cycle: steps of the rising half">,
    Option<"cycleSecondStepSize", "cycle-second-step-size", "int64_t",
           /*default=*/"2000", "one-cycle: steps of the falling half">,
    Option<"cycleFirstStairCount", "cycle-first-stair-count", "int64_t",
           /*default=*/"0", "one-cycle: stairs of the rising half (0: none)">,
    Option<"cycleSecondStairCount", "cycle-second-stair-count", "int64_t",
           /*default=*/"0",
           "one-cycle: stairs of the falling half (0: none)">,
    Option<"decayStepSize", "decay-step-size", "int64_t", /*default=*/"0",
           "one-cycle: steps per decay interval (0: no decay)">,
    Option<"cycleMomentum", "cycle-momentum", "bool", /*default=*/"true",
           "one-cycle, Adam: cycle beta1 (beta2 becomes 0.99)">,
    Option<"cycleMinMom", "cycle-min-mom", "double", /*default=*/"0.8",
           "one-cycle: lowest beta1">,
    Option<"cycleMaxMom", "cycle-max-mom", "double", /*default=*/"0.9",
           "one-cycle: highest beta1">,
    Option<"decayMomRate", "decay-mom-rate", "double", /*default=*/"0.0",
           "one-cycle: beta1 growth after the cycle">,
    Option<"rangeTestMinLr", "range-test-min-lr", "double",
           /*default=*/"1e-3", "range-test: first rate">,
    Option<"rangeTestStepSize", "range-test-step-size", "int64_t",
           /*default=*/"2000", "range-test: steps per interval">,
    Option<"rangeTestStepRate", "range-test-step-rate", "double",
           /*default=*/"1.0", "range-test: increase per interval">,
    Option<"rangeTestStaircase", "range-test-staircase", "bool",
           /*default=*/"false", "range-test: increase in whole intervals">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def ZeroOffloadOptimizerPass
    : ZeroStepPass<"zero-offload-optimizer"> {
  let summary = "Keep the optimizer states in host memory and step there";
  let description = [{
    DeepSpeed's `offload_optimizer` (ZeRO-Offload), stages 1-3: the optimizer
    states an optimizer op reads (`zero.state` arguments: fp32 masters and
    moments) move to host memory (`#zero.memory_space<host>`) with their
    updates; the optimizer ops, and the elementwise maps that read only host
    tensors (the overflow skip, the cast to the 16-bit parameter), run on the
    host. A device tensor they read (the reduced gradient shard) is swapped
    out (`zero.swap_out_start`) right where it is defined, during the
    backward pass, and waited for right before the optimizer; a host result
    the device needs (the new 16-bit shard, before its all-gather) is swapped
    in (`zero.swap_in_start`) right after it is computed. A tensor the
    device still reads (a parameter shard gathered in the backward pass) is
    swapped out after its last device use. Runs after
    `zero-schedule-prefetch`, so that swaps follow the buckets' waits and
    the gathers where prefetch placed them; waits stay where this pass puts
    them, so swaps overlap compute whatever `overlap_comm` says.
    `device=none` leaves the step as it is. With `device=nvme` the states
    live in the NVMe space instead and are swapped to host memory for their
    update and back, a sub-group (`sub-group-size` elements of consecutive
    optimizer ops) at a time, through `buffer-count` buffers: the read of the
    next sub-group overlaps the update with `pipeline-read`, the write of the
    previous one with `pipeline-write` (docs/Passes.md).
  }];
  let stepOptions = [
    Option<"device", "device", "std::string", /*default=*/"\"none\"",
           "Where the optimizer states live: none, cpu or nvme">,
    Option<"ratio", "ratio", "double", /*default=*/"1.0",
           "Stage 3: the fraction of the optimizer's elements that step off "
           "the device (the first optimizer ops in program order); the rest "
           "stay on the device">,
    Option<"nvmePath", "nvme-path", "std::string", /*default=*/"\"\"",
           "With nvme: the directory of the swap files, recorded on the "
           "step for the schedule (zero-run --nvme-path overrides it)">,
    Option<"subGroupSize", "sub-group-size", "int64_t",
           /*default=*/"1000000000",
           "With nvme: elements of the optimizer ops swapped as one group">,
    Option<"bufferCount", "buffer-count", "int64_t", /*default=*/"4",
           "With nvme: host buffers of a sub-group's size, one per state "
           "tensor (offload_optimizer.buffer_count)">,
    Option<"pipelineRead", "pipeline-read", "bool", /*default=*/"false",
           "With nvme: read the next sub-group during the update">,
    Option<"pipelineWrite", "pipeline-write", "bool", /*default=*/"false",
           "With nvme: write the previous sub-group during the update">,
    Option<"aioBlockSize", "aio-block-size", "int64_t", /*default=*/"1048576",
           "With nvme: bytes of the largest single request (aio.block_size)">,
    Option<"aioQueueDepth", "aio-queue-depth", "int64_t", /*default=*/"8",
           "With nvme: requests in flight at most (aio.queue_depth)">,
    Option<"aioSingleSubmit", "aio-single-submit", "bool", /*default=*/"false",
           "With nvme: submit requests one at a time (aio.single_submit)">,
    Option<"aioOverlapEvents", "aio-overlap-events", "bool",
           /*default=*/"true",
           "With nvme: start the next request while one is in flight "
           "(aio.overlap_events)">,
  ];
}

def ZeroOffloadParamsPass : ZeroStepPass<"zero-offload-params"> {
  let summary = "Keep stage-3 parameter shards in host memory between uses";
  let description = [{
    DeepSpeed's `offload_param` (ZeRO-Infinity), stage 3: every partitioned
    (not persistent) parameter shard argument moves to host memory
    (`#zero.memory_space<host>`), and so does the step's result that updates
    it. Each op that reads offloaded shards on the device (an all-gather
    bucket) gets them from one `zero.swap_in_start`, started right after the
    previous parameter gather of its block starts (one bucket ahead) and
    waited for right before the op. The updated shard is swapped out where
    it is computed, or returned from host memory where the optimizer already
    left it (`zero-offload-optimizer`). Runs after `zero-schedule-prefetch`,
    around the gathers it placed. `device=none` leaves the step as it is;
    with `nvme` the shards live in the nvme arena, a file under `nvme-path`
    (`zero.nvme_path` on the step), swapped straight to and from the device,
    and the `aio-*` options are recorded as `zero.aio` for the runtime. As
    DeepSpeed's NVMe swapper holds `buffer-count` buffers of `buffer-size`
    elements, a shard larger than `buffer-size`, or a gather whose shards
    exceed the pool of `buffer-count` x `buffer-size` elements, is an error,
    and a swap-in starts one gather ahead only while both gathers' shards fit
    the pool (else right before its gather). As DeepSpeed's `max_in_cpu`,
    with `nvme` the shards are grouped in sub-groups (consecutive shards in
    argument order, each closed by the shard that brings it to
    `sub-group-size` elements), and the sub-groups that end within the first
    `max-in-cpu` elements stay in host memory (the default, 1e9 elements,
    keeps every shard of a model below that size there: 0 puts them all on
    NVMe); the buffers bound only the shards read from NVMe.
  }];
  let stepOptions = [
    Option<"device", "device", "std::string", /*default=*/"\"none\"",
           "Where the parameter shards live: none, cpu or nvme">,
    Option<"nvmePath", "nvme-path", "std::string", /*default=*/"\"\"",
           "With nvme: the directory of the swap files, recorded on the "
           "step for the schedule (zero-run --nvme-path overrides it)">,
    Option<"aioBlockSize", "aio-block-size", "int64_t", /*default=*/"1048576",
           "With nvme: bytes of the largest single request (aio.block_size)">,
    Option<"aioQueueDepth", "aio-queue-depth", "int64_t", /*default=*/"8",
           "With nvme: requests in flight at most (aio.queue_depth)">,
    Option<"aioSingleSubmit", "aio-single-submit", "bool", /*default=*/"false",
           "With nvme: submit requests one at a time (aio.single_submit)">,
    Option<"aioOverlapEvents", "aio-overlap-events", "bool",
           /*default=*/"true",
           "With nvme: start the next request while one is in flight "
           "(aio.overlap_events)">,
    Option<"bufferCount", "buffer-count", "int64_t", /*default=*/"5",
           "With nvme: swap buffers; with buffer-size, the elements "
           "swapped in at once at most (offload_param.buffer_count)">,
    Option<"bufferSize", "buffer-size", "int64_t", /*default=*/"100000000",
           "With nvme: elements of the largest shard "
           "(offload_param.buffer_size)">,
    Option<"maxInCpu", "max-in-cpu", "int64_t", /*default=*/"1000000000",
           "With nvme: shard elements kept in host memory instead, by "
           "sub-groups in argument order (offload_param.max_in_cpu)">,
    Option<"subGroupSize", "sub-group-size", "int64_t",
           /*default=*/"1000000000",
           "With nvme: the elements of the sub-groups that max-in-cpu keeps "
           "or not, whole (zero_optimization.sub_group_size)">,
  ];
}

def ZeroBucketPass : ZeroStepPass<"zero-bucket"> {
  let summary = "Merge collectives into buckets";
  let description = [{
    Merges collectives of the same kind, reduction and world size into
    variadic ops, in program order: reduce-scatters and all-reduces of at
    most `reduce-bucket-size` elements, stage-3 parameter gathers of at most
    `param-gather-bucket-size` (DeepSpeed's stage-3 fetch granularity,
    `prefetch_bucket_size`), other all-gathers (the post-step gathers of
    stages 1-2) of at most `allgather-bucket-size`. A bucket of parameter
    gathers starts at its first member, any other bucket where its last
    operand is ready; its wait directly follows it (`zero-schedule-prefetch`
    moves waits). A tensor larger than the size travels alone; 0 disables
    merging.
  }];
  let stepOptions = [
    Option<"reduceBucketSize", "reduce-bucket-size", "int64_t",
           /*default=*/"500000000",
           "Elements reduced at a time">,
    Option<"allgatherBucketSize", "allgather-bucket-size", "int64_t",
           /*default=*/"500000000",
           "Elements all-gathered at a time (post-step gathers)">,
    Option<"paramGatherBucketSize", "param-gather-bucket-size", "int64_t",
           /*default=*/"50000000",
           "Stage 3: elements of parameters fetched by one all-gather "
           "(the pipeline sets it to prefetch_bucket_size)">,
  ];
}

def ZeroSchedulePrefetchPass : ZeroStepPass<"zero-schedule-prefetch"> {
  let summary = "Overlap communication with computation";
  let description = [{
    With `overlap-comm`, every wait moves down to just before the first use
    of its results, reductions start as soon as their operands exist, and
    parameter all-gathers (issued in order of first use) move up so that up
    to `prefetch-bucket-size` elements are in flight ahead of their use.
    Without `overlap-comm`, every wait follows its start at once. In both
    modes `max-live-parameters` is a hard cap on gathered-and-unreleased
    parameter elements (counted from a gather's start through its release):
    a parameter kept gathered for reuse is released and gathered again, a
    bucket is split, and an op that alone needs more than the cap is an
    error.
  }];
  let stepOptions = [
    Option<"overlapComm", "overlap-comm", "bool", /*default=*/"false",
           "Start collectives early and wait late">,
    Option<"prefetchBucketSize", "prefetch-bucket-size", "int64_t",
           /*default=*/"50000000",
           "Elements of parameters gathered ahead of their use">,
    Option<"maxLiveParameters", "max-live-parameters", "int64_t",
           /*default=*/"1000000000",
           "Hard cap on gathered, unreleased parameter elements">,
  ];
}

def ZeroFoldSingleRankCollectivesPass
    : ZeroStepPass<"zero-fold-single-rank-collectives"> {
  let summary = "Replace collectives over one rank by views of their operands";
  let description = [{
    At world size 1 a collective moves no byte: an all-gather's full tensor
    is the rank's shard, a reduce-scatter's shard is the rank's full tensor,
    an all-reduce yields its operands. Every such start op and its wait
    become `tensor.expand_shape`/`tensor.collapse_shape` views of the
    operands (or the operands themselves), placed at the wait, so that they
    cost neither a result nor a staging buffer; `zero.local_shard` folds the
    same way, and a gathered tensor that became a view of its shard leaves
    its `zero.release`. Layouts padded beyond their element count keep their
    collective. Other world sizes leave the step as it is.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def ZeroFoldTransposesPass : ZeroStepPass<"zero-fold-transposes"> {
  let summary = "Read the transposed operands of GEMMs in place";
  let description = [{
    A `linalg.transpose` that swaps the last two dimensions of a
    `linalg.matmul` or `linalg.batch_matmul` operand (A or B) is folded into
    the GEMM's indexing maps: the GEMM reads the transpose's input with the
    two loops swapped (upstream `indexing_maps`), which BLAS and cuBLAS do
    with their transpose flags at no cost, and the transpose is erased once
    nothing reads it. The arithmetic is the same; the step stops writing and
    reading the transposed copy (in a GPT-2, a weight's transpose for every
    input gradient, an activation's for every weight gradient, the keys for
    attention's scores).
  }];
}

def ZeroPlanMemoryPass : ZeroStepPass<"zero-plan-memory"> {
  let summary = "Plan every byte of the rank's memory";
  let description = [{
    Computes the liveness of every tensor of the rank step (parameters,
    gradients, optimizer states, activations, gathered parameters, buckets in
    flight), assigns static offsets per memory space, and records the plan
    on the function. `report` writes the memory and communication report as
    JSON; `timeline` draws the plan (MemoryTimeline.h); `device-memory` turns
    a plan whose device peak exceeds it into an error naming the excess and
    what dominates the peak.
  }];
  let stepOptions = [
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Write the JSON report to this file">,
    Option<"timeline", "timeline", "std::string", /*default=*/"\"\"",
           "Draw the plan to this file: live bytes by category over the "
           "program points, per memory space (.svg, or .html with the "
           "peak's tables)">,
    Option<"deviceMemory", "device-memory", "std::string",
           /*default=*/"\"\"",
           "Device memory budget (bytes, or with a unit: 80GiB, 512MB)">,
    Option<"hostMemory", "host-memory", "std::string", /*default=*/"\"\"",
           "Host memory budget of the plan's host arena (offload), as "
           "device-memory">,
    Option<"contiguousGradients", "contiguous-gradients", "bool",
           /*default=*/"true",
           "Place gradient buckets in one contiguous region">,
  ];
}

def ZeroVerifySchedulePass : ZeroStepPass<"zero-verify-schedule"> {
  let summary = "Prove the rank's schedule safe";
  let description = [{
    Rejects a rank step that could misbehave at run time: a tensor used after
    its release or swap-out, a tensor released while a collective or swap
    still reads it, a tensor released twice, a release of a tensor the rank
    holds for the whole step (not gathered or swapped in), a wait nested
    away from its start, or a collective whose execution depends on values
    that differ between ranks (so that ranks could issue different
    collective sequences and hang; swaps are rank-local and exempt).
  }];
}

#endif // ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_TD
