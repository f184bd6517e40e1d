//===- PlanMemory.cpp - zero-plan-memory ----------------------------------===//
//
// Plans the rank's memory with MemoryPlan (zero/Analysis/MemoryPlan.h),
// records the offsets on the IR, writes the report and checks the device
// budget.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "mlir/Support/FileUtilities.h"
#include "zero/Analysis/MemoryPlan.h"
#include "zero/Analysis/MemoryTimeline.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"
#include "zero/Support/OutputFile.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROPLANMEMORYPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {
struct ZeroPlanMemoryPass
    : public mlir::zero::impl::ZeroPlanMemoryPassBase<ZeroPlanMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();

    // Check the options before any work, so a typo fails fast.
    std::optional<int64_t> deviceBudget, hostBudget;
    if (failed(parseBudget("device-memory", deviceMemory, deviceBudget)) ||
        failed(parseBudget("host-memory", hostMemory, hostBudget)))
      return signalPassFailure();
    std::optional<TimelineFormat> timelineFormat = getTimelineFormat(timeline);
    if (!timeline.empty() && !timelineFormat) {
      module.emitError("invalid value '")
          << timeline
          << "' for option 'timeline': expected a file name ending in .svg "
             "or .html";
      return signalPassFailure();
    }

    FailureOr<func::FuncOp> func = lookupTrainStep(module, entry);
    if (failed(func))
      return signalPassFailure();
    FailureOr<RankInfo> rank = getRankInfo(*func, getArgument());
    if (failed(rank))
      return signalPassFailure();

    MemoryPlanOptions options;
    options.contiguousGradients = contiguousGradients;
    options.budgets[static_cast<unsigned>(MemorySpace::Device)] = deviceBudget;
    options.budgets[static_cast<unsigned>(MemorySpace::Host)] = hostBudget;
    FailureOr<MemoryPlan> plan = MemoryPlan::compute(*func, options);
    if (failed(plan))
      return signalPassFailure();
    plan->annotate();

    // The report and the picture are written even when the budget check
    // fails: they show why and where.
    if (!report.empty() &&
        failed(writeFile(report, "memory report", [&](raw_ostream &os) {
          return plan->writeReport(os, rank->stage, rank->worldSize);
        })))
      return signalPassFailure();
    if (timelineFormat &&
        failed(writeFile(timeline, "memory timeline", [&](raw_ostream &os) {
          writeMemoryTimeline(os, *plan, *timelineFormat, rank->stage,
                              rank->worldSize);
          return success();
        })))
      return signalPassFailure();

    if (deviceBudget &&
        failed(plan->checkBudget(MemorySpace::Device, *deviceBudget)))
      return signalPassFailure();
    if (hostBudget && failed(plan->checkBudget(MemorySpace::Host, *hostBudget)))
      return signalPassFailure();
  }

  /// Writes `path` with `write`; an error naming `what` and the file if it
  /// cannot be opened or written.
  LogicalResult writeFile(StringRef path, StringRef what,
                          function_ref<LogicalResult(raw_ostream &)> write) {
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> output = openOutputFile(path, &error);
    if (!output)
      return getOperation().emitError("cannot write the ")
             << what << ": " << error;
    if (failed(write(output->os()))) {
      ::zero::discardOutputFile(*output);
      return failure();
    }
    if (llvm::Error error = ::zero::keepOutputFile(*output))
      return getOperation().emitError("the ")
             << what << ": " << llvm::toString(std::move(error));
    return success();
  }

  LogicalResult parseBudget(StringRef option, StringRef text,
                            std::optional<int64_t> &budget) {
    if (text.empty())
      return success();
    FailureOr<int64_t> parsed = parseByteSize(text);
    if (failed(parsed))
      return getOperation().emitError("invalid value '")
             << text << "' for option '" << option
             << "': expected a byte count with an optional unit (B, KB, MB, "
                "GB, TB, KiB, MiB, GiB, TiB), such as 85899345920, 80GiB, "
                "512MiB or 1.5GB";
    budget = *parsed;
    return success();
  }
};
} // namespace
