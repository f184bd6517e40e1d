//===- StructuredGpuTest.cpp - generated kernels against the host ---------===//
//
// Every case of StructuredCases.h (every body op and dtype, reductions,
// every loop mapping, tensor.extract, outside scalars, aliasing, empty
// tensors) as a one-instruction schedule, run by the host backend and by
// prepareStructured on a GPU on the same random data (with special values):
// the results must be bitwise equal (NaN equal to any NaN), or within a few
// ulps for the cases with transcendental functions (getTranscendentalUlps:
// neither CUDA's libm nor glibc rounds them correctly), or, for float sums and
// products a cooperative reduction reassociates, within the error bound of
// compareReassociated (StructuredCases.h); a second run must give the same
// bits as the first (the kernels' orders are fixed). Also the kernel cache:
// memory and disk hits, a damaged cache file, a directory that cannot be
// written. Skips, with the reason, where no GPU is visible.
//
//===----------------------------------------------------------------------===//

#include "RequireCuda.h"
#include "StructuredCaseRun.h"
#include "StructuredCases.h"
#include "cuda/CudaContext.h"
#include "cuda/CudaOps.h"
#include "cuda/KernelCache.h"
#include "cuda/Structured.h"
#include "ops/Check.h"

#include "zero/runtime/Device.h"
#include "zero/runtime/Memory.h"
#include "zero/runtime/Schedule.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

using namespace zero::runtime;
using namespace zero::runtime::cuda;
using nlohmann::json;
using zero::runtime::test::buildSchedule;
using zero::runtime::test::CaseData;
using zero::runtime::test::CaseSchedule;
using zero::runtime::test::compareCaseData;
using zero::runtime::test::compareCaseResult;
using zero::runtime::test::getStructuredCases;
using zero::runtime::test::HostRun;
using zero::runtime::test::makeAllCaseData;
using zero::runtime::test::makeCaseData;
using zero::runtime::test::runOnHost;
using zero::runtime::test::StructuredCase;
using zero::runtime::test::ValueSpec;

namespace {

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

/// A fresh directory under the temporary directory, removed at the end.
class TempDir {
public:
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    path_ = std::string(base && *base ? base : "/tmp") +
            "/zero-structured-test-" + std::to_string(getpid()) + "-" +
            std::to_string(counter_++);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code error;
    std::filesystem::remove_all(path_, error);
  }
  const std::string &path() const { return path_; }

private:
  static inline int counter_ = 0;
  std::string path_;
};

/// A CudaContext over one arena for a case's schedule.
class GpuCase {
public:
  GpuCase(const CaseSchedule &s, KernelCache &kernels) : s_(s) {
    ctx_.schedule = s.schedule.get();
    ctx_.kernels = &kernels;
    ctx_.ordinal = kernels.ordinal();
    ctx_.tracker = &tracker_;
    ctx_.errors = &errors_;
  }
  ~GpuCase() {
    if (arena_)
      cudaFree(arena_);
    if (registers_)
      cudaFree(registers_);
    if (stream_)
      cudaStreamDestroy(stream_);
  }

  /// Allocates and fills the arena and the outside scalars' registers.
  void setUp(const StructuredCase &c, const std::vector<Scalar> &registers) {
    ASSERT_CUDA(cudaSetDevice(ctx_.ordinal));
    ASSERT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    Status errors = errors_.init(tracker_);
    ASSERT_TRUE(errors.isOk()) << errors.toString();
    const int64_t bytes = s_.schedule->arenaBytes(MemorySpace::Device);
    ASSERT_CUDA(cudaMalloc(&arena_, bytes > 0 ? bytes : 1));
    ASSERT_CUDA(cudaMemset(arena_, 0, bytes > 0 ? bytes : 1));
    ASSERT_CUDA(cudaMalloc(&registers_, sizeof(Scalar) * c.values.size()));
    ASSERT_CUDA(cudaMemset(registers_, 0, sizeof(Scalar) * c.values.size()));
    for (size_t i = 0; i < c.values.size(); ++i) {
      if (c.values[i].isTensor && c.values[i].aliasOf < 0 &&
          c.values[i].numel() > 0) {
        std::vector<uint8_t> data = makeCaseData(c.values[i], i + 1);
        ASSERT_CUDA(cudaMemcpy(static_cast<std::byte *>(arena_) + s_.offsets[i],
                               data.data(), data.size(),
                               cudaMemcpyHostToDevice));
      }
      if (c.values[i].external) {
        ASSERT_CUDA(cudaMemcpy(static_cast<Scalar *>(registers_) + i,
                               &registers[i], sizeof(Scalar),
                               cudaMemcpyHostToDevice));
      }
    }
    ctx_.compute = stream_;
    ctx_.registers = static_cast<Scalar *>(registers_);
    ctx_.arenas[static_cast<int>(MemorySpace::Device)] =
        static_cast<std::byte *>(arena_);
  }

