//===- CommunicatorGpuTest.cpp - the device communicators on a GPU --------===//
//
// NCCL and MPI staged through pinned memory (createDeviceCommunicator) on
// device buffers: every element type and reduction, the in-place forms, the
// byte counters, stream order, host buffers, the errors, and a stuck
// collective that must fail at its deadline instead of hanging.
//
// Also the groups (split), the all-to-all and the in-place block gathers of
// ZeRO++ and MiCS. Alone (world size 1, the self communicator as host), or
// under mpirun with one process per rank (the MPI communicator as host; NCCL
// needs one GPU per rank and is skipped when ranks share one). Skips, with
// the reason, where no GPU is visible.
//
//===----------------------------------------------------------------------===//

#include "RequireCuda.h"

#include "zero/runtime/Communicator.h"
#include "zero/runtime/FloatFormats.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace zero::runtime;

namespace {

/// The job's host communicator: MPI under a launcher, else self.
Communicator &host() {
  static std::unique_ptr<Communicator> comm = [] {
    if (isLaunchedByMpi()) {
      MpiOptions options;
      options.timeoutSeconds = 60;
      StatusOr<std::unique_ptr<Communicator>> created =
          createMpiCommunicator(options);
      if (created.isOk())
        return std::move(*created);
      ADD_FAILURE() << created.status().toString();
    }
    return createSelfCommunicator();
  }();
  return *comm;
}

int localRank() {
  for (const char *name :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char *value = std::getenv(name))
      return std::atoi(value);
  return 0;
}

int localSize() {
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
    if (const char *value = std::getenv(name))
      return std::atoi(value);
  return 1;
}

int deviceCount() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

int ordinal() { return localRank() % std::max(1, deviceCount()); }

const char *kindName(DeviceCommunication kind) {
  return kind == DeviceCommunication::Nccl ? "Nccl" : "StagedMpi";
}

/// NCCL cannot put two ranks on one GPU.
bool unsupported(DeviceCommunication kind, std::string &reason) {
  if (kind == DeviceCommunication::Nccl && localSize() > deviceCount()) {
    reason = std::to_string(localSize()) + " ranks on this node share " +
             std::to_string(deviceCount()) + " GPU(s): NCCL takes one per rank";
    return true;
  }
  return false;
}

constexpr int64_t kStaging = 4 << 20;

std::unique_ptr<Communicator> make(DeviceCommunication kind,
                                   double timeoutSeconds = 30,
                                   int64_t staging = kStaging) {
  DeviceCommunicatorOptions options;
  options.kind = kind;
  options.deviceOrdinal = ordinal();
  options.timeoutSeconds = timeoutSeconds;
  options.maxCollectiveBytes = staging;
  StatusOr<std::unique_ptr<Communicator>> created =
      createDeviceCommunicator(host(), options);
  if (!created.isOk()) {
    ADD_FAILURE() << created.status().toString();
    return nullptr;
  }
  return std::move(*created);
}

CollectiveContext context(const std::string &what, cudaStream_t stream,
                          const std::atomic<bool> *cancel = nullptr) {
  CollectiveContext c;
  c.what = what;
  c.cancel = cancel;
  c.stream = stream;
  return c;
}

// Element values as doubles, stored in and read from every element type.
void store(DType type, const std::vector<double> &values,
           std::vector<std::byte> &bytes) {
  int64_t width = getDTypeWidth(type);
  bytes.assign(values.size() * width, std::byte{0});
  for (size_t i = 0; i < values.size(); ++i) {
    std::byte *at = bytes.data() + i * width;
    double v = values[i];
    switch (type) {
    case DType::F32: {
      float f = static_cast<float>(v);
      std::memcpy(at, &f, 4);
      break;
    }
    case DType::F64:
      std::memcpy(at, &v, 8);
      break;
    case DType::BF16: {
      uint16_t h = roundToBF16(v);
      std::memcpy(at, &h, 2);
      break;
    }
    case DType::F16: {
      uint16_t h = roundToF16(v);
      std::memcpy(at, &h, 2);
      break;
    }
    case DType::I32: {
      int32_t x = static_cast<int32_t>(v);
      std::memcpy(at, &x, 4);
      break;
    }
    case DType::I64:
    case DType::Index: {
      int64_t x = static_cast<int64_t>(v);
      std::memcpy(at, &x, 8);
      break;
    }
    case DType::I1: {
      uint8_t x = v != 0;
      std::memcpy(at, &x, 1);
      break;
    }
    }
  }
}

double load(DType type, const std::byte *at) {
  switch (type) {
  case DType::F32: {
    float f;
    std::memcpy(&f, at, 4);
    return f;
  }
  case DType::F64: {
    double d;
    std::memcpy(&d, at, 8);
    return d;
  }
  case DType::BF16: {
    uint16_t h;
    std::memcpy(&h, at, 2);
    return bf16ToFloat(h);
  }
  case DType::F16: {
    uint16_t h;
    std::memcpy(&h, at, 2);
    return f16ToFloat(h);
  }
  case DType::I32: {
    int32_t x;
    std::memcpy(&x, at, 4);
    return x;
  }
  case DType::I64:
  case DType::Index: {
    int64_t x;
    std::memcpy(&x, at, 8);
    return static_cast<double>(x);
  }
  case DType::I1: {
    uint8_t x;
    std::memcpy(&x, at, 1);
    return x;
  }
  }
  return 0;
}

/// Device memory, freed at the end of the test.
struct DeviceBuffer {
  explicit DeviceBuffer(size_t bytes) {
    EXPECT_EQ(cudaMalloc(&data, std::max<size_t>(bytes, 1)), cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(data); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  std::byte *bytes() { return static_cast<std::byte *>(data); }
  void *data = nullptr;
};

/// A stream, destroyed at the end of the test.
struct Stream {
  Stream() {
    EXPECT_EQ(cudaSetDevice(ordinal()), cudaSuccess);
    EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
              cudaSuccess);
  }
  ~Stream() {
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
  }
  cudaStream_t stream = nullptr;
};

void upload(void *to, const std::vector<std::byte> &from, cudaStream_t stream) {
  ASSERT_EQ(cudaMemcpyAsync(to, from.data(), from.size(),
                            cudaMemcpyHostToDevice, stream),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
}

/// cudaMemset on the stream the collective runs on, done before returning:
/// a plain cudaMemset runs on the legacy stream, which a non-blocking stream
/// does not wait for, so it could land after an upload on `stream`.
void fill(void *to, int byte, size_t bytes, cudaStream_t stream) {
  ASSERT_EQ(cudaMemsetAsync(to, byte, bytes, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
}

std::vector<std::byte> download(const void *from, size_t bytes) {
  std::vector<std::byte> to(bytes);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(to.data(), from, bytes, cudaMemcpyDeviceToHost),
            cudaSuccess);
  return to;
}

/// Rank r's element i: small integers, so that sums, maxima and minima are
/// exact in every type, in any order.
double valueOf(int rank, int64_t i, DType type) {
  if (type == DType::I1)
    return (i + rank) % 3 == 0;
  return static_cast<double>((i * 7 + rank * 3) % 11) - 5;
}

double reduce(ReduceOp op, int64_t i, int size, DType type) {
  double sum = 0, max = -1e300, min = 1e300;
  for (int r = 0; r < size; ++r) {
    double v = valueOf(r, i, type);
    sum += v;
    max = std::max(max, v);
    min = std::min(min, v);
  }
  switch (op) {
  case ReduceOp::Sum:
    return sum;
  case ReduceOp::Avg:
    if (!isFloat(type))
      return std::trunc(sum / size);
    return sum / size;
  case ReduceOp::Max:
    return max;
  case ReduceOp::Min:
    return min;
  }
  return 0;
}

/// How far a result may be from the exact value: avg of floats rounds
/// (NCCL pre-multiplies by 1/N in the type); everything else is exact.
double tolerance(ReduceOp op, DType type, double expected, int size) {
  if (op != ReduceOp::Avg || !isFloat(type) || (size & (size - 1)) == 0)
    return 0;
  double epsilon = type == DType::BF16  ? 1.0 / 128
                   : type == DType::F16 ? 1.0 / 1024
                   : type == DType::F32 ? 1e-6
                                        : 1e-14;
  return 4 * epsilon * std::max(1.0, std::fabs(expected));
}

const DType kTypes[] = {DType::F32, DType::F64, DType::BF16, DType::F16,
                        DType::I32, DType::I64, DType::Index};
const ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max,
                         ReduceOp::Min};

class DeviceCommunicatorGpuTest
    : public ::testing::TestWithParam<DeviceCommunication> {
protected:
  void SetUp() override {
    ZERO_REQUIRE_CUDA();
    std::string reason;
    if (unsupported(GetParam(), reason))
      GTEST_SKIP() << reason;
    comm = make(GetParam());
    ASSERT_NE(comm, nullptr);
    rank = comm->rank();
    size = comm->size();
    ownStream = std::make_unique<Stream>();
    stream = ownStream->stream;
  }

  std::unique_ptr<Communicator> comm;
  // Made in SetUp: without a GPU the test is skipped before.
  std::unique_ptr<Stream> ownStream;
  cudaStream_t stream = nullptr;
  int rank = 0;
  int size = 1;
};

TEST_P(DeviceCommunicatorGpuTest, DescribesItself) {
  EXPECT_EQ(comm->size(), host().size());
  EXPECT_EQ(comm->rank(), host().rank());
  if (GetParam() == DeviceCommunication::Nccl) {
    EXPECT_EQ(comm->describe().rfind("NCCL 2.", 0), 0u) << comm->describe();
  } else {
    EXPECT_NE(comm->describe().find("staged"), std::string::npos)
        << comm->describe();
  }
}

TEST_P(DeviceCommunicatorGpuTest, AllReducesEveryTypeAndOp) {
  const int64_t count = 1000;
  for (DType type : kTypes) {
    for (ReduceOp op : kOps) {
      for (bool inPlace : {false, true}) {
        SCOPED_TRACE(std::string(getDTypeName(type)) + " " +
                     getReduceOpName(op) + (inPlace ? " in place" : ""));
        int64_t width = getDTypeWidth(type);
        std::vector<double> mine(count);
        for (int64_t i = 0; i < count; ++i)
          mine[i] = valueOf(rank, i, type);
        std::vector<std::byte> bytes;
        store(type, mine, bytes);
        DeviceBuffer send(count * width), recv(count * width);
        upload(send.data, bytes, stream);
        void *out = inPlace ? send.data : recv.data;
        Status status = comm->allReduce(send.data, out, count, type, op,
                                        context("all_reduce", stream));
        ASSERT_TRUE(status.isOk()) << status.toString();
        std::vector<std::byte> result = download(out, count * width);
        for (int64_t i = 0; i < count; ++i) {
          double expected = reduce(op, i, size, type);
          double got = load(type, result.data() + i * width);
          ASSERT_NEAR(got, expected, tolerance(op, type, expected, size))
              << "element " << i;
        }
      }
    }
  }
}

TEST_P(DeviceCommunicatorGpuTest, AllGathersEveryType) {
  const int64_t count = 777;
  std::vector<DType> types(std::begin(kTypes), std::end(kTypes));
  types.push_back(DType::I1);
  for (DType type : types) {
    for (bool inPlace : {false, true}) {
      SCOPED_TRACE(std::string(getDTypeName(type)) +
                   (inPlace ? " in place" : ""));
      int64_t width = getDTypeWidth(type);
      std::vector<double> mine(count);
      for (int64_t i = 0; i < count; ++i)
        mine[i] = valueOf(rank, i, type);
      std::vector<std::byte> bytes;
      store(type, mine, bytes);
      DeviceBuffer send(count * width), recv(size * count * width);
      fill(recv.data, 0xff, size * count * width, stream);
      // In place: this rank's block of recv already holds its shard.
      void *in = inPlace ? recv.bytes() + rank * count * width : send.data;
      upload(in, bytes, stream);
      Status status = comm->allGather(in, recv.data, count, type,
                                      context("all_gather", stream));
      ASSERT_TRUE(status.isOk()) << status.toString();
      std::vector<std::byte> result = download(recv.data, size * count * width);
      for (int r = 0; r < size; ++r)
        for (int64_t i = 0; i < count; ++i)
          ASSERT_EQ(load(type, result.data() + (r * count + i) * width),
                    valueOf(r, i, type))
              << "rank " << r << " element " << i;
    }
  }
}

TEST_P(DeviceCommunicatorGpuTest, ReduceScattersEveryTypeInAndOutOfPlace) {
  const int64_t count = 513;
  for (DType type : kTypes) {
    for (ReduceOp op : kOps) {
      for (bool inPlace : {false, true}) {
        SCOPED_TRACE(std::string(getDTypeName(type)) + " " +
                     getReduceOpName(op) + (inPlace ? " in place" : ""));
        int64_t width = getDTypeWidth(type);
        // Element j of block r is global element r * count + j.
        std::vector<double> mine(size * count);
        for (int64_t i = 0; i < size * count; ++i)
          mine[i] = valueOf(rank, i, type);
        std::vector<std::byte> bytes;
        store(type, mine, bytes);
        DeviceBuffer send(size * count * width), recv(count * width);
        upload(send.data, bytes, stream);
        void *out = inPlace ? send.data : recv.data;
        Status status = comm->reduceScatter(send.data, out, count, type, op,
                                            context("reduce_scatter", stream));
        ASSERT_TRUE(status.isOk()) << status.toString();
        std::vector<std::byte> result = download(out, count * width);
        for (int64_t j = 0; j < count; ++j) {
          double expected = reduce(op, rank * count + j, size, type);
          ASSERT_NEAR(load(type, result.data() + j * width), expected,
                      tolerance(op, type, expected, size))
              << "element " << j;
        }
      }
    }
  }
}

TEST_P(DeviceCommunicatorGpuTest, CountsTheRingVolumeOnce) {
  const int64_t count = 1024;
  DeviceBuffer send(size * count * 4), recv(size * count * 4);
  fill(send.data, 0, size * count * 4, stream);
  CommunicationCounters before = comm->counters();
  CommunicationCounters hostBefore = host().counters();
  ASSERT_TRUE(comm->reduceScatter(send.data, recv.data, count, DType::F32,
                                  ReduceOp::Sum,
                                  context("reduce_scatter", stream))
                  .isOk());
  ASSERT_TRUE(comm->allGather(send.data, recv.data, count, DType::F32,
                              context("all_gather", stream))
                  .isOk());
  ASSERT_TRUE(comm->allReduce(send.data, recv.data, count, DType::F32,
                              ReduceOp::Sum, context("all_reduce", stream))
                  .isOk());
  CommunicationCounters after = comm->counters();
  int64_t shard = (size - 1) * count * 4;
  int64_t chunk = (count * 4 + size - 1) / size;
  EXPECT_EQ(after.calls - before.calls, 3);
  EXPECT_EQ(after.bytesSent - before.bytesSent,
            2 * shard + 2 * (size - 1) * chunk);
  EXPECT_EQ(after.bytesReceived - before.bytesReceived,
            after.bytesSent - before.bytesSent);
  // NCCL does not touch the host communicator; the staged one does, and
  // counts there too, which the executor never reads.
  if (GetParam() == DeviceCommunication::Nccl) {
    EXPECT_EQ(host().counters().calls, hostBefore.calls);
  }
}

TEST_P(DeviceCommunicatorGpuTest, WaitsForTheWorkInFrontOnItsStream) {
  // The send buffer is written on the stream behind 50 ms of host function:
  // a collective that did not order itself on the stream would read zeros.
  const int64_t count = 4096;
  std::vector<double> mine(count, rank + 1.0);
  std::vector<std::byte> bytes;
  store(DType::F32, mine, bytes);
  void *pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, bytes.size()), cudaSuccess);
  std::memcpy(pinned, bytes.data(), bytes.size());
  DeviceBuffer send(count * 4), recv(count * 4);
  ASSERT_EQ(cudaMemset(send.data, 0, count * 4), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaLaunchHostFunc(
                stream,
                [](void *) {
                  std::this_thread::sleep_for(std::chrono::milliseconds(50));
                },
                nullptr),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(send.data, pinned, count * 4,
                            cudaMemcpyHostToDevice, stream),
            cudaSuccess);
  Status status = comm->allReduce(send.data, recv.data, count, DType::F32,
                                  ReduceOp::Sum, context("all_reduce", stream));
  ASSERT_TRUE(status.isOk()) << status.toString();
  // Complete on return: no synchronize before reading.
  std::vector<float> result(count);
  ASSERT_EQ(
      cudaMemcpy(result.data(), recv.data, count * 4, cudaMemcpyDeviceToHost),
      cudaSuccess);
  float expected = size * (size + 1) / 2.0f;
  for (int64_t i = 0; i < count; ++i)
    ASSERT_EQ(result[i], expected) << "element " << i;
  cudaFreeHost(pinned);
}

TEST_P(DeviceCommunicatorGpuTest, RunsWithoutAStream) {
  const int64_t count = 100;
  std::vector<double> mine(count, 2.0);
  std::vector<std::byte> bytes;
  store(DType::F64, mine, bytes);
  DeviceBuffer buffer(count * 8);
  upload(buffer.data, bytes, stream);
  Status status =
      comm->allReduce(buffer.data, buffer.data, count, DType::F64,
                      ReduceOp::Max, context("all_reduce", nullptr));
  ASSERT_TRUE(status.isOk()) << status.toString();
  std::vector<std::byte> result = download(buffer.data, count * 8);
  EXPECT_EQ(load(DType::F64, result.data()), 2.0);
}

TEST_P(DeviceCommunicatorGpuTest, TakesHostBuffersThroughTheHost) {
  // The export gathers ordinary host vectors.
  std::vector<float> part(5, static_cast<float>(rank));
  std::vector<float> full(5 * size, -1);
  Status status = comm->allGather(part.data(), full.data(), 5, DType::F32,
                                  context("all_gather", stream));
  ASSERT_TRUE(status.isOk()) << status.toString();
  for (int r = 0; r < size; ++r)
    EXPECT_EQ(full[r * 5 + 4], static_cast<float>(r));
}

TEST_P(DeviceCommunicatorGpuTest, RefusesMixedAndOverlappingBuffers) {
  DeviceBuffer device(64 * 4);
  std::vector<float> hostBuffer(64);
  Status mixed =
      comm->allReduce(device.data, hostBuffer.data(), 64, DType::F32,
                      ReduceOp::Sum, context("all_reduce of mixed", stream));
  EXPECT_EQ(mixed.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(mixed.message().find("rank " + std::to_string(rank) +
                                 ": all_reduce of mixed: the receive buffer "
                                 "is pageable host memory"),
            std::string::npos)
      << mixed.message();
  Status overlap =
      comm->allReduce(device.bytes(), device.bytes() + 4, 32, DType::F32,
                      ReduceOp::Sum, context("all_reduce", stream));
  EXPECT_EQ(overlap.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(overlap.message().find("overlap"), std::string::npos)
      << overlap.message();
  // Nothing moved: the counters did not change, and the communicator works.
  EXPECT_TRUE(comm->allReduce(device.data, device.data, 0, DType::F32,
                              ReduceOp::Sum, context("empty", stream))
                  .isOk());
  EXPECT_TRUE(comm->allReduce(device.data, device.data, 64, DType::F32,
                              ReduceOp::Sum, context("ok", stream))
                  .isOk());
}

TEST_P(DeviceCommunicatorGpuTest, DelegatesHostCollectives) {
  CollectiveContext c = context("barrier", nullptr);
  EXPECT_TRUE(comm->barrier(c).isOk());
  std::string bytes = rank == 0 ? "abc" : "xyz";
  ASSERT_TRUE(comm->broadcastBytes(bytes, 0, c).isOk());
  EXPECT_EQ(bytes, "abc");
  StatusOr<std::vector<std::string>> gathered =
      comm->gatherBytes(std::to_string(rank), c);
  ASSERT_TRUE(gathered.isOk());
  if (rank == 0) {
    ASSERT_EQ(gathered->size(), static_cast<size_t>(size));
    EXPECT_EQ((*gathered)[size - 1], std::to_string(size - 1));
  }
}

// Groups (MiCS, hpZ, qgZ's hops): the ranks of each parity, split off the
// device communicator, reduce among themselves on the GPU and count their
// own ring.
TEST_P(DeviceCommunicatorGpuTest, SplitsIntoGroupsThatReduceAmongThemselves) {
  StatusOr<std::unique_ptr<Communicator>> made =
      comm->split(rank % 2, rank, context("split", nullptr));
  ASSERT_TRUE(made.isOk()) << made.status().toString();
  Communicator &group = **made;
  const int members = (size - rank % 2 + 1) / 2;
  ASSERT_EQ(group.size(), members);
  EXPECT_EQ(group.rank(), rank / 2);
  const int64_t count = 1000;
  std::vector<double> mine(count);
  for (int64_t i = 0; i < count; ++i)
    mine[i] = valueOf(rank, i, DType::F32);
  std::vector<std::byte> bytes;
  store(DType::F32, mine, bytes);
  DeviceBuffer buffer(count * 4);
  upload(buffer.data, bytes, stream);
  ASSERT_TRUE(group
                  .allReduce(buffer.data, buffer.data, count, DType::F32,
                             ReduceOp::Sum, context("all_reduce", stream))
                  .isOk());
  std::vector<std::byte> got = download(buffer.data, count * 4);
  for (int64_t i = 0; i < count; ++i) {
    double sum = 0;
    for (int r = rank % 2; r < size; r += 2)
      sum += valueOf(r, i, DType::F32);
    ASSERT_EQ(load(DType::F32, got.data() + i * 4), sum) << "element " << i;
  }
  const int64_t chunk = (count * 4 + members - 1) / members;
  EXPECT_EQ(group.counters().calls, 1);
  EXPECT_EQ(group.counters().bytesSent, 2 * (members - 1) * chunk);
}

// qgZ's hops: rank r's bytes for peer p land at p's r-th place, own part
// included; counted (N-1) * b each way.
TEST_P(DeviceCommunicatorGpuTest, AllToAllDeliversEveryPeersBytes) {
  const int64_t b = 4099; // odd: byte-exact, no element type
  auto byteOf = [](int from, int to, int64_t j) {
    return static_cast<std::byte>((from * 31 + to * 7 + j) & 0xFF);
  };
  std::vector<std::byte> bytes(size * b);
  for (int p = 0; p < size; ++p)
    for (int64_t j = 0; j < b; ++j)
      bytes[p * b + j] = byteOf(rank, p, j);
  DeviceBuffer send(size * b), recv(size * b);
  upload(send.data, bytes, stream);
  fill(recv.data, 0xEE, size * b, stream);
  CommunicationCounters before = comm->counters();
  Status status =
      comm->allToAll(send.data, recv.data, b, context("all_to_all", stream));
  ASSERT_TRUE(status.isOk()) << status.toString();
  std::vector<std::byte> got = download(recv.data, size * b);
  for (int p = 0; p < size; ++p)
    for (int64_t j = 0; j < b; ++j)
      ASSERT_EQ(got[p * b + j], byteOf(p, rank, j))
          << "from rank " << p << ", byte " << j;
  EXPECT_EQ(comm->counters().bytesSent - before.bytesSent, (size - 1) * b);
  EXPECT_EQ(comm->counters().calls - before.calls, 1);
}

// A hierarchical gather's hop: every rank's grid of blocks, in place; the
// bytes between blocks are never written.
TEST_P(DeviceCommunicatorGpuTest, GathersBlocksInPlace) {
  BlockGrid held;
  held.blockBytes = 3;
  held.counts = {2, 2};
  held.strides = {10, 4}; // blocks at 0, 4, 10, 14
  const int64_t peerStride = 17;
  const int64_t bytes = size * peerStride + 5;
  const std::vector<int64_t> offsets = held.offsets();
  ASSERT_EQ(offsets, (std::vector<int64_t>{0, 4, 10, 14}));
  auto blockByte = [](int owner, int64_t offset, int64_t j) {
    return static_cast<std::byte>(0x10 * (owner + 1) + offset + j);
  };
  std::vector<std::byte> mine(bytes, std::byte{0x77});
  for (int64_t offset : offsets)
    for (int64_t j = 0; j < held.blockBytes; ++j)
      mine[rank * peerStride + offset + j] = blockByte(rank, offset, j);
  std::vector<std::byte> expected(bytes, std::byte{0x77});
  for (int p = 0; p < size; ++p)
    for (int64_t offset : offsets)
      for (int64_t j = 0; j < held.blockBytes; ++j)
        expected[p * peerStride + offset + j] = blockByte(p, offset, j);
  DeviceBuffer buffer(bytes);
  upload(buffer.data, mine, stream);
  CommunicationCounters before = comm->counters();
  Status status = comm->allGatherBlocks(buffer.data, held, peerStride,
                                        context("all_gather hop", stream));
  ASSERT_TRUE(status.isOk()) << status.toString();
  EXPECT_EQ(download(buffer.data, bytes), expected);
  EXPECT_EQ(comm->counters().bytesSent - before.bytesSent,
            (size - 1) * held.bytes());
}

INSTANTIATE_TEST_SUITE_P(Kinds, DeviceCommunicatorGpuTest,
                         ::testing::Values(DeviceCommunication::Nccl,
                                           DeviceCommunication::StagedMpi),
                         [](const auto &info) {
                           return std::string(kindName(info.param));
                         });

TEST(StagedMpiCommunicatorGpu, RefusesACallLargerThanItsStaging) {
  ZERO_REQUIRE_CUDA();
  std::unique_ptr<Communicator> comm =
      make(DeviceCommunication::StagedMpi, 30, /*staging=*/1024);
  ASSERT_NE(comm, nullptr);
  DeviceBuffer buffer(4096);
  Status status =
      comm->allReduce(buffer.data, buffer.data, 512, DType::F32, ReduceOp::Sum,
                      context("all_reduce of bucket at m.mlir:1:1", nullptr));
  EXPECT_EQ(status.code(), StatusCode::kOutOfRange);
  EXPECT_NE(status.message().find(
                ": all_reduce of bucket at m.mlir:1:1 moves 2048 bytes (send "
                "2048, receive 2048), more than the 1024 bytes of pinned "
                "staging"),
            std::string::npos)
      << status.message();
  EXPECT_EQ(comm->counters().calls, 0);
}

TEST(DeviceCommunicatorGpu, RefusesBadOptions) {
  ZERO_REQUIRE_CUDA();
  DeviceCommunicatorOptions options;
  options.deviceOrdinal = 1000;
  StatusOr<std::unique_ptr<Communicator>> created =
      createDeviceCommunicator(host(), options);
  ASSERT_FALSE(created.isOk());
  EXPECT_NE(created.status().message().find("GPU 1000 does not exist"),
            std::string::npos)
      << created.status().message();
  options.deviceOrdinal = 0;
  options.timeoutSeconds = 0;
  EXPECT_FALSE(createDeviceCommunicator(host(), options).isOk());
}

/// Holds a stream in a host function for `hold`, as a peer that does not
/// join the collective would: the NCCL call behind it cannot complete
/// before. ncclCommAbort waits for the aborted call to leave the stream
/// (NCCL's own stream waits for the user stream), so the hold must end on
/// its own, after the deadline, not when the failed call returns.
class StreamBlocker {
public:
  StreamBlocker(cudaStream_t stream, std::chrono::milliseconds hold) {
    EXPECT_EQ(cudaLaunchHostFunc(stream, &StreamBlocker::hold, &released_),
              cudaSuccess);
    releaser_ = std::thread([this, hold] {
      std::this_thread::sleep_for(hold);
      released_ = true;
    });
  }
  ~StreamBlocker() { releaser_.join(); }

private:
  static void hold(void *flag) {
    auto *released = static_cast<std::atomic<bool> *>(flag);
    while (!released->load())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::atomic<bool> released_{false};
  std::thread releaser_;
};

// One process only: with peers, they would be left in the collective.
TEST(NcclCommunicatorGpu, FailsAtTheDeadlineInsteadOfHanging) {
  ZERO_REQUIRE_CUDA();
  if (host().size() != 1)
    GTEST_SKIP() << "runs on one rank";
  std::unique_ptr<Communicator> comm = make(DeviceCommunication::Nccl, 1.0);
  ASSERT_NE(comm, nullptr);
  Stream stream;
  DeviceBuffer buffer(1024 * 4);
  ASSERT_EQ(cudaMemset(buffer.data, 0, 1024 * 4), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  {
    StreamBlocker blocker(stream.stream, std::chrono::milliseconds(3000));
    auto start = std::chrono::steady_clock::now();
    Status status = comm->allReduce(
        buffer.data, buffer.data, 1024, DType::F32, ReduceOp::Sum,
        context("all_reduce of bucket at m.mlir:3:4 (step 3)", stream.stream));
    double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    EXPECT_EQ(status.code(), StatusCode::kUnavailable);
    EXPECT_EQ(status.message(), "rank 0: all_reduce of bucket at m.mlir:3:4 "
                                "(step 3) did not complete within 1 s: a "
                                "peer rank stopped");
    // The deadline (1 s), then the abort until the hold ends (3 s).
    EXPECT_GE(waited, 0.9);
    EXPECT_LT(waited, 20.0);
  }
  // The aborted communicator refuses further calls with the first error.
  Status again =
      comm->allReduce(buffer.data, buffer.data, 1024, DType::F32, ReduceOp::Sum,
                      context("all_reduce (step 4)", stream.stream));
  EXPECT_EQ(again.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(again.message().find("aborted after an earlier failure"),
            std::string::npos)
      << again.message();
  // The stream drains: the aborted kernels left it.
  EXPECT_EQ(cudaStreamSynchronize(stream.stream), cudaSuccess);
  EXPECT_EQ(comm->counters().calls, 0);
}

TEST(NcclCommunicatorGpu, IsAbandonedWhenTheStepIsCancelled) {
  ZERO_REQUIRE_CUDA();
  if (host().size() != 1)
    GTEST_SKIP() << "runs on one rank";
  std::unique_ptr<Communicator> comm = make(DeviceCommunication::Nccl, 60);
  ASSERT_NE(comm, nullptr);
  Stream stream;
  DeviceBuffer buffer(1024 * 4);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::atomic<bool> cancel{false};
  {
    StreamBlocker blocker(stream.stream, std::chrono::milliseconds(1500));
    std::thread canceller([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      cancel = true;
    });
    Status status = comm->allGather(
        buffer.data, buffer.data, 1024, DType::F32,
        context("all_gather of bucket (step 2)", stream.stream, &cancel));
    canceller.join();
    EXPECT_EQ(status.code(), StatusCode::kUnavailable);
    EXPECT_EQ(status.message(), "rank 0: all_gather of bucket (step 2) "
                                "abandoned: another stream of this rank "
                                "failed");
  }
  EXPECT_EQ(cudaStreamSynchronize(stream.stream), cudaSuccess);
}

} // namespace
