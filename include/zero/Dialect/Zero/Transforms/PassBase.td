//===- PassBase.td - base class of the zero passes ---------*- tablegen -*-===//

#ifndef ZERO_DIALECT_ZERO_TRANSFORMS_PASSBASE_TD
#define ZERO_DIALECT_ZERO_TRANSFORMS_PASSBASE_TD

include "mlir/Pass/PassBase.td"

// A pass over the training step of a module: the function named by `entry`,
// else the one `zero-partition` marked `zero.train_step`, else the only
// candidate (lookupTrainStep, TrainStep.h). Every zero pass is one, so
// `entry` is defined here once and comes first in each pass's options,
// followed by the pass's own `stepOptions`. The pipeline forwards its
// `entry`, and zero-opt's `--zero-entry` reaches every pass through
// applyEntryOption (Pipeline.h).
class ZeroStepPass<string passArg> : Pass<passArg, "ModuleOp"> {
  list<Option> stepOptions = [];
  let options = !listconcat([
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "Name of the training-step function (needed when the module "
           "holds several candidates)">
  ], stepOptions);
}

#endif // ZERO_DIALECT_ZERO_TRANSFORMS_PASSBASE_TD
