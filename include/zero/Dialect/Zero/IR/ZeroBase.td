//===- ZeroBase.td - zero dialect definition ---------------*- tablegen -*-===//
//
// The zero dialect: asynchronous collectives, lifetimes, swaps and sharded
// optimizer steps that express one data-parallel rank of a ZeRO training step.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DIALECT_ZERO_IR_ZEROBASE_TD
#define ZERO_DIALECT_ZERO_IR_ZEROBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Zero_Dialect : Dialect {
  let name = "zero";
  let summary = "ZeRO data parallelism: sharded state, async collectives, swaps";
  let description = [{
    The `zero` dialect expresses the program of one data-parallel rank of a
    ZeRO training step in tensor value semantics. Collectives are split into a
    start op that returns a `!zero.handle` and a `zero.wait` that yields the
    results, so that a schedule can overlap communication with computation;
    `zero.release` ends the life of gathered parameters; swap ops move tensors
    between memory spaces; optimizer ops update a rank's shard.
  }];
  let cppNamespace = "::mlir::zero";
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerTypes();
    void registerAttributes();

    /// Training-step contract (docs/TrainingStepIR.md): argument and result
    /// attributes that mark parameters, data, the loss and gradients.
    static constexpr llvm::StringLiteral getParamAttrName() {
      return llvm::StringLiteral("zero.param");
    }
    static constexpr llvm::StringLiteral getFrozenAttrName() {
      return llvm::StringLiteral("zero.frozen");
    }
    static constexpr llvm::StringLiteral getDataAttrName() {
      return llvm::StringLiteral("zero.data");
    }
    static constexpr llvm::StringLiteral getLossAttrName() {
      return llvm::StringLiteral("zero.loss");
    }
    static constexpr llvm::StringLiteral getGradAttrName() {
      return llvm::StringLiteral("zero.grad");
    }

    /// A parameter that is one tile of a larger weight, written by
    /// zero-tile-linear: `{param = "W", offset = array<i64: r, c>, shape =
    /// array<i64: K, N>}` (docs/TrainingStepIR.md).
    static constexpr llvm::StringLiteral getTileAttrName() {
      return llvm::StringLiteral("zero.tile");
    }

    /// The activation-checkpointing segment (a layer) of a forward op:
    /// `zero.segment = i : i64` (docs/TrainingStepIR.md). zero-model writes
    /// it; zero-checkpoint-activations recomputes a segment's values for the
    /// backward pass instead of keeping them.
    static constexpr llvm::StringLiteral getSegmentAttrName() {
      return llvm::StringLiteral("zero.segment");
    }
    /// What zero-checkpoint-activations recomputed, on the step: the
    /// segment ids and the FLOPs, for the memory report and the budget
    /// error (docs/Passes.md).
    static constexpr llvm::StringLiteral getRecomputeAttrName() {
      return llvm::StringLiteral("zero.recompute");
    }

    /// Rank-step attributes written by the pipeline (docs/Passes.md).
    static constexpr llvm::StringLiteral getTrainStepAttrName() {
      return llvm::StringLiteral("zero.train_step");
    }
    static constexpr llvm::StringLiteral getStageAttrName() {
      return llvm::StringLiteral("zero.stage");
    }
    static constexpr llvm::StringLiteral getWorldSizeAttrName() {
      return llvm::StringLiteral("zero.world_size");
    }
    /// Ranks per node where the world spans several nodes (absent: one
    /// node); ranks are node-major (docs/Passes.md, zero-partition).
    static constexpr llvm::StringLiteral getRanksPerNodeAttrName() {
      return llvm::StringLiteral("zero.ranks_per_node");
    }
    /// MiCS's group of ranks that share one copy of the model states where
    /// it spans several nodes (absent: the world or one node); the grid is
    /// then [replicas, nodes per group, ranks per node].
    static constexpr llvm::StringLiteral getMicsShardSizeAttrName() {
      return llvm::StringLiteral("zero.mics_shard_size");
    }
    static constexpr llvm::StringLiteral getLayoutAttrName() {
      return llvm::StringLiteral("zero.layout");
    }
    static constexpr llvm::StringLiteral getPersistentAttrName() {
      return llvm::StringLiteral("zero.persistent");
    }
    static constexpr llvm::StringLiteral getStateAttrName() {
      return llvm::StringLiteral("zero.state");
    }
    static constexpr llvm::StringLiteral getStepAttrName() {
      return llvm::StringLiteral("zero.step");
    }
    /// A data argument's integer values lie in [0, bound) (token ids).
    static constexpr llvm::StringLiteral getDataBoundAttrName() {
      return llvm::StringLiteral("zero.data_bound");
    }
    /// A state argument's initial value and, for the fp16 loss scale, that
    /// it is dynamic.
    static constexpr llvm::StringLiteral getInitialValueAttrName() {
      return llvm::StringLiteral("zero.initial_value");
    }
    static constexpr llvm::StringLiteral getDynamicAttrName() {
      return llvm::StringLiteral("zero.dynamic");
    }
    /// On the `arith.constant` 1.0 that seeds the step's backward pass (the
    /// loss's derivative with respect to itself). Under fp16,
    /// zero-mixed-precision puts the loss scale there, so that the backward
    /// pass computes scaled values as DeepSpeed's does; otherwise the seed is
    /// 1 and multiplying by it is dropped.
    static constexpr llvm::StringLiteral getBackwardSeedAttrName() {
      return llvm::StringLiteral("zero.backward_seed");
    }
    /// On the fp16 loss scale's argument: it seeds the backward pass, so the
    /// gradients arrive scaled and the backward pass may compute in f16.
    static constexpr llvm::StringLiteral getScalesBackwardAttrName() {
      return llvm::StringLiteral("zero.scales_backward");
    }
    /// How a parameter argument is initialized (docs/ScheduleFormat.md).
    static constexpr llvm::StringLiteral getInitAttrName() {
      return llvm::StringLiteral("zero.init");
    }
    /// The parameters whose gradients a reduction carries.
    static constexpr llvm::StringLiteral getGradsAttrName() {
      return llvm::StringLiteral("zero.grads");
    }
    /// On a `linalg.matmul` or `linalg.batch_matmul` of f32 operands: the
    /// type its A and B elements are rounded to before they are multiplied
    /// (`tf32`: tensor cores' f32 mode), the products summed in f32 as
    /// before (zero-compute-precision, `compute-type=tf32`).
    static constexpr llvm::StringLiteral getRoundOperandsAttrName() {
      return llvm::StringLiteral("zero.round_operands");
    }

    /// The micro-step of an unrolled micro-gradient result, and the
    /// micro-steps whose loop zero-reduce-gradients is still to build.
    static constexpr llvm::StringLiteral getMicroStepAttrName() {
      return llvm::StringLiteral("zero.micro_step");
    }
    static constexpr llvm::StringLiteral getPendingMicroStepsAttrName() {
      return llvm::StringLiteral("zero.pending_micro_steps");
    }

    /// The memory plan on the IR (zero-plan-memory): the arenas on the
    /// function, byte offsets of arguments and results, memory spaces and
    /// the staging buffers of collectives.
    static constexpr llvm::StringLiteral getMemoryPlanAttrName() {
      return llvm::StringLiteral("zero.memory_plan");
    }
    /// The options the plan was made with, so that a reader plans again
    /// exactly (`{alignment, contiguous_gradients}`).
    static constexpr llvm::StringLiteral getMemoryPlanOptionsAttrName() {
      return llvm::StringLiteral("zero.memory_plan_options");
    }
    /// On the training step: the directory of the nvme arena's swap file
    /// (DeepSpeed's `offload_*.nvme_path`), for the schedule.
    static constexpr llvm::StringLiteral getNvmePathAttrName() {
      return llvm::StringLiteral("zero.nvme_path");
    }
    /// On the training step: how the runtime reads and writes the nvme
    /// arena (DeepSpeed's `aio` section): `{block_size, queue_depth,
    /// single_submit, overlap_events}`, for the schedule.
    static constexpr llvm::StringLiteral getAioAttrName() {
      return llvm::StringLiteral("zero.aio");
    }
    /// On the training step, `false` only: a run resumed from a checkpoint
    /// sets the fp32 master weights from the checkpoint's 16-bit parameters
    /// (DeepSpeed's `load_from_fp32_weights`), for the schedule.
    static constexpr llvm::StringLiteral getLoadFromFp32WeightsAttrName() {
      return llvm::StringLiteral("zero.load_from_fp32_weights");
    }
    static constexpr llvm::StringLiteral getOffsetAttrName() {
      return llvm::StringLiteral("zero.offset");
    }
    static constexpr llvm::StringLiteral getOffsetsAttrName() {
      return llvm::StringLiteral("zero.offsets");
    }
    static constexpr llvm::StringLiteral getSpaceAttrName() {
      return llvm::StringLiteral("zero.space");
    }
    static constexpr llvm::StringLiteral getStagingAttrName() {
      return llvm::StringLiteral("zero.staging");
    }
  }];
}

class Zero_Op<string mnemonic, list<Trait> traits = []>
    : Op<Zero_Dialect, mnemonic, traits>;

class Zero_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Zero_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Zero_HandleType : Zero_Type<"Handle", "handle"> {
  let summary = "an asynchronous operation in flight";
  let description = [{
    Returned by the `*_start` ops. It must be consumed by exactly one
    `zero.wait`, which yields the operation's results.
  }];
}

#endif // ZERO_DIALECT_ZERO_IR_ZEROBASE_TD
