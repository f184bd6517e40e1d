//===- LearningRateSchedule.h - DeepSpeed's schedules as IR -----*- C++ -*-===//
//
// Builds the learning rate (and OneCycle's Adam beta1) of an optimizer step
// from the step counter the step carries, with DeepSpeed's formulas
// (docs/Config.md, "Learning-rate schedules"). Computing it in the step,
// rather than passing it in, makes every rank agree without communication
// and a resumed run continue the schedule exactly.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_DIALECT_ZERO_TRANSFORMS_LEARNINGRATESCHEDULE_H
#define ZERO_LIB_DIALECT_ZERO_TRANSFORMS_LEARNINGRATESCHEDULE_H

#include "mlir/IR/Builders.h"

#include <functional>

namespace mlir {
namespace zero {

enum class LRScheduleKind {
  Constant,
  Warmup,       ///< WarmupLR
  WarmupDecay,  ///< WarmupDecayLR
  WarmupCosine, ///< WarmupCosineLR
  OneCycle,     ///< OneCycle
  RangeTest     ///< LRRangeTest
};

/// The parameters of one schedule, named as DeepSpeed's.
struct LRSchedule {
  LRScheduleKind kind = LRScheduleKind::Constant;
  /// optimizer.params.lr: the constant rate, WarmupCosineLR's base.
  double lr = 1e-3;
  int64_t lastBatchIteration = -1;
  double warmupMinLr = 0, warmupMaxLr = 1e-3;
  int64_t warmupNumSteps = 1000;
  bool warmupLinear = false;
  int64_t totalNumSteps = 0;
  double warmupMinRatio = 0, cosMinRatio = 1e-4;
  double cycleMinLr = 0, cycleMaxLr = 0, decayLrRate = 0;
  int64_t cycleFirstStepSize = 2000, cycleSecondStepSize = 2000;
  int64_t cycleFirstStairCount = 0, cycleSecondStairCount = 0;
  int64_t decayStepSize = 0;
  bool cycleMomentum = true;
  double cycleMinMom = 0.8, cycleMaxMom = 0.9, decayMomRate = 0;
  double rangeTestMinLr = 1e-3;
  int64_t rangeTestStepSize = 2000;
  double rangeTestStepRate = 1.0;
  bool rangeTestStaircase = false;

  /// The kind named by the `lr-schedule` option, or nullopt.
  static std::optional<LRScheduleKind> parseKind(StringRef name);

  /// Checks the parameters the schedule reads; `emitError` reports the
  /// first bad one.
  LogicalResult
  verify(const std::function<InFlightDiagnostic()> &emitError) const;

  /// OneCycle with momentum cycling: Adam's beta1 changes every step.
  bool schedulesBeta1() const {
    return kind == LRScheduleKind::OneCycle && cycleMomentum;
  }
};

/// The rates of one optimizer step, f32 scalars.
struct ScheduledRates {
  Value lr;
  /// Null unless the schedule cycles beta1.
  Value beta1;
};

/// The rates of the step that follows `appliedSteps` (an i64 scalar: the
/// optimizer steps applied so far, the step counter before this step).
ScheduledRates buildScheduledRates(OpBuilder &b, Location loc,
                                   Value appliedSteps,
                                   const LRSchedule &schedule);

} // namespace zero
} // namespace mlir

#endif // ZERO_LIB_DIALECT_ZERO_TRANSFORMS_LEARNINGRATESCHEDULE_H
