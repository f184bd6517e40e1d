//===- LearningRateSchedule.cpp - DeepSpeed's schedules as IR -------------===//
//
// Each schedule is DeepSpeed's get_lr() (deepspeed/runtime/lr_schedules.py)
// evaluated at i = last_batch_iteration + applied steps, in f64 scalar ops,
// then rounded to the f32 that zero.adam and zero.sgd take. Branches on the
// configuration are taken here; branches on the step become arith.select.
//
//===----------------------------------------------------------------------===//

#include "LearningRateSchedule.h"

#include "zero/Config/ConfigSchema.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <cstdio>
#include <map>

using namespace mlir;
using namespace mlir::zero;

/// 1000, 0.5, 1e-05: as the option was written, not 1.000000e+03.
static std::string formatNumber(double value) {
  char text[32];
  snprintf(text, sizeof(text), "%g", value);
  return text;
}

std::optional<LRScheduleKind> LRSchedule::parseKind(StringRef name) {
  return llvm::StringSwitch<std::optional<LRScheduleKind>>(name)
      .Case("constant", LRScheduleKind::Constant)
      .Case("warmup", LRScheduleKind::Warmup)
      .Case("warmup-decay", LRScheduleKind::WarmupDecay)
      .Case("warmup-cosine", LRScheduleKind::WarmupCosine)
      .Case("one-cycle", LRScheduleKind::OneCycle)
      .Case("range-test", LRScheduleKind::RangeTest)
      .Default(std::nullopt);
}

LogicalResult
LRSchedule::verify(const std::function<InFlightDiagnostic()> &emitError) const {
  auto atLeast = [&](StringRef name, double value,
                     double bound) -> LogicalResult {
    if (value >= bound)
      return success();
    return emitError() << name << " must be at least " << formatNumber(bound)
                       << ", got " << formatNumber(value);
  };
  if (failed(atLeast("last-batch-iteration", lastBatchIteration, -1)))
    return failure();
  // buildScheduledRates adds the applied steps to it in i64, then converts
  // to f64 (zero::kMaxLastBatchIteration).
  if (lastBatchIteration > ::zero::kMaxLastBatchIteration)
    return emitError() << "last-batch-iteration must be at most 2^52 ("
                       << ::zero::kMaxLastBatchIteration
                       << ") so that it plus the steps of a run stays exact, "
                          "got "
                       << lastBatchIteration;
  switch (kind) {
  case LRScheduleKind::Constant:
    return success();
  case LRScheduleKind::Warmup:
  case LRScheduleKind::WarmupDecay:
    if (failed(atLeast("warmup-min-lr", warmupMinLr, 0)) ||
        failed(atLeast("warmup-max-lr", warmupMaxLr, 0)))
      return failure();
    [[fallthrough]];
  case LRScheduleKind::WarmupCosine:
    if (failed(atLeast("warmup-num-steps", warmupNumSteps, 1)))
      return failure();
    if (kind != LRScheduleKind::Warmup &&
        failed(atLeast("total-num-steps", totalNumSteps, 1)))
      return failure();
    return success();
  case LRScheduleKind::OneCycle:
    if (failed(atLeast("cycle-min-lr", cycleMinLr, 0)) ||
        failed(atLeast("cycle-max-lr", cycleMaxLr, 0)) ||
        failed(atLeast("cycle-first-step-size", cycleFirstStepSize, 1)) ||
        failed(atLeast("cycle-second-step-size", cycleSecondStepSize, 1)) ||
        failed(atLeast("cycle-first-stair-count", cycleFirstStairCount, 0)) ||
        failed(atLeast("cycle-second-stair-count", cycleSecondStairCount, 0)) ||
        failed(atLeast("decay-step-size", decayStepSize, 0)))
      return failure();
    if (cycleMomentum)
      for (auto [name, value] :
           {std::pair<StringRef, double>{"cycle-min-mom", cycleMinMom},
            {"cycle-max-mom", cycleMaxMom}})
        if (!(value >= 0 && value < 1))
          return emitError()
                 << name << " must be in [0, 1), got " << formatNumber(value);
    return success();
  case LRScheduleKind::RangeTest:
    if (failed(atLeast("range-test-min-lr", rangeTestMinLr, 0)) ||
        failed(atLeast("range-test-step-size", rangeTestStepSize, 1)))
      return failure();
    return success();
  }
  llvm_unreachable("unknown schedule");
}

