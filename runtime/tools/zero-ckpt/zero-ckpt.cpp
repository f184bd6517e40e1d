//===- zero-ckpt.cpp - inspect and check checkpoints ----------------------===//
//
//   zero-ckpt info DIR       what a checkpoint holds, verified
//   zero-ckpt verify DIR     every rank's file against the manifest
//   zero-ckpt consolidate DIR -o FILE [--dtype f32|bf16|fp16]
//                            the whole model in one safetensors file
//   zero-ckpt reshard DIR --world-size M [--stage T] -o OUT
//                            the same state cut for M ranks (and stage T)
//
// DIR is what zero-run --resume takes: a checkpoint directory (its latest
// step), its `latest` file or a step directory. Both read the checkpoint
// with the runtime's own code (Checkpoint.h), so they accept and refuse
// exactly what a resumed run does without a schedule. Errors are one line
// "zero-ckpt: <file>: <message>" and exit status 1.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Checkpoint.h"
#include "zero/runtime/OutputFile.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

using namespace zero::runtime;

namespace {

const char *kUsage =
    "usage: zero-ckpt info DIR      what the checkpoint holds, verified\n"
    "       zero-ckpt verify DIR    check every rank's file (size, CRC-32,\n"
    "                               tensors) against the manifest\n"
    "       zero-ckpt consolidate DIR -o FILE [--dtype f32|bf16|fp16]\n"
    "                               every parameter whole, by name, in one\n"
    "                               safetensors file (f32: the fp32 master\n"
    "                               weights where there are some; bf16, fp16:\n"
    "                               the model's 16-bit weights where it has\n"
    "                               them, else rounded)\n"
    "       zero-ckpt reshard DIR --world-size M [--stage T] -o OUT\n"
    "                               the checkpoint cut for M ranks (and ZeRO\n"
    "                               stage T), written to the checkpoint\n"
    "                               directory OUT, which zero-run --resume\n"
    "                               takes with a schedule for M ranks\n"
    "DIR: a checkpoint directory (its latest step), DIR/latest or\n"
    "DIR/step-<S>, as zero-run --resume takes it.\n";

std::string joinShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

int64_t getNumel(const std::vector<int64_t> &shape) {
  int64_t numel = 1;
  for (int64_t dim : shape)
    numel *= dim;
  return numel;
}

int fail(const Status &status) {
  std::fprintf(stderr, "zero-ckpt: %s\n", status.message().c_str());
  return 1;
}

void printInfo(const CheckpointInfo &info) {
  std::printf("checkpoint %s: format version %lld, verified\n",
              info.directory.c_str(), static_cast<long long>(info.version));
  std::printf("step %lld, world size %lld, ZeRO stage %lld\n",
              static_cast<long long>(info.step),
              static_cast<long long>(info.worldSize),
              static_cast<long long>(info.stage));
  std::printf("schedule %s (CRC-32 %s)\n", info.schedule.c_str(),
              info.scheduleCrc32.c_str());
  std::string rows;
  for (const auto &[name, count] : info.data.rowsRead)
    rows += (rows.empty() ? "; rows read: " : ", ") + name + " " +
            std::to_string(count);
  std::printf("data: %s, seed %llu%s\n",
              info.data.tokenFile.empty() ? "synthetic"
                                          : info.data.tokenFile.c_str(),
              static_cast<unsigned long long>(info.data.seed), rows.c_str());
  int64_t elements = 0;
  for (const CheckpointTensorInfo &parameter : info.parameters)
    elements += getNumel(parameter.shape);
  std::printf("parameters: %zu, %lld elements\n", info.parameters.size(),
              static_cast<long long>(elements));
  for (const CheckpointTensorInfo &parameter : info.parameters)
    std::printf("  %s %s %s\n", parameter.name.c_str(), parameter.dtype.c_str(),
                joinShape(parameter.shape).c_str());
  std::printf("tensors of each rank: %zu\n", info.tensors.size());
  for (const CheckpointTensorInfo &tensor : info.tensors)
    std::printf("  %s %s %s%s\n", tensor.name.c_str(), tensor.dtype.c_str(),
                joinShape(tensor.shape).c_str(),
                tensor.sharded ? " (shard)" : "");
  std::printf("files: %zu\n", info.files.size());
  for (const CheckpointFileInfo &file : info.files)
    std::printf("  %s: rank %lld, %llu bytes, CRC-32 %s\n", file.path.c_str(),
                static_cast<long long>(file.rank),
                static_cast<unsigned long long>(file.bytes),
                file.crc32.c_str());
}

/// `consolidate DIR -o FILE [--dtype D]`: the arguments after DIR.
int consolidate(const std::string &path, int argc, char **argv) {
  std::string output, dtype = "F32";
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "-o" || arg == "--dtype") && i + 1 < argc) {
      std::string value = argv[++i];
      if (arg == "-o") {
        output = value;
        continue;
      }
      if (value == "f32" || value == "bf16" || value == "fp16") {
        dtype = value == "f32" ? "F32" : value == "bf16" ? "BF16" : "F16";
        continue;
      }
      std::fprintf(stderr,
                   "zero-ckpt: --dtype: '%s' is not f32, bf16 or fp16\n",
                   value.c_str());
      return 2;
    }
    std::fprintf(stderr, "zero-ckpt: consolidate: unexpected argument '%s'\n%s",
                 arg.c_str(), kUsage);
    return 2;
  }
  if (output.empty()) {
    std::fprintf(stderr, "zero-ckpt: consolidate needs -o FILE\n%s", kUsage);
    return 2;
  }
  // The output never replaces what it is made from.
  Status outside = checkOutsideCheckpoint(path, output);
  if (!outside.isOk())
    return fail(outside);
  StatusOr<CheckpointInfo> info = readCheckpointInfo(path);
  if (!info.isOk())
    return fail(info.status());
  StatusOr<std::vector<RawTensor>> tensors = consolidateCheckpoint(path, dtype);
  if (!tensors.isOk())
    return fail(tensors.status());
  // "format": "pt" as the safetensors files of PyTorch models have it.
  std::map<std::string, std::string> metadata = {
      {"format", "pt"},
      {"producer", "zero-ckpt"},
      {"schedule", info->schedule},
      {"step", std::to_string(info->step)}};
  StatusOr<std::string> bytes =
      encodeRawSafetensors(*tensors, metadata, output);
  if (!bytes.isOk())
    return fail(bytes.status());
  StatusOr<std::unique_ptr<OutputFile>> file = OutputFile::open(output);
  if (!file.isOk())
    return fail(file.status());
  Status written = (*file)->write(*bytes);
  if (written.isOk())
    written = (*file)->commit();
  if (!written.isOk())
    return fail(written);
  std::printf("%s: %zu tensors (%s) of step %lld\n", output.c_str(),
              tensors->size(), dtype.c_str(),
              static_cast<long long>(info->step));
  return 0;
}

