//===- zero-embed.cpp - a compiler driver that embeds zero-opt ------------===//
//
// A compiler of its own, built out of tree against the installed ZeroOpt
// package (docs/Embedding.md): it registers the dialects it reads (the zero
// dialect among them), the zero passes next to a pass of its own, parses a
// training step, runs the ZeRO pipeline from C++ with options taken from its
// own flags, and writes the schedule that zero-run executes:
//
//   zero-embed mlp.mlir --stage=3 --world-size=2 -o mlp.json
//
// `--deepspeed-config=FILE` takes the knobs from a DeepSpeed configuration
// as zero-opt --zero-config does (the pipeline library's driver; --stage,
// when given, overrides its stage), `--zero-options="optimizer=sgd ..."`
// sets any knob of the pipeline after it (ZeroPipelineOptions,
// docs/Passes.md), `--passes=PIPELINE` runs registered passes (zero's,
// upstream's, this driver's) after the pipeline.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include "zero/Pipelines/ConfigBinding.h"
#include "zero/Pipelines/Driver.h"
#include "zero/Pipelines/Pipeline.h"
#include "zero/InitAllDialects.h"
#include "zero/Target/Schedule/ScheduleEmitter.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

namespace {
llvm::cl::opt<std::string> inputFilename(llvm::cl::Positional,
                                         llvm::cl::desc("<training step>"),
                                         llvm::cl::Required);
llvm::cl::opt<std::string>
    outputFilename("o", llvm::cl::desc("Write the schedule here"),
                   llvm::cl::value_desc("FILE"), llvm::cl::init("-"));
llvm::cl::opt<int64_t> stage("stage", llvm::cl::desc("ZeRO stage (0-3)"),
                             llvm::cl::init(3));
llvm::cl::opt<int64_t> worldSize("world-size",
                                 llvm::cl::desc("Data-parallel ranks"),
                                 llvm::cl::init(1));
llvm::cl::opt<std::string> deepSpeedConfig(
    "deepspeed-config",
    llvm::cl::desc("Take the pipeline's knobs from this DeepSpeed JSON file"),
    llvm::cl::value_desc("FILE"), llvm::cl::init(""));
llvm::cl::opt<std::string> zeroOptions(
    "zero-options",
    llvm::cl::desc("More pipeline options, as --zero-pipeline takes them"),
    llvm::cl::value_desc("OPTIONS"), llvm::cl::init(""));
llvm::cl::opt<std::string>
    passes("passes",
           llvm::cl::desc("A pass pipeline to run after the ZeRO pipeline"),
           llvm::cl::value_desc("PIPELINE"), llvm::cl::init(""));

/// This compiler's own pass: counts the collectives that the pipeline
/// inserted into the training step, with the zero dialect's C++ API.
struct CountCollectivesPass
    : public PassWrapper<CountCollectivesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CountCollectivesPass)

  StringRef getArgument() const final { return "embed-count-collectives"; }
  StringRef getDescription() const final {
    return "Print how many collectives of each kind the module starts";
  }

  void runOnOperation() override {
    int64_t allGathers = 0, reduceScatters = 0, allReduces = 0;
    getOperation().walk([&](Operation *op) {
      allGathers += isa<mlir::zero::AllGatherStartOp>(op);
      reduceScatters += isa<mlir::zero::ReduceScatterStartOp>(op);
      allReduces += isa<mlir::zero::AllReduceStartOp>(op);
    });
    llvm::errs() << "zero-embed: " << allGathers << " all_gather, "
                 << reduceScatters << " reduce_scatter, " << allReduces
                 << " all_reduce\n";
  }
};
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // The zero passes and pipeline and this driver's pass, for --passes.
  mlir::zero::registerZeroPasses();
  mlir::zero::registerZeroPipeline();
  PassRegistration<CountCollectivesPass>();
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "zero-embed: a compiler embedding zero-opt");

  // The dialects this compiler reads and writes: those of a training step
  // and of the rank step that the pipeline makes of it (zero-opt's), and
  // any of its own.
  DialectRegistry registry;
  mlir::zero::registerZeroDialects(registry);
  MLIRContext context(registry);
  // A diagnostic names its op by location; the whole op (a training step of
  // thousands of lines) would drown it.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(inputFilename, sourceMgr, &context);
  if (!module)
    return 1;

  // The pipeline's options: a DeepSpeed configuration, resolved against the
  // training step as zero-opt does, or --stage; then the string.
  mlir::zero::ZeroPipelineOptions options;
  options.worldSize = worldSize;
  if (!deepSpeedConfig.empty()) {
    mlir::zero::ConfigSource source;
    source.file = deepSpeedConfig;
    if (stage.getNumOccurrences())
      source.overrides.push_back(
          {"zero_optimization.stage", std::to_string(stage)});
    if (failed(mlir::zero::configurePipeline(
            source,
            [&] {
              return mlir::zero::inferResolveContext(*module, /*entry=*/"",
                                               worldSize);
            },
            options,
            [](StringRef text) { llvm::errs() << text << "\n"; })))
      return 1;
  } else {
    options.stage = stage;
  }
  if (failed(options.parseFromString(zeroOptions)))
    return 1;

  PassManager pm(&context);
  mlir::zero::buildZeroPipeline(pm, options);
  pm.addPass(std::make_unique<CountCollectivesPass>());
  if (!passes.empty() && failed(parsePassPipeline(passes, pm)))
    return 1;
  if (failed(pm.run(*module)))
    return 1;

  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "zero-embed: " << error << "\n";
    return 1;
  }
  if (failed(mlir::zero::translateModuleToSchedule(*module, output->os())))
    return 1;
  output->keep();
  return 0;
}
