//===- zero-opt.cpp - the zero-opt driver ---------------------------------===//
//
// mlir-opt with the zero dialect and passes, the upstream dialects a training
// step is written in, and the `--zero-*` driver options, which run the ZeRO
// pipeline as a DeepSpeed configuration says:
//
//   defaults < --zero-config=FILE < --zero-set=KEY=VALUE < --zero-stage=S
//
// The configuration is read, overridden, resolved ("auto" from the
// training-step IR) and mapped to the pipeline's options by the pipeline
// library's driver (zero/Pipelines/Driver.h), which the C API shares; the
// table of which key drives which pass is ConfigBindings.def.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "zero/Config/DeepSpeedConfig.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include "zero/InitAllDialects.h"
#include "zero/Pipelines/ConfigBinding.h"
#include "zero/Pipelines/Driver.h"
#include "zero/Pipelines/Pipeline.h"
#include "zero/Support/OutputFile.h"
#include "zero/Support/InputNesting.h"
#include "zero/Target/Schedule/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

namespace {
llvm::cl::OptionCategory zeroCategory("zero-opt options");

llvm::cl::opt<std::string>
    entryFunction("zero-entry",
                  llvm::cl::desc("Name of the training-step function, for "
                                 "modules with several candidates"),
                  llvm::cl::value_desc("NAME"), llvm::cl::init(""),
                  llvm::cl::cat(zeroCategory));

llvm::cl::opt<int> zeroStage(
    "zero-stage",
    llvm::cl::desc("Run the ZeRO pipeline at this stage (0-3); overrides "
                   "zero_optimization.stage of --zero-config"),
    llvm::cl::init(-1), llvm::cl::cat(zeroCategory));
llvm::cl::opt<int64_t>
    zeroWorldSize("zero-world-size",
                  llvm::cl::desc("Number of data-parallel ranks (default 1)"),
                  llvm::cl::init(1), llvm::cl::cat(zeroCategory));
llvm::cl::opt<int64_t> zeroRanksPerNode(
    "zero-ranks-per-node",
    llvm::cl::desc("Ranks per node, node-major, dividing the world size; the "
                   "report splits the bytes into intra- and inter-node "
                   "(default: every rank on one node)"),
    llvm::cl::init(0), llvm::cl::cat(zeroCategory));
llvm::cl::opt<std::string> zeroConfig(
    "zero-config",
    llvm::cl::desc("A DeepSpeed JSON configuration; runs the ZeRO pipeline "
                   "as it says"),
    llvm::cl::value_desc("FILE"), llvm::cl::init(""),
    llvm::cl::cat(zeroCategory));
llvm::cl::list<std::string> zeroSet(
    "zero-set",
    llvm::cl::desc("Set one DeepSpeed configuration key, overriding "
                   "--zero-config (repeatable): a dotted path and a JSON "
                   "value, e.g. zero_optimization.reduce_bucket_size=5e8; "
                   "runs the ZeRO pipeline"),
    llvm::cl::value_desc("KEY=VALUE"), llvm::cl::cat(zeroCategory));
llvm::cl::opt<bool> zeroPrintConfig(
    "zero-print-config",
    llvm::cl::desc("Print the resolved DeepSpeed configuration (every key, "
                   "\"auto\" resolved, command-line overrides applied) as "
                   "JSON to stdout and exit without running the pipeline"),
    llvm::cl::init(false), llvm::cl::cat(zeroCategory));
llvm::cl::opt<bool> zeroPrintKnobs(
    "zero-print-knobs",
    llvm::cl::desc("Print every DeepSpeed configuration key and the pipeline "
                   "option it sets (or why it is refused or has no effect), "
                   "and exit"),
    llvm::cl::init(false), llvm::cl::cat(zeroCategory));
llvm::cl::opt<std::string>
    zeroReport("zero-report",
               llvm::cl::desc("Write the memory and communication report "
                              "(JSON) of the ZeRO pipeline here"),
               llvm::cl::value_desc("FILE"), llvm::cl::init(""),
               llvm::cl::cat(zeroCategory));
llvm::cl::opt<std::string> zeroMemoryTimeline(
    "zero-memory-timeline",
    llvm::cl::desc("Draw the memory plan of the ZeRO pipeline here: live "
                   "bytes by category over the step, per memory space, with "
                   "the budget, the peak and the phases (.svg, or .html with "
                   "the peak's tables)"),
    llvm::cl::value_desc("FILE"), llvm::cl::init(""),
    llvm::cl::cat(zeroCategory));
llvm::cl::opt<std::string> zeroEmitSchedule(
    "zero-emit-schedule",
    llvm::cl::desc("Write the schedule of the compiled step "
                   "(docs/ScheduleFormat.md) here, after all passes"),
    llvm::cl::value_desc("FILE"), llvm::cl::init(""),
    llvm::cl::cat(zeroCategory));
llvm::cl::opt<std::string> zeroDeviceMemory(
    "zero-device-memory",
    llvm::cl::desc("Device memory budget of the plan, e.g. 80GiB"),
    llvm::cl::value_desc("SIZE"), llvm::cl::init(""),
    llvm::cl::cat(zeroCategory));
llvm::cl::opt<std::string> zeroHostMemory(
    "zero-host-memory",
    llvm::cl::desc("Host memory budget of the plan (the host arena of "
                   "offloaded tensors), e.g. 512GiB"),
    llvm::cl::value_desc("SIZE"), llvm::cl::init(""),
    llvm::cl::cat(zeroCategory));
llvm::cl::opt<bool> zeroUnrollMicroSteps(
    "zero-unroll-micro-steps",
    llvm::cl::desc("Compile gradient accumulation as one copy of the "
                   "micro-step per micro-batch instead of the micro-step "
                   "loop: the same results, in a step that grows with "
                   "gradient_accumulation_steps (for comparisons)"),
    llvm::cl::init(false), llvm::cl::cat(zeroCategory));
llvm::cl::opt<bool> zeroFuseBroadcasts(
    "zero-fuse-broadcasts",
    llvm::cl::desc("Read the sources of broadcasts in the elementwise maps "
                   "that use them instead of materializing full-sized "
                   "tensors (zero-fuse-broadcast-inputs, first in the "
                   "pipeline)"),
    llvm::cl::init(false), llvm::cl::cat(zeroCategory));
llvm::cl::opt<bool> zeroKeepTransposes(
    "zero-keep-transposes",
    llvm::cl::desc("Keep the transposes that make GEMM operands instead of "
                   "reading those in place (pipeline option "
                   "fold-transposes=false; for comparisons)"),
    llvm::cl::init(false), llvm::cl::cat(zeroCategory));
llvm::cl::opt<mlir::zero::ComputeType> zeroComputeType(
    "zero-compute-type",
    llvm::cl::desc("The type GEMM operands and activations are stored in, "
                   "with f32 accumulation (zero-compute-precision, "
                   "zero-narrow-activations): auto (the default) is the "
                   "storage precision, as DeepSpeed computes (fp16 where the "
                   "loss scale seeds the backward pass); f32 keeps the "
                   "step's arithmetic"),
    mlir::zero::getComputeTypeValues(),
    llvm::cl::init(mlir::zero::ComputeType::Auto),
    llvm::cl::cat(zeroCategory));
llvm::cl::opt<int64_t> zeroTileLinearThreshold(
    "zero-tile-linear-threshold",
    llvm::cl::desc("Tile only linear weights with more elements than this "
                   "(zero-tile-linear, DeepSpeed's TiledLinear)"),
    llvm::cl::init(0), llvm::cl::cat(zeroCategory));
llvm::cl::opt<int64_t> zeroTileLinearInSplits(
    "zero-tile-linear-in-splits",
    llvm::cl::desc("Split large linear weights into this many tiles along "
                   "their input dimension"),
    llvm::cl::init(1), llvm::cl::cat(zeroCategory));
llvm::cl::opt<int64_t> zeroTileLinearOutSplits(
    "zero-tile-linear-out-splits",
    llvm::cl::desc("Split large linear weights into this many tiles along "
                   "their output dimension"),
    llvm::cl::init(1), llvm::cl::cat(zeroCategory));

/// Prints the diagnostics of a configuration error, one per line.
/// "zero-opt: error: cannot write 'FILE': REASON"; returns the exit code.
int reportWriteError(llvm::Error error) {
  llvm::errs() << "zero-opt: error: " << llvm::toString(std::move(error))
               << "\n";
  return 1;
}

/// The exit code after printing to stdout: 1 if a write failed.
int finishStdout() {
  if (llvm::Error error = ::zero::checkStream(llvm::outs(), "-"))
    return reportWriteError(std::move(error));
  return 0;
}

/// `--zero-checkpoint-activations[=number-checkpoints=K]` names the pass on
/// the command line. With the pipeline (--zero-stage, --zero-config,
/// --zero-set) it must not run after the pipeline, as other passes named
/// there do, but first: the driver takes it out of the command line's
/// passes and turns it into the pipeline options checkpoint-activations
/// (`true`, or `auto` for `=auto`), number-checkpoints (a K > 0 overrides
/// activation_checkpointing.number_checkpoints) and cpu-checkpointing (true
/// overrides activation_checkpointing.cpu_checkpointing).
struct CheckpointFlag {
  bool given = false;
  bool automatic = false;
  int64_t numberCheckpoints = 0;
  bool cpuCheckpointing = false;
};

FailureOr<CheckpointFlag> findCheckpointFlag(const MlirOptMainConfig &config,
                                             DialectRegistry &registry) {
  MLIRContext context(registry);
  PassManager scratch(&context);
  if (failed(config.setupPassPipeline(scratch)))
    return failure();
  CheckpointFlag flag;
  for (Pass &pass : scratch.getPasses()) {
    if (pass.getArgument() != "zero-checkpoint-activations")
      continue;
    if (scratch.size() != 1) {
      llvm::errs() << "zero-opt: --zero-checkpoint-activations with "
                      "--zero-stage, --zero-config or --zero-set turns on "
                      "checkpointing in the ZeRO pipeline; give no other "
                      "pass on the command line with it\n";
      return failure();
    }
    std::optional<mlir::zero::ZeroCheckpointActivationsPassOptions> options =
        mlir::zero::getZeroCheckpointActivationsOptions(pass);
    assert(options && "zero-checkpoint-activations has its options");
    flag.given = true;
    flag.numberCheckpoints = options->numberCheckpoints;
    flag.cpuCheckpointing = options->cpuCheckpointing;
    flag.automatic = options->automatic;
    if (flag.numberCheckpoints < 0) {
      llvm::errs() << "zero-opt: --zero-checkpoint-activations: "
                      "number-checkpoints must be at least 0, got "
                   << flag.numberCheckpoints << "\n";
      return failure();
    }
  }
  return flag;
}

/// What "auto" is resolved from, read from the input (parsed on its own;
/// a broken input is diagnosed by the real run). The parse runs in a crash
/// recovery context: on some malformed inputs MLIR's parser crashes after
/// its error (see runRecoveringFromParserCrashes), and the real run reports
/// that error. It runs on the tools' stack, as the real run does
/// (zero/Support/InputNesting.h).
::zero::ResolveContext readResolveContext(llvm::MemoryBufferRef input,
                                          DialectRegistry &registry) {
  ::zero::ResolveContext context;
  context.worldSize = zeroWorldSize;
  llvm::CrashRecoveryContext::Enable();
  llvm::CrashRecoveryContext recovery;
  recovery.RunSafelyOnNewStack(
      [&] {
        MLIRContext mlirContext(registry);
        mlirContext.allowUnregisteredDialects();
        ScopedDiagnosticHandler silence(&mlirContext,
                                        [](Diagnostic &) { return success(); });
        llvm::SourceMgr sourceMgr;
        sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBuffer(input),
                                     llvm::SMLoc());
        OwningOpRef<ModuleOp> module =
            parseSourceFile<ModuleOp>(sourceMgr, &mlirContext);
        if (module)
          context = mlir::zero::inferResolveContext(*module, entryFunction,
                                                    zeroWorldSize);
      },
      mlir::zero::kToolStackSize);
  llvm::CrashRecoveryContext::Disable();
  return context;
}