/// `reshard DIR --world-size M [--stage T] -o OUT`: the arguments after DIR.
int reshard(const std::string &path, int argc, char **argv) {
  std::string output;
  int64_t worldSize = 0, stage = -1;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 < argc && arg == "-o") {
      output = argv[++i];
      continue;
    }
    if (i + 1 < argc && (arg == "--world-size" || arg == "--stage")) {
      std::string value = argv[++i];
      char *end = nullptr;
      long long number = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || number < 0) {
        std::fprintf(stderr, "zero-ckpt: %s: '%s' is not a number\n",
                     arg.c_str(), value.c_str());
        return 2;
      }
      (arg == "--world-size" ? worldSize : stage) = number;
      continue;
    }
    std::fprintf(stderr, "zero-ckpt: reshard: unexpected argument '%s'\n%s",
                 arg.c_str(), kUsage);
    return 2;
  }
  if (output.empty() || worldSize == 0) {
    std::fprintf(stderr,
                 "zero-ckpt: reshard needs --world-size M and -o OUT\n%s",
                 kUsage);
    return 2;
  }
  Status resharded = reshardCheckpoint(path, worldSize, stage, output);
  if (!resharded.isOk())
    return fail(resharded);
  StatusOr<CheckpointInfo> info = readCheckpointInfo(output);
  if (!info.isOk())
    return fail(info.status());
  std::printf("%s: step %lld, stage %lld, %zu files\n", info->directory.c_str(),
              static_cast<long long>(info->step),
              static_cast<long long>(info->stage), info->files.size());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string command = argc > 1 ? argv[1] : "";
  if (command == "-h" || command == "--help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (command == "consolidate" && argc >= 3)
    return consolidate(argv[2], argc - 3, argv + 3);
  if (command == "reshard" && argc >= 3)
    return reshard(argv[2], argc - 3, argv + 3);
  if (argc != 3 || (command != "info" && command != "verify")) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string path = argv[2];
  // info reports only what verify accepts.
  Status verified = verifyCheckpoint(path);
  if (!verified.isOk())
    return fail(verified);
  StatusOr<CheckpointInfo> info = readCheckpointInfo(path);
  if (!info.isOk())
    return fail(info.status());
  if (command == "info") {
    printInfo(*info);
    return 0;
  }
  std::printf("%s: step %lld, %zu files: OK\n", info->directory.c_str(),
              static_cast<long long>(info->step), info->files.size());
  return 0;
}
