//===- Passes.td - schedule emission pass ------------------*- tablegen -*-===//

#ifndef ZERO_TARGET_SCHEDULE_PASSES_TD
#define ZERO_TARGET_SCHEDULE_PASSES_TD

include "zero/Dialect/Zero/Transforms/PassBase.td"

// Not registered as a command-line pass: zero-opt's `--zero-emit-schedule=FILE`
// driver flag has the same name and adds this pass after the others.
def ZeroEmitSchedulePass : ZeroStepPass<"zero-emit-schedule"> {
  let summary = "Write the rank step's schedule (docs/ScheduleFormat.md)";
  let description = [{
    Writes the schedule of the training step, a rank step that went through
    the whole ZeRO pipeline, to `file` as `zero-translate --zero-to-schedule`
    does. The IR is unchanged. Fails with the emitter's diagnostic (an op or
    type outside the schedule format, a function without a memory plan) and
    writes nothing then.
  }];
  let stepOptions = [
    Option<"file", "file", "std::string", /*default=*/"\"\"",
           "Write the schedule to this file ('-' for stdout)">,
  ];
}

#endif // ZERO_TARGET_SCHEDULE_PASSES_TD