/// Runs MlirOptMain; a crash inside it becomes exit 1. MLIR 22's parser
/// crashes on some malformed IR after reporting the error (linalg.reduce,
/// linalg.broadcast and linalg.transpose store the null attribute their
/// failed `dimensions`/`permutation` parse returns), which a byte-flip fuzzer
/// found; the error it printed names
/// the position, and zero-opt must still end with an error, not a signal.
/// It runs on a stack of known size, on which the input's nesting, checked
/// before (checkInputNesting), cannot overflow the parser, the passes or the
/// printer.
/// Set once the input is parsed and the passes are being set up: a crash
/// after it is no parser's.
bool inputParsed = false;

LogicalResult runRecoveringFromParserCrashes(
    llvm::raw_ostream &os, llvm::StringRef inputFilename,
    std::unique_ptr<llvm::MemoryBuffer> input, DialectRegistry &registry,
    const MlirOptMainConfig &config) {
  LogicalResult result = failure();
  llvm::CrashRecoveryContext::Enable();
  llvm::CrashRecoveryContext recovery;
  bool finished = recovery.RunSafelyOnNewStack(
      [&] { result = MlirOptMain(os, std::move(input), registry, config); },
      mlir::zero::kToolStackSize);
  llvm::CrashRecoveryContext::Disable();
  if (!finished) {
    if (inputParsed)
      llvm::errs() << "zero-opt: " << inputFilename
                   << ": zero-opt crashed while compiling this input; that is "
                      "a bug in zero-opt: please report it with the input "
                      "and the command line\n";
    else
      llvm::errs() << "zero-opt: " << inputFilename
                   << ": MLIR crashed while reading this malformed input, "
                      "after the error above\n";
    return failure();
  }
  return result;
}