  PreparedOpOr prepare() {
    StatusOr<ops::CheckedOp> checked = ops::checkComputeOp(
        ops::getInstructionContext(*s_.op, "", s_.schedule->values()));
    if (!checked.isOk())
      return checked.status();
    return prepareStructured(*s_.op, checked->body, ctx_);
  }

  std::vector<uint8_t> read(const StructuredCase &c, int64_t id) {
    const ValueSpec &v = c.values[id];
    std::vector<uint8_t> bytes(v.numel() * getDTypeWidth(v.dtype));
    if (!bytes.empty()) {
      EXPECT_EQ(cudaMemcpy(bytes.data(),
                           static_cast<std::byte *>(arena_) + s_.offsets[id],
                           bytes.size(), cudaMemcpyDeviceToHost),
                cudaSuccess);
    }
    return bytes;
  }
  cudaStream_t stream() const { return stream_; }
  /// What the kernels reported, as CudaDevice::synchronize returns it.
  Status checkErrors() { return errors_.check(0); }
  const MemoryTracker &tracker() const { return tracker_; }

private:
  const CaseSchedule &s_;
  MemoryTracker tracker_; // before errors_, which it counts
  DeviceErrors errors_;
  CudaContext ctx_;
  void *arena_ = nullptr;
  void *registers_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

void checkCase(const StructuredCase &c, KernelCache &kernels) {
  SCOPED_TRACE(c.name);
  std::string error;
  CaseSchedule s = buildSchedule(c, error);
  ASSERT_TRUE(s.schedule) << error;
  HostRun host = runOnHost(c, s);

  GpuCase gpu(s, kernels);
  gpu.setUp(c, host.registers);
  if (::testing::Test::HasFatalFailure())
    return;
  PreparedOpOr op = gpu.prepare();
  ASSERT_TRUE(op.isOk()) << op.status().toString();
  // Nothing is allocated in a step.
  const int64_t allocated = gpu.tracker().current();
  Status status = (*op)->run(1);
  ASSERT_TRUE(status.isOk()) << status.toString();
  ASSERT_CUDA(cudaStreamSynchronize(gpu.stream()));
  EXPECT_EQ(gpu.tracker().current(), allocated);
  Status found = gpu.checkErrors();

  if (!c.runError.empty()) {
    // The host fails in the step; the GPU reports it at the end of the same
    // step with the host's text, as the executor prefixes it, up to the
    // index (the first index found may differ: threads run in any order).
    ASSERT_FALSE(host.status.isOk());
    const std::string &expected = host.status.message();
    ASSERT_NE(expected.find(c.runError), std::string::npos) << expected;
    ASSERT_FALSE(found.isOk());
    EXPECT_EQ(found.code(), StatusCode::kOutOfRange);
    const std::string prefix =
        "rank 0: step 1: " +
        expected.substr(0, expected.find(c.runError) + c.runError.size());
    EXPECT_EQ(found.message().substr(0, prefix.size()), prefix)
        << found.message();
    const std::string suffix = " is out of range for dimension 0 (size 17) "
                               "of value 1 (%v1) at case.mlir:1:1";
    ASSERT_GT(found.message().size(), suffix.size());
    EXPECT_EQ(found.message().substr(found.message().size() - suffix.size()),
              suffix)
        << found.message();
    // Reported once: the record is clear again.
    EXPECT_TRUE(gpu.checkErrors().isOk());
    return;
  }
  ASSERT_TRUE(found.isOk()) << found.toString();
  ASSERT_TRUE(host.status.isOk()) << host.status.toString();
  const CaseData data = makeAllCaseData(c);
  std::vector<std::vector<uint8_t>> first;
  for (size_t k = 0; k < c.checked.size(); ++k) {
    const int64_t id = c.checked[k];
    first.push_back(gpu.read(c, id));
    EXPECT_EQ(compareCaseResult(c, k, host.results[k], first.back(), data), "")
        << "value " << id << " (" << getDTypeName(c.values[id].dtype) << ")";
  }
  // Running again gives the same bits (nothing is left over from the first
  // run: the destinations are read, the results written; the order of every
  // combination is fixed by the shape).
  bool inPlace = false;
  for (int64_t id : c.checked)
    inPlace |= c.values[id].aliasOf >= 0;
  if (!inPlace) {
    status = (*op)->run(2);
    ASSERT_TRUE(status.isOk()) << status.toString();
    ASSERT_CUDA(cudaStreamSynchronize(gpu.stream()));
    for (size_t k = 0; k < c.checked.size(); ++k)
      EXPECT_EQ(compareCaseData(c.values[c.checked[k]].dtype, first[k],
                                gpu.read(c, c.checked[k]), 0),
                "")
          << "value " << c.checked[k] << " on the second run";
  }
}

TEST(StructuredGpuTest, EveryCaseMatchesTheHost) {
  ZERO_REQUIRE_CUDA();
  TempDir cacheDir;
  KernelCache kernels(0, cacheDir.path());
  for (const StructuredCase &c : getStructuredCases())
    checkCase(c, kernels);
  KernelCache::Stats stats = kernels.stats();
  EXPECT_GT(stats.compiled, 0);
  EXPECT_EQ(stats.diskHits, 0);
}

const StructuredCase &someCase() {
  static const std::vector<StructuredCase> cases = getStructuredCases();
  for (const StructuredCase &c : cases)
    if (c.name == "generic matmul")
      return c;
  return cases.front();
}

TEST(StructuredGpuTest, KernelCacheInMemoryAndOnDisk) {
  ZERO_REQUIRE_CUDA();
  TempDir dir;
  const StructuredCase &c = someCase();
  std::string error;
  CaseSchedule s = buildSchedule(c, error);
  ASSERT_TRUE(s.schedule) << error;
  HostRun host = runOnHost(c, s);
  ASSERT_TRUE(host.status.isOk()) << host.status.toString();
  {
    KernelCache kernels(0, dir.path());
    GpuCase gpu(s, kernels);
    gpu.setUp(c, host.registers);
    ASSERT_TRUE(gpu.prepare().isOk());
    ASSERT_TRUE(gpu.prepare().isOk()); // the same source: loaded once
    KernelCache::Stats stats = kernels.stats();
    EXPECT_EQ(stats.compiled, 1);
    EXPECT_EQ(stats.memoryHits, 1);
    EXPECT_EQ(stats.diskHits, 0);
  }
  std::vector<std::filesystem::path> files;
  for (const auto &entry : std::filesystem::directory_iterator(dir.path()))
    files.push_back(entry.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].extension(), ".bin");
  {
    // A new process (a new cache) reads it back instead of compiling.
    KernelCache kernels(0, dir.path());
    GpuCase gpu(s, kernels);
    gpu.setUp(c, host.registers);
    PreparedOpOr op = gpu.prepare();
    ASSERT_TRUE(op.isOk()) << op.status().toString();
    EXPECT_EQ(kernels.stats().compiled, 0);
    EXPECT_EQ(kernels.stats().diskHits, 1);
    ASSERT_TRUE((*op)->run(1).isOk());
    ASSERT_CUDA(cudaStreamSynchronize(gpu.stream()));
    EXPECT_EQ(compareCaseData(DType::F32, host.results[0],
                              gpu.read(c, c.checked[0]), 0),
              "");
  }
  {
    // A damaged file is a miss: compiled again and replaced, no error.
    const auto size = std::filesystem::file_size(files[0]);
    std::filesystem::resize_file(files[0], size / 2);
    KernelCache kernels(0, dir.path());
    GpuCase gpu(s, kernels);
    gpu.setUp(c, host.registers);
    ASSERT_TRUE(gpu.prepare().isOk());
    EXPECT_EQ(kernels.stats().compiled, 1);
    EXPECT_EQ(std::filesystem::file_size(files[0]), size);
  }
}

TEST(StructuredGpuTest, UnwritableCacheOnlyCompilesAgain) {
  ZERO_REQUIRE_CUDA();
  const StructuredCase &c = someCase();
  std::string error;
  CaseSchedule s = buildSchedule(c, error);
  ASSERT_TRUE(s.schedule) << error;
  HostRun host = runOnHost(c, s);
  for (const char *directory : {"/proc/zero-opt-kernels", ""}) {
    KernelCache kernels(0, directory);
    GpuCase gpu(s, kernels);
    gpu.setUp(c, host.registers);
    PreparedOpOr op = gpu.prepare();
    ASSERT_TRUE(op.isOk()) << op.status().toString();
    EXPECT_EQ(kernels.stats().compiled, 1);
  }
}

} // namespace