namespace {

/// f64 scalar arithmetic at one insertion point.
class ScalarBuilder {
public:
  ScalarBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// One constant per value: they are all created in the same block, before
  /// their first use.
  Value constant(double value) {
    Value &cached = constants[value];
    if (!cached)
      cached = arith::ConstantOp::create(b, loc, b.getF64FloatAttr(value));
    return cached;
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) { return arith::RemFOp::create(b, loc, x, y); }
  Value min(Value x, Value y) {
    return arith::MinimumFOp::create(b, loc, x, y);
  }
  Value max(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value floor(Value x) { return math::FloorOp::create(b, loc, x); }
  Value log(Value x) { return math::LogOp::create(b, loc, x); }
  Value cos(Value x) { return math::CosOp::create(b, loc, x); }
  Value less(Value x, Value y) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, y);
  }
  Value lessEqual(Value x, Value y) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, x, y);
  }
  Value select(Value condition, Value ifTrue, Value ifFalse) {
    return arith::SelectOp::create(b, loc, condition, ifTrue, ifFalse);
  }
  Value toF32(Value x) {
    return arith::TruncFOp::create(b, loc, b.getF32Type(), x);
  }

private:
  OpBuilder &b;
  Location loc;
  std::map<double, Value> constants;
};

/// The schedule at iteration `i` (f64): DeepSpeed's last_batch_iteration when
/// the step runs, -1 before the first scheduler step.
class ScheduleBuilder {
public:
  ScheduleBuilder(ScalarBuilder &s, const LRSchedule &p, Value i)
      : s(s), p(p), i(i) {}

  /// WarmupLR._get_gamma during the warm-up, 0 at i = -1 (where DeepSpeed
  /// returns the minimum directly).
  Value warmupGamma() {
    Value gamma;
    if (p.warmupLinear) {
      gamma = s.div(i, s.constant(warmupSteps()));
    } else {
      double inverseLog = 1.0 / std::log(warmupSteps());
      gamma = s.mul(s.constant(inverseLog), s.log(s.add(i, s.constant(1))));
    }
    return s.select(s.less(i, s.constant(0)), s.constant(0), gamma);
  }

  Value inWarmup() { return s.less(i, s.constant(warmupSteps())); }

  /// WarmupLR and WarmupDecayLR: min + (max - min) * gamma.
  Value warmup() {
    Value after = s.constant(1);
    if (p.kind == LRScheduleKind::WarmupDecay) {
      double total = static_cast<double>(p.totalNumSteps);
      Value remaining = s.sub(s.constant(total), i);
      after = s.max(
          s.constant(0),
          s.div(remaining, s.constant(std::max(1.0, total - warmupSteps()))));
    }
    Value gamma = s.select(inWarmup(), warmupGamma(), after);
    return s.add(s.constant(p.warmupMinLr),
                 s.mul(s.constant(p.warmupMaxLr - p.warmupMinLr), gamma));
  }

  /// WarmupCosineLR: lr * ratio, and 0 before the first scheduler step.
  Value warmupCosine() {
    Value warmupRatio =
        s.add(s.constant(p.warmupMinRatio),
              s.mul(warmupGamma(), s.constant(1.0 - p.warmupMinRatio)));
    double warmup = warmupSteps();
    Value realLastStep = s.add(s.sub(i, s.constant(warmup)), s.constant(1));
    Value realTotalSteps = s.constant(std::max(1.0, p.totalNumSteps - warmup));
    Value progress = s.min(s.constant(1), s.div(realLastStep, realTotalSteps));
    Value cosine =
        s.div(s.add(s.constant(1), s.cos(s.mul(s.constant(M_PI), progress))),
              s.constant(2));
    Value decayRatio = s.max(
        s.constant(0), s.add(s.constant(p.cosMinRatio),
                             s.mul(s.constant(1.0 - p.cosMinRatio), cosine)));
    Value ratio = s.select(inWarmup(), warmupRatio, decayRatio);
    ratio = s.select(s.less(i, s.constant(0)), s.constant(0), ratio);
    return s.mul(s.constant(p.lr), ratio);
  }

  /// OneCycle._get_scale_factor, staircase included.
  Value cycleScale() {
    double first = static_cast<double>(p.cycleFirstStepSize);
    double second = static_cast<double>(p.cycleSecondStepSize);
    double total = first + second, stepRatio = first / total;
    Value batch = s.add(i, s.constant(1));
    Value fraction = s.div(batch, s.constant(total));
    Value cycle = s.floor(s.add(s.constant(1), fraction));
    Value x = s.sub(s.add(s.constant(1), fraction), cycle);
    Value rising = s.lessEqual(x, s.constant(stepRatio));
    Value scale =
        s.select(rising, s.div(x, s.constant(stepRatio)),
                 s.div(s.sub(x, s.constant(1)), s.constant(stepRatio - 1)));
    double firstStairs = static_cast<double>(p.cycleFirstStairCount);
    double secondStairs = static_cast<double>(p.cycleSecondStairCount);
    if (firstStairs == 0 && secondStairs == 0)
      return scale;
    // Stairs are counted from the integer offset in the cycle, not from the
    // scale, which can land just below a stair at a half-cycle boundary.
    Value stairs =
        s.select(rising, s.constant(firstStairs), s.constant(secondStairs));
    Value offset = s.rem(batch, s.constant(total));
    Value position =
        s.select(s.lessEqual(offset, s.constant(first)),
                 s.div(s.mul(offset, stairs), s.constant(first)),
                 s.div(s.mul(s.sub(s.constant(total), offset), stairs),
                       s.constant(second)));
    Value stairScale = s.div(s.floor(position), stairs);
    return s.select(s.less(s.constant(0), stairs), stairScale, scale);
  }