/// The command-line settings of configuration keys, in the order they
/// apply: --zero-set, then --zero-stage.
std::vector<std::pair<std::string, std::string>> getOverrides() {
  std::vector<std::pair<std::string, std::string>> overrides;
  for (const std::string &setting : zeroSet) {
    auto [key, value] = llvm::StringRef(setting).split('=');
    overrides.push_back({key.trim().str(), value.trim().str()});
  }
  if (zeroStage.getNumOccurrences())
    overrides.push_back(
        {"zero_optimization.stage", std::to_string(zeroStage.getValue())});
  return overrides;
}

/// Builds the ZeRO pipeline options from the defaults, --zero-config and the
/// command-line overrides. Prints the errors and warnings; fails on an
/// error.
LogicalResult buildPipelineOptions(llvm::MemoryBufferRef input,
                                   DialectRegistry &registry,
                                   const CheckpointFlag &checkpoint,
                                   mlir::zero::ZeroPipelineOptions &options) {
  if (zeroWorldSize < 1) {
    llvm::errs() << "zero-opt: --zero-world-size must be at least 1, got "
                 << zeroWorldSize << "\n";
    return failure();
  }
  std::vector<std::pair<std::string, std::string>> overrides = getOverrides();
  for (const auto &[key, value] : overrides) {
    if (key.empty() || value.empty()) {
      llvm::errs() << "zero-opt: --zero-set='" << key
                   << (value.empty() ? "" : "=" + value)
                   << "': expected KEY=VALUE, e.g. "
                      "zero_optimization.stage=3\n";
      return failure();
    }
  }
  mlir::zero::ConfigSource source;
  source.file = zeroConfig;
  source.overrides = std::move(overrides);
  options.checkpointActivations =
      !checkpoint.given      ? mlir::zero::CheckpointActivations::None
      : checkpoint.automatic ? mlir::zero::CheckpointActivations::Auto
                             : mlir::zero::CheckpointActivations::All;
  options.ranksPerNode = zeroRanksPerNode;
  if (failed(mlir::zero::configurePipeline(
          source, [&] { return readResolveContext(input, registry); },
          options, [](StringRef text) { llvm::errs() << text << "\n"; },
          [](const ::zero::DeepSpeedConfig &config) {
            if (zeroPrintConfig)
              llvm::outs() << config.toJSON() << "\n";
          })))
    return failure();
  options.entry = entryFunction;
  options.report = zeroReport;
  options.memoryTimeline = zeroMemoryTimeline;
  options.deviceMemory = zeroDeviceMemory;
  options.hostMemory = zeroHostMemory;
  options.unrollMicroSteps = zeroUnrollMicroSteps;
  options.fuseBroadcasts = zeroFuseBroadcasts;
  options.foldTransposes = !zeroKeepTransposes;
  if (zeroComputeType.getNumOccurrences())
    options.computeType = zeroComputeType;
  options.tileLinearThreshold = zeroTileLinearThreshold;
  options.tileLinearInSplits = zeroTileLinearInSplits;
  options.tileLinearOutSplits = zeroTileLinearOutSplits;
  if (checkpoint.numberCheckpoints > 0)
    options.numberCheckpoints = checkpoint.numberCheckpoints;
  if (checkpoint.cpuCheckpointing)
    options.cpuCheckpointing = true;
  return success();
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);

  DialectRegistry registry;
  mlir::zero::registerZeroDialects(registry);
  registerTransformsPasses();
  mlir::zero::registerZeroPasses();
  mlir::zero::registerZeroPipeline();

  // A diagnostic names its op by location; printing the whole op (a training
  // step of thousands of lines) by default would drown it.
  registerMLIRContextCLOptions();
  if (auto *printOp = static_cast<llvm::cl::opt<bool> *>(
          llvm::cl::getRegisteredOptions().lookup(
              "mlir-print-op-on-diagnostic")))
    printOp->setInitialValue(false);

  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "zero-opt: ZeRO compiler driver", registry);

  if (zeroPrintKnobs) {
    for (const auto &[key, route] : mlir::zero::getKnobRoutes())
      llvm::outs() << key << ": " << route << "\n";
    return finishStdout();
  }

  // The input is read once: it may be stdin, and the configuration's "auto"
  // values are inferred from it before the pipeline runs on it.
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << "zero-opt: " << errorMessage << "\n";
    return 1;
  }
  // Before anything parses it: an input nested too deeply would overflow the
  // stack of MLIR's recursive parser.
  if (failed(mlir::zero::checkInputNesting(*input, llvm::errs())))
    return 1;

  // --zero-stage / --zero-config / --zero-set run the whole pipeline before
  // any pass named on the command line (--zero-print-config only resolves
  // the configuration).
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  MlirOptMainConfig cliPipeline = config;
  std::optional<mlir::zero::ZeroPipelineOptions> pipelineOptions;
  CheckpointFlag checkpoint;
  if (zeroStage.getNumOccurrences() || !zeroConfig.empty() ||
      !zeroSet.empty() || zeroPrintConfig) {
    FailureOr<CheckpointFlag> flag = findCheckpointFlag(cliPipeline, registry);
    if (failed(flag))
      return 1;
    checkpoint = *flag;
    pipelineOptions.emplace();
    if (failed(buildPipelineOptions(input->getMemBufferRef(), registry,
                                    checkpoint, *pipelineOptions)))
      return 1;
    if (zeroPrintConfig)
      return finishStdout();
  } else if (!zeroReport.empty() || !zeroMemoryTimeline.empty() ||
             !zeroDeviceMemory.empty() || !zeroHostMemory.empty() ||
             zeroWorldSize.getNumOccurrences() ||
             zeroRanksPerNode.getNumOccurrences() || zeroUnrollMicroSteps ||
             zeroFuseBroadcasts || zeroKeepTransposes ||
             zeroComputeType.getNumOccurrences() ||
             zeroTileLinearThreshold.getNumOccurrences() ||
             zeroTileLinearInSplits.getNumOccurrences() ||
             zeroTileLinearOutSplits.getNumOccurrences()) {
    llvm::errs() << "zero-opt: --zero-world-size, --zero-ranks-per-node, "
                    "--zero-report, --zero-memory-timeline, "
                    "--zero-device-memory, --zero-host-memory, "
                    "--zero-unroll-micro-steps, --zero-fuse-broadcasts, "
                    "--zero-keep-transposes, "
                    "--zero-compute-type and "
                    "--zero-tile-linear-* need the pipeline: give "
                    "--zero-stage, --zero-config or --zero-set\n";
    return 1;
  }

  config.setPassPipelineSetupFn([&](PassManager &pm) {
    inputParsed = true;
    if (pipelineOptions)
      mlir::zero::buildZeroPipeline(pm, *pipelineOptions);
    // The checkpointing flag is in the pipeline already.
    if (!checkpoint.given && failed(cliPipeline.setupPassPipeline(pm)))
      return failure();
    // Last, so the schedule is that of the IR zero-opt prints.
    if (!zeroEmitSchedule.empty())
      pm.addPass(mlir::zero::createZeroEmitSchedulePass(
          {/*entry=*/"", /*file=*/zeroEmitSchedule}));
    if (pipelineOptions && llvm::count_if(pm.getPasses(), [](Pass &pass) {
                             return pass.getArgument() == "zero-partition";
                           }) > 1) {
      llvm::errs() << "zero-opt: --zero-pipeline (or --zero-partition) would "
                      "partition the step a second time: --zero-stage, "
                      "--zero-config and --zero-set already run the ZeRO "
                      "pipeline\n";
      return failure();
    }
    // `--zero-entry=NAME` reaches every zero pass.
    if (entryFunction.empty())
      return success();
    return mlir::zero::applyEntryOption(
        pm, entryFunction, [](const Twine &message) {
          llvm::errs() << "zero-opt: --zero-entry: " << message << "\n";
          return failure();
        });
  });

  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << "zero-opt: " << errorMessage << "\n";
    return 1;
  }
  if (failed(runRecoveringFromParserCrashes(
          output->os(), inputFilename, std::move(input), registry, config))) {
    ::zero::discardOutputFile(*output);
    return 1;
  }
  if (llvm::Error error = ::zero::keepOutputFile(*output))
    return reportWriteError(std::move(error));
  return 0;
}
