//===- Zero.cpp - C API of the zero-opt compiler --------------------------===//
//
// The configuration is read, resolved and mapped to the pipeline's options by
// the config library and applyDeepSpeedConfig, as zero-opt does; the report
// is the one zero-plan-memory writes, the schedule the one zero-translate
// writes.
//
//===----------------------------------------------------------------------===//

#include "zero-c/Zero.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "zero/Config/DeepSpeedConfig.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include "zero/InitAllDialects.h"
#include "zero/Pipelines/ConfigBinding.h"
#include "zero/Pipelines/Driver.h"
#include "zero/Pipelines/Pipeline.h"
#include "zero/Target/Schedule/ScheduleEmitter.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Zero, zero, mlir::zero::ZeroDialect)

void zeroRegisterDialects(MlirDialectRegistry registry) {
  mlir::zero::registerZeroDialects(*unwrap(registry));
}

void zeroRegisterPasses(void) {
  mlir::zero::registerZeroPasses();
  mlir::zero::registerZeroPipeline();
}

namespace {
void deliver(MlirStringCallback callback, StringRef text, void *userData) {
  if (callback)
    callback(wrap(text), userData);
}

/// "FILE:LINE:COL: error: MESSAGE", as a tool prints a diagnostic.
void printDiagnostic(llvm::raw_ostream &os, const Diagnostic &diag) {
  if (auto loc = diag.getLocation()->findInstanceOf<FileLineColLoc>())
    os << loc.getFilename().getValue() << ':' << loc.getLine() << ':'
       << loc.getColumn() << ": ";
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error:
    os << "error: ";
    break;
  case DiagnosticSeverity::Warning:
    os << "warning: ";
    break;
  case DiagnosticSeverity::Note:
    os << "note: ";
    break;
  case DiagnosticSeverity::Remark:
    os << "remark: ";
    break;
  }
  os << diag;
}

/// Runs the pipeline on `module` and delivers its outputs.
LogicalResult runPipeline(ModuleOp module,
                          mlir::zero::ZeroPipelineOptions &options,
                          const ZeroPipelineOutputs &outputs) {
  auto fail = [&](const Twine &message) {
    deliver(outputs.diagnostic, ("error: " + message).str(), outputs.userData);
    return failure();
  };

  // zero-plan-memory writes the report to a file: a temporary one here.
  SmallString<128> reportPath;
  std::optional<llvm::FileRemover> removeReport;
  if (outputs.report) {
    if (std::error_code error = llvm::sys::fs::createTemporaryFile(
            "zero-report", "json", reportPath))
      return fail("cannot create a temporary file for the report: " +
                  error.message());
    removeReport.emplace(reportPath);
    options.report = reportPath.str().str();
  }

  MLIRContext *context = module.getContext();
  ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
    std::string text;
    llvm::raw_string_ostream os(text);
    printDiagnostic(os, diag);
    for (const Diagnostic &note : diag.getNotes()) {
      os << '\n';
      printDiagnostic(os, note);
    }
    deliver(outputs.diagnostic, text, outputs.userData);
    return success();
  });

  // A diagnostic names its op by location, as in zero-opt: the whole op (a
  // training step of thousands of lines) would drown it.
  bool printOp = context->shouldPrintOpOnDiagnostic();
  context->printOpOnDiagnostic(false);
  PassManager pm(context, ModuleOp::getOperationName());
  mlir::zero::buildZeroPipeline(pm, options);
  LogicalResult result = pm.run(module);
  context->printOpOnDiagnostic(printOp);

  if (outputs.report) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> report =
        llvm::MemoryBuffer::getFile(reportPath);
    // No report when the pipeline failed before the memory plan.
    if (report)
      deliver(outputs.report, (*report)->getBuffer(), outputs.userData);
    else if (succeeded(result))
      return fail("cannot read the report: " + report.getError().message());
  }
  if (failed(result))
    return failure();

  if (outputs.schedule) {
    std::string schedule;
    llvm::raw_string_ostream os(schedule);
    if (failed(
            mlir::zero::translateModuleToSchedule(module, os, options.entry)))
      return failure();
    deliver(outputs.schedule, schedule, outputs.userData);
  }
  return success();
}
} // namespace

MlirLogicalResult zeroRunPipeline(MlirModule module, MlirStringRef options,
                                  ZeroPipelineOutputs outputs) {
  mlir::zero::ZeroPipelineOptions pipelineOptions;
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  if (failed(pipelineOptions.parseFromString(unwrap(options), errorStream))) {
    // An invalid value is reported by llvm::cl, to stderr; an unknown option
    // here.
    StringRef detail = StringRef(error).trim();
    deliver(outputs.diagnostic,
            ("error: invalid zero-pipeline options '" + unwrap(options) + "'" +
             (detail.empty() ? "" : ": ") + detail)
                .str(),
            outputs.userData);
    return mlirLogicalResultFailure();
  }
  return wrap(runPipeline(unwrap(module), pipelineOptions, outputs));
}

MlirLogicalResult zeroRunPipelineWithConfig(MlirModule module,
                                            MlirStringRef deepSpeedConfig,
                                            int64_t worldSize,
                                            ZeroPipelineOutputs outputs) {
  auto fail = [&](const Twine &message) {
    std::string text = message.str();
    deliver(outputs.diagnostic, StringRef(text).rtrim('\n'), outputs.userData);
    return mlirLogicalResultFailure();
  };
  if (worldSize < 1)
    return fail("error: the world size must be at least 1, got " +
                Twine(worldSize));

  mlir::zero::ConfigSource source;
  source.text = unwrap(deepSpeedConfig).str();
  mlir::zero::ZeroPipelineOptions options;
  if (failed(mlir::zero::configurePipeline(
          source,
          [&] {
            return mlir::zero::inferResolveContext(unwrap(module),
                                                   /*entry=*/"", worldSize);
          },
          options,
          [&](StringRef text) {
            deliver(outputs.diagnostic, text, outputs.userData);
          })))
    return mlirLogicalResultFailure();
  return wrap(runPipeline(unwrap(module), options, outputs));
}
