//===- zero-model.cpp - training-step IR generator ------------------------===//
//
// Writes the value-and-grad training step of a model (docs/TrainingStepIR.md)
// as one `func.func @train_step` in upstream MLIR dialects:
//
//   zero-model mlp --layers N --hidden H --batch-size B
//   zero-model gpt --num-layers L --hidden-size H --num-attention-heads A
//                  --seq-length S --batch-size B --vocab-size V
//
// The IR holds shapes only, never weights, so that even billion-parameter
// models are generated instantly.
//
//===----------------------------------------------------------------------===//

#include "Models.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "zero/Support/OutputFile.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::zero_model;
namespace cl = llvm::cl;

namespace {
enum class DType { F32, F64 };

cl::SubCommand mlpCommand("mlp", "Multi-layer perceptron classifier");
cl::SubCommand gptCommand("gpt", "GPT-2 language model");

cl::OptionCategory commonCategory("Common options");
cl::OptionCategory modelCategory("Model options");

// Options of both models.
cl::opt<DType> dtype("dtype",
                     cl::desc("Float type of parameters, activations, loss "
                              "and gradients"),
                     cl::values(clEnumValN(DType::F32, "f32", "32-bit float"),
                                clEnumValN(DType::F64, "f64", "64-bit float")),
                     cl::init(DType::F32), cl::sub(mlpCommand),
                     cl::sub(gptCommand), cl::cat(commonCategory));
cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                    cl::value_desc("filename"), cl::init("-"),
                                    cl::sub(mlpCommand), cl::sub(gptCommand),
                                    cl::cat(commonCategory));
cl::opt<bool> printNumParams(
    "print-num-params",
    cl::desc("Print 'parameters: COUNT' instead of the IR"),
    cl::sub(mlpCommand), cl::sub(gptCommand), cl::cat(commonCategory));
cl::list<std::string> freezePatterns(
    "freeze",
    cl::desc("Mark the parameters whose names match these glob patterns "
             "zero.frozen: no gradient, no optimizer state (LoRA's frozen "
             "base weights)"),
    cl::value_desc("pattern,..."), cl::CommaSeparated, cl::sub(mlpCommand),
    cl::sub(gptCommand), cl::cat(commonCategory));
cl::opt<bool> printDebugInfo(
    "print-debuginfo",
    cl::desc("Print locations, which name the layer each op belongs to"),
    cl::sub(mlpCommand), cl::sub(gptCommand), cl::cat(commonCategory));

// mlp
cl::opt<int64_t> mlpLayers("layers", cl::desc("Number of linear layers"),
                           cl::init(2), cl::sub(mlpCommand),
                           cl::cat(modelCategory));
cl::opt<int64_t> mlpHidden("hidden",
                           cl::desc("Features of every layer, and classes"),
                           cl::init(16), cl::sub(mlpCommand),
                           cl::cat(modelCategory));
cl::opt<int64_t> mlpBatchSize("batch-size", cl::desc("Micro-batch size"),
                              cl::init(4), cl::sub(mlpCommand),
                              cl::cat(modelCategory));

// gpt; the defaults are GPT-2 small.
cl::opt<int64_t> gptLayers("num-layers", cl::desc("Transformer blocks"),
                           cl::init(12), cl::sub(gptCommand),
                           cl::cat(modelCategory));
cl::opt<int64_t> gptHidden("hidden-size", cl::desc("Model width"),
                           cl::init(768), cl::sub(gptCommand),
                           cl::cat(modelCategory));
cl::opt<int64_t> gptHeads("num-attention-heads",
                          cl::desc("Attention heads; must divide hidden-size"),
                          cl::init(12), cl::sub(gptCommand),
                          cl::cat(modelCategory));
cl::opt<int64_t> gptSeqLength("seq-length",
                              cl::desc("Sequence length (and positions)"),
                              cl::init(1024), cl::sub(gptCommand),
                              cl::cat(modelCategory));
cl::opt<int64_t> gptBatchSize("batch-size", cl::desc("Micro-batch size"),
                              cl::init(1), cl::sub(gptCommand),
                              cl::cat(modelCategory));
