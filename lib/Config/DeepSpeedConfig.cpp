//===- DeepSpeedConfig.cpp - Reading, overriding, resolving ---------------===//
//
// The public entry points: each step collects its errors and returns them
// together in a ConfigError.
//
//===----------------------------------------------------------------------===//

#include "zero/Config/DeepSpeedConfig.h"

#include "ConfigSettings.h"

#include "llvm/Support/MemoryBuffer.h"

using namespace zero;
using llvm::StringRef;

llvm::SMDiagnostic
DeepSpeedConfigSettings::Impl::diagnose(llvm::SMLoc loc,
                                        llvm::SourceMgr::DiagKind kind,
                                        const llvm::Twine &message) const {
  if (!loc.isValid())
    return llvm::SMDiagnostic(fileName, kind, message.str());
  return makeDiagnostic(sourceMgr, loc, kind, message);
}

std::string DeepSpeedConfigSettings::Impl::describeLoc(llvm::SMLoc loc) const {
  unsigned id = sourceMgr.FindBufferContainingLoc(loc);
  if (id == 0)
    return fileName;
  auto [line, column] = sourceMgr.getLineAndColumn(loc, id);
  return (sourceMgr.getMemoryBuffer(id)->getBufferIdentifier() + ":" +
          llvm::Twine(line) + ":" + llvm::Twine(column))
      .str();
}

static llvm::Error toError(DiagnosticList &errors) {
  if (errors.empty())
    return llvm::Error::success();
  return llvm::make_error<ConfigError>(errors.take());
}

DeepSpeedConfigSettings::KnobOrigin
DeepSpeedConfigSettings::getKnobOrigin(llvm::StringRef path) const {
  auto it = impl->settings.find(path);
  if (it == impl->settings.end())
    return {path.str(), llvm::SMLoc()};
  const Setting &setting = it->second;
  llvm::StringRef spelling = setting.spelling;
  // A deprecated key, or a member of a renamed section ("bfloat16").
  bool legacy = llvm::any_of(getLegacyKeys(), [&](const LegacyKey &key) {
    return spelling == key.path || spelling.starts_with((key.path + ".").str());
  });
  if (!legacy)
    return {spelling.str(), setting.loc};
  return {(spelling + " (read as " + path + ")").str(), setting.loc};
}

llvm::SMDiagnostic
DeepSpeedConfigSettings::diagnose(llvm::SMLoc loc,
                                  llvm::SourceMgr::DiagKind kind,
                                  const llvm::Twine &message) const {
  return impl->diagnose(loc, kind, message);
}

DeepSpeedConfigSettings::DeepSpeedConfigSettings()
    : impl(std::make_unique<Impl>()) {}
DeepSpeedConfigSettings::DeepSpeedConfigSettings(DeepSpeedConfigSettings &&) =
    default;
DeepSpeedConfigSettings &
DeepSpeedConfigSettings::operator=(DeepSpeedConfigSettings &&) = default;
DeepSpeedConfigSettings::~DeepSpeedConfigSettings() = default;

llvm::Expected<DeepSpeedConfigSettings>
DeepSpeedConfigSettings::readFile(StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::make_error<ConfigError>(
        std::vector<llvm::SMDiagnostic>{llvm::SMDiagnostic(
            path, llvm::SourceMgr::DK_Error,
            "cannot read the configuration: " + buffer.getError().message())});
  return readBuffer((*buffer)->getBuffer(), path);
}

llvm::Expected<DeepSpeedConfigSettings>
DeepSpeedConfigSettings::readBuffer(StringRef json, StringRef bufferName) {
  DeepSpeedConfigSettings settings;
  Impl &impl = *settings.impl;
  impl.fileName = bufferName.str();
  unsigned id = impl.sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(json, bufferName), llvm::SMLoc());
  DiagnosticList errors(impl.fileName);
  JsonNode root;
  if (readJson(impl.sourceMgr, impl.sourceMgr.getMemoryBuffer(id)->getBuffer(),
               /*requireObject=*/true, root, errors))
    readSettings(impl, root, errors);
  if (llvm::Error error = toError(errors))
    return std::move(error);
  return std::move(settings);
}

llvm::Error DeepSpeedConfigSettings::setOverride(StringRef key,
                                                 StringRef value) {
  DiagnosticList errors("<override>");
  applyOverride(*impl, key, value, errors);
  return toError(errors);
}

llvm::Expected<DeepSpeedConfig>
DeepSpeedConfigSettings::resolve(const ResolveContext &context) const {
  return resolveSettings(*impl, context);
}

llvm::ArrayRef<llvm::SMDiagnostic>
DeepSpeedConfigSettings::getWarnings() const {
  return impl->warnings;
}

llvm::Expected<DeepSpeedConfig> zero::loadDeepSpeedConfig(
    StringRef path,
    llvm::ArrayRef<std::pair<std::string, std::string>> overrides,
    const ResolveContext &context) {
  llvm::Expected<DeepSpeedConfigSettings> settings =
      DeepSpeedConfigSettings::readFile(path);
  if (!settings)
    return settings.takeError();
  for (const auto &[key, value] : overrides)
    if (llvm::Error error = settings->setOverride(key, value))
      return std::move(error);
  return settings->resolve(context);
}
