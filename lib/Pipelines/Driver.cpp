//===- Driver.cpp - a DeepSpeed configuration onto the pipeline -----------===//

#include "zero/Pipelines/Driver.h"

#include "zero/Config/ConfigDiagnostics.h"
#include "zero/Pipelines/ConfigBinding.h"

using namespace mlir;
using namespace mlir::zero;

LogicalResult mlir::zero::configurePipeline(
    const ConfigSource &source,
    function_ref<::zero::ResolveContext()> inferContext,
    ZeroPipelineOptions &options, function_ref<void(StringRef)> report,
    function_ref<void(const ::zero::DeepSpeedConfig &)> onResolved) {
  auto emit = [&](StringRef text) {
    if (!text.empty())
      report(text.rtrim('\n'));
  };
  auto fail = [&](llvm::Error error) {
    emit(llvm::toString(std::move(error)));
    return failure();
  };

  StringRef text = source.text ? StringRef(*source.text) : StringRef();
  llvm::Expected<::zero::DeepSpeedConfigSettings> settings =
      !source.file.empty()
          ? ::zero::DeepSpeedConfigSettings::readFile(source.file)
          : ::zero::DeepSpeedConfigSettings::readBuffer(
                text.empty() ? "{}" : text,
                source.text ? source.textName : "<defaults>");
  if (!settings)
    return fail(settings.takeError());
  for (const auto &[key, value] : source.overrides)
    if (llvm::Error error = settings->setOverride(key, value))
      return fail(std::move(error));

  llvm::Expected<::zero::DeepSpeedConfig> config =
      settings->resolve(inferContext());
  if (!config)
    return fail(config.takeError());
  emit(::zero::formatDiagnostics(config->warnings));
  if (onResolved)
    onResolved(*config);

  bool refused = false;
  for (const ConfigFinding &finding : applyDeepSpeedConfig(*config, options)) {
    emit(::zero::formatDiagnostics(diagnoseFinding(*settings, finding)));
    refused |= finding.kind == ConfigFinding::Kind::Error;
  }
  return failure(refused);
}