  Value inCycle() {
    double total = static_cast<double>(p.cycleFirstStepSize) +
                   static_cast<double>(p.cycleSecondStepSize);
    return s.less(i, s.constant(total));
  }

  /// Steps since the cycle ended, in decay intervals.
  Value decayIntervals() {
    double total = static_cast<double>(p.cycleFirstStepSize) +
                   static_cast<double>(p.cycleSecondStepSize);
    Value decayIteration = s.add(s.sub(i, s.constant(total)), s.constant(1));
    return s.div(decayIteration,
                 s.constant(static_cast<double>(p.decayStepSize)));
  }

  Value oneCycleLr(Value scale) {
    Value cycleLr =
        s.add(s.constant(p.cycleMinLr),
              s.mul(s.constant(p.cycleMaxLr - p.cycleMinLr), scale));
    Value decayLr = s.constant(p.cycleMinLr);
    if (p.decayStepSize != 0 && p.decayLrRate != 0)
      decayLr = s.div(s.constant(p.cycleMinLr),
                      s.add(s.constant(1), s.mul(s.constant(p.decayLrRate),
                                                 decayIntervals())));
    return s.select(inCycle(), cycleLr, decayLr);
  }

  /// Adam's beta1 under OneCycle: against the rate in the cycle, growing by
  /// decay_mom_rate after it, and cycle_min_mom before the first scheduler
  /// step (DeepSpeed sets the betas to the minimum when it starts).
  Value oneCycleBeta1(Value scale) {
    Value cycleMom =
        s.sub(s.constant(p.cycleMaxMom),
              s.mul(s.constant(p.cycleMaxMom - p.cycleMinMom), scale));
    Value decayMom = s.constant(p.cycleMaxMom);
    if (p.decayStepSize != 0 && p.decayMomRate != 0)
      decayMom = s.mul(s.constant(p.cycleMaxMom),
                       s.add(s.constant(1), s.mul(s.constant(p.decayMomRate),
                                                  decayIntervals())));
    Value mom = s.select(inCycle(), cycleMom, decayMom);
    return s.select(s.less(i, s.constant(0)), s.constant(p.cycleMinMom), mom);
  }

  /// LRRangeTest: min * (1 + rate * intervals).
  Value rangeTest() {
    Value intervals =
        s.div(s.add(i, s.constant(1)),
              s.constant(static_cast<double>(p.rangeTestStepSize)));
    if (p.rangeTestStaircase)
      intervals = s.floor(intervals);
    return s.mul(s.constant(p.rangeTestMinLr),
                 s.add(s.constant(1),
                       s.mul(s.constant(p.rangeTestStepRate), intervals)));
  }

private:
  /// DeepSpeed warms up over at least 2 steps.
  double warmupSteps() const {
    return static_cast<double>(std::max<int64_t>(2, p.warmupNumSteps));
  }

  ScalarBuilder &s;
  const LRSchedule &p;
  Value i;
};

} // namespace

ScheduledRates mlir::zero::buildScheduledRates(OpBuilder &b, Location loc,
                                               Value appliedSteps,
                                               const LRSchedule &schedule) {
  if (schedule.kind == LRScheduleKind::Constant)
    return {arith::ConstantOp::create(
                b, loc, b.getF32FloatAttr(static_cast<float>(schedule.lr))),
            Value()};
  Value iteration = arith::AddIOp::create(
      b, loc, appliedSteps,
      arith::ConstantOp::create(
          b, loc, b.getI64IntegerAttr(schedule.lastBatchIteration)));
  ScalarBuilder s(b, loc);
  Value i = arith::SIToFPOp::create(b, loc, b.getF64Type(), iteration);
  ScheduleBuilder builder(s, schedule, i);
  ScheduledRates rates;
  switch (schedule.kind) {
  case LRScheduleKind::Constant:
    llvm_unreachable("handled above");
  case LRScheduleKind::Warmup:
  case LRScheduleKind::WarmupDecay:
    rates.lr = builder.warmup();
    break;
  case LRScheduleKind::WarmupCosine:
    rates.lr = builder.warmupCosine();
    break;
  case LRScheduleKind::OneCycle: {
    Value scale = builder.cycleScale();
    rates.lr = builder.oneCycleLr(scale);
    if (schedule.schedulesBeta1())
      rates.beta1 = s.toF32(builder.oneCycleBeta1(scale));
    break;
  }
  case LRScheduleKind::RangeTest:
    rates.lr = builder.rangeTest();
    break;
  }
  rates.lr = s.toF32(rates.lr);
  return rates;
}