cl::opt<int64_t> gptVocabSize("vocab-size", cl::desc("Vocabulary size"),
                              cl::init(50257), cl::sub(gptCommand),
                              cl::cat(modelCategory));

LogicalResult reportError(const Twine &message) {
  llvm::errs() << "zero-model: " << message << "\n";
  return failure();
}

/// Keeps the output; the exit code, 1 with an error naming the file if a
/// write failed.
int finishOutput(llvm::ToolOutputFile &output) {
  if (llvm::Error error = zero::keepOutputFile(output)) {
    (void)reportError("error: " + llvm::toString(std::move(error)));
    return 1;
  }
  return 0;
}

/// Returns the first non-positive size as an error message.
std::optional<std::string>
checkPositive(ArrayRef<const cl::opt<int64_t> *> sizes) {
  for (const cl::opt<int64_t> *size : sizes)
    if (size->getValue() <= 0)
      return ("--" + size->ArgStr + " must be positive, got " +
              Twine(size->getValue()))
          .str();
  return std::nullopt;
}

/// Declares the model selected on the command line and returns its body
/// builder, or reports a bad configuration.
using BodyFn = std::function<Value(TrainStep &, TensorBuilder &)>;
FailureOr<BodyFn> selectModel(TrainStep &step) {
  if (mlpCommand) {
    if (auto message = checkPositive({&mlpLayers, &mlpHidden, &mlpBatchSize}))
      return reportError(*message);
    MLPConfig config{mlpLayers, mlpHidden, mlpBatchSize};
    declareMLP(config, step);
    return BodyFn([config](TrainStep &step, TensorBuilder &tb) {
      return buildMLP(config, step, tb);
    });
  }
  if (gptCommand) {
    if (auto message =
            checkPositive({&gptLayers, &gptHidden, &gptHeads, &gptSeqLength,
                           &gptBatchSize, &gptVocabSize}))
      return reportError(*message);
    if (gptHidden % gptHeads != 0)
      return reportError("--hidden-size " + Twine(gptHidden.getValue()) +
                         " is not divisible by --num-attention-heads " +
                         Twine(gptHeads.getValue()));
    GPTConfig config{gptLayers,    gptHidden,    gptHeads,
                     gptSeqLength, gptBatchSize, gptVocabSize};
    declareGPT(config, step);
    return BodyFn([config](TrainStep &step, TensorBuilder &tb) {
      return buildGPT(config, step, tb);
    });
  }
  return reportError("expected a model: 'zero-model mlp ...' or 'zero-model "
                     "gpt ...' (see --help)");
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions({&commonCategory, &modelCategory});
  cl::ParseCommandLineOptions(argc, argv,
                              "zero-model: value-and-grad training-step IR "
                              "generator\n");

  MLIRContext context;
  context.loadDialect<arith::ArithDialect, func::FuncDialect,
                      linalg::LinalgDialect, math::MathDialect,
                      tensor::TensorDialect>();
  FloatType floatType = dtype == DType::F64
                            ? FloatType(Float64Type::get(&context))
                            : FloatType(Float32Type::get(&context));

  TrainStep step(floatType);
  FailureOr<BodyFn> body = selectModel(step);
  if (failed(body))
    return 1;
  if (std::optional<std::string> message = step.freeze(freezePatterns)) {
    (void)reportError(*message);
    return 1;
  }

  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    (void)reportError(errorMessage);
    return 1;
  }

  if (printNumParams) {
    output->os() << "parameters: " << step.getNumParamElements() << "\n";
    return finishOutput(*output);
  }

  Location loc = NameLoc::get(StringAttr::get(&context, "train_step"));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder b(&context);
  step.create(b, *module, loc);
  TensorBuilder tb(b, loc, floatType);
  Value loss = (*body)(step, tb);
  step.finish(b, loc, loss);

  if (failed(verify(*module))) {
    (void)reportError("generated IR does not verify (a zero-model bug)");
    return 1;
  }

  OpPrintingFlags flags;
  if (printDebugInfo)
    flags.enableDebugInfo();
  module->print(output->os(), flags);
  return finishOutput(*output);
}
