//===- PipelineOptionsTest.cpp - the pipeline's options and passes --------===//
//
// The pipeline's options are the passes' (PipelineOptions.def): at its
// defaults the pipeline gives every pass the options that the pass has on
// its own, and each of its options reaches the pass option its row names.
//
//===----------------------------------------------------------------------===//

#include "zero/Pipelines/ConfigBinding.h"
#include "zero/Pipelines/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "gtest/gtest.h"

#include <set>

using namespace mlir;
using namespace mlir::zero;

namespace {

std::string printPass(Pass &pass) {
  std::string text;
  llvm::raw_string_ostream os(text);
  pass.printAsTextualPipeline(os);
  return text;
}

/// `argument{...}` as the pass registered under `argument` prints itself
/// with its own defaults.
std::string printDefaultPass(StringRef argument) {
  const PassInfo *info = PassInfo::lookup(argument);
  if (!info)
    return "unregistered " + argument.str();
  OpPassManager pm(ModuleOp::getOperationName());
  if (failed(info->addToPipeline(pm, "", [](const Twine &) {
        return failure();
      })))
    return "cannot create " + argument.str();
  return printPass(*pm.getPasses().begin());
}

/// Puts every optional pass in the pipeline.
void includeEveryPass(ZeroPipelineOptions &options) {
  options.fuseBroadcasts = true;
  options.foldTransposes = true;
  options.checkpointActivations = CheckpointActivations::All;
}

class PipelineOptions : public ::testing::Test {
protected:
  static void SetUpTestSuite() { registerZeroPasses(); }
};

TEST_F(PipelineOptions, DefaultsAreThePassesDefaults) {
  ZeroPipelineOptions options;
  includeEveryPass(options);
  OpPassManager pm(ModuleOp::getOperationName());
  buildZeroPipeline(pm, options);
  int passes = 0;
  for (Pass &pass : pm.getPasses()) {
    ++passes;
    EXPECT_EQ(printPass(pass), printDefaultPass(pass.getArgument()))
        << "the default pipeline gives " << pass.getArgument().str()
        << " other options than its own defaults";
  }
  // Every pass of Passes.td but zero-tile-linear, which runs only with
  // tiles to make.
  EXPECT_EQ(passes, 20);
}

/// The printed options of each pass of the pipeline built from `options`.
std::vector<std::pair<std::string, std::string>>
printPipeline(const ZeroPipelineOptions &options) {
  OpPassManager pm(ModuleOp::getOperationName());
  buildZeroPipeline(pm, options);
  std::vector<std::pair<std::string, std::string>> passes;
  for (Pass &pass : pm.getPasses())
    passes.push_back({pass.getArgument().str(), printPass(pass)});
  return passes;
}

TEST_F(PipelineOptions, EachOptionReachesExactlyItsPasses) {
  // Set to a value other than its default, each option changes the
  // options of the passes its rows name, and of no other pass.
  // zero-tile-linear runs only with tiles to make.
  ZeroPipelineOptions base;
  includeEveryPass(base);
  base.tileLinearInSplits = 2;
  std::vector<std::pair<std::string, std::string>> before =
      printPipeline(base);
  for (const PipelineOptionInfo &info : getPipelineOptionInfos()) {
    std::set<std::string> changed;
    for (StringRef probe : {"987654", "true", "false", "bf16", "sgd"}) {
      ZeroPipelineOptions options;
      options.copyOptionValuesFrom(base);
      if (failed(options.parseFromString(
              (info.argument + "=" + probe).str(), llvm::nulls())))
        continue;
      std::vector<std::pair<std::string, std::string>> after =
          printPipeline(options);
      ASSERT_EQ(after.size(), before.size()) << info.argument.str();
      for (size_t i = 0; i < after.size(); ++i)
        if (after[i].second != before[i].second)
          changed.insert(after[i].first);
      if (!changed.empty())
        break;
    }
    std::set<std::string> named(info.passArguments.begin(),
                                info.passArguments.end());
    EXPECT_EQ(changed, named) << info.argument.str();
  }
}

TEST_F(PipelineOptions, EveryKnobHasARoute) {
  for (const auto &[key, route] : getKnobRoutes())
    EXPECT_NE(route, "UNHANDLED") << key;
}

} // namespace
