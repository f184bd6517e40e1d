//===- MpiCommunicator.cpp - collectives over MPI -------------------------===//
//
// Every collective is a non-blocking MPI call polled with MPI_Test against a
// deadline, so that a rank that died turns into an error on its peers
// ("... did not complete within 60 s: a peer rank stopped") instead of a
// hang. MPI errors are returned (MPI_ERRORS_RETURN) and become Status values
// naming the collective and the rank. bf16 and f16 travel as 16-bit words
// and are reduced by user-defined operations.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Communicator.h"

#include "CollectiveWait.h"
#include "ElementOps.h"

// The C API only: the deprecated C++ bindings need their own library.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace zero::runtime {

namespace {

template <DType Type, ReduceOp Op>
void reduce16Op(void *in, void *inout, int *len, MPI_Datatype *) {
  comm::reduce16(static_cast<const uint16_t *>(in),
                 static_cast<uint16_t *>(inout), *len, Type, Op);
}

/// What the world communicator shares with the groups split from it.
struct MpiShared {
  /// MPI_THREAD_SERIALIZED: one call at a time in the process, whichever
  /// communicator makes it.
  std::mutex mutex;
  /// A call did not complete: MPI cannot finalize.
  bool broken = false;
};

class MpiCommunicator final : public Communicator {
public:
  explicit MpiCommunicator(const MpiOptions &options)
      : timeout_(options.timeoutSeconds),
        shared_(std::make_shared<MpiShared>()) {}
  ~MpiCommunicator() override;

  Status initialize();
  /// A group of `parent`'s ranks, on `comm`, which it owns.
  Status initializeGroup(const MpiCommunicator &parent, MPI_Comm comm);

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string describe() const override { return library_; }

  Status barrier(const CollectiveContext &context) override;
  StatusOr<std::vector<std::string>>
  gatherBytes(const std::string &bytes,
              const CollectiveContext &context) override;
  Status broadcastBytes(std::string &bytes, int root,
                        const CollectiveContext &context) override;

  void abort(int exitCode) {
    aborted_ = true;
    // The launcher forwards a rank's output asynchronously and MPI_Abort
    // kills the job at once: without a pause the error a rank just printed
    // can be lost (seen under load with Open MPI 4.1).
    std::fflush(nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    MPI_Abort(MPI_COMM_WORLD, exitCode);
  }

protected:
  Status doAllGather(const void *send, void *recv, int64_t count, DType type,
                     const CollectiveContext &context) override;
  Status doReduceScatter(const void *send, void *recv, int64_t count,
                         DType type, ReduceOp op,
                         const CollectiveContext &context) override;
  Status doAllReduce(const void *send, void *recv, int64_t count, DType type,
                     ReduceOp op, const CollectiveContext &context) override;
  Status doAllToAll(const void *send, void *recv, int64_t bytesPerPeer,
                    const CollectiveContext &context) override;
  Status doAllGatherBlocks(void *buffer, const BlockGrid &held,
                           int64_t peerStride,
                           const CollectiveContext &context) override;
  StatusOr<std::unique_ptr<Communicator>>
  doSplit(int color, int key, const CollectiveContext &context) override;

private:
  Status createOps16();
  Status mpiError(int code, const CollectiveContext &context) const;
  /// Polls `request` until it completes, the deadline passes or the context
  /// is cancelled.
  Status complete(MPI_Request &request, const CollectiveContext &context);
  Status checkCount(int64_t count, const CollectiveContext &context) const;
  MPI_Datatype getType(DType type) const;
  /// The operation for `op` on `type`; avg reduces as sum.
  MPI_Op getOp(DType type, ReduceOp op) const;
  /// Divides by the world size after an avg.
  void finishAvg(void *data, int64_t count, DType type, ReduceOp op) const {
    if (op == ReduceOp::Avg)
      comm::divideElements(data, count, type, size_);
  }

  double timeout_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::string library_ = "MPI";
  // User operations for bf16 and f16: sum (also avg), max, min.
  MPI_Op ops16_[2][3] = {};
  bool initialized_ = false;
  bool aborted_ = false;
  std::shared_ptr<MpiShared> shared_;
};

Status MpiCommunicator::initialize() {
  int already = 0;
  MPI_Initialized(&already);
  int provided = 0;
  if (!already) {
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) !=
        MPI_SUCCESS)
      return ZERO_ERROR(kUnavailable, "MPI_Init_thread failed");
    initialized_ = true;
  } else {
    MPI_Query_thread(&provided);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (provided < MPI_THREAD_SERIALIZED)
    return ZERO_ERROR(kUnavailable,
                      "the MPI library gives thread level " +
                          std::to_string(provided) +
                          ", but the executor calls MPI from its comm "
                          "thread and needs MPI_THREAD_SERIALIZED");
  // An own communicator: the job's collectives do not mix with a host
  // application's.
  if (MPI_Comm_dup(MPI_COMM_WORLD, &comm_) != MPI_SUCCESS)
    return ZERO_ERROR(kUnavailable, "MPI_Comm_dup failed");
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  if (MPI_Get_library_version(version, &length) == MPI_SUCCESS) {
    std::string text(version, static_cast<size_t>(length));
    library_ = "MPI (" + text.substr(0, text.find(',')) + ")";
  }
  return createOps16();
}

Status MpiCommunicator::initializeGroup(const MpiCommunicator &parent,
                                        MPI_Comm comm) {
  comm_ = comm;
  shared_ = parent.shared_;
  library_ = parent.library_;
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  return createOps16();
}

Status MpiCommunicator::createOps16() {
  MPI_User_function *functions[2][3] = {
      {reduce16Op<DType::BF16, ReduceOp::Sum>,
       reduce16Op<DType::BF16, ReduceOp::Max>,
       reduce16Op<DType::BF16, ReduceOp::Min>},
      {reduce16Op<DType::F16, ReduceOp::Sum>,
       reduce16Op<DType::F16, ReduceOp::Max>,
       reduce16Op<DType::F16, ReduceOp::Min>}};
  for (int t = 0; t < 2; ++t)
    for (int o = 0; o < 3; ++o)
      if (MPI_Op_create(functions[t][o], /*commute=*/1, &ops16_[t][o]) !=
          MPI_SUCCESS)
        return ZERO_ERROR(kUnavailable, "MPI_Op_create failed");
  return Status::ok();
}

MpiCommunicator::~MpiCommunicator() {
  if (aborted_)
    return;
  for (auto &row : ops16_)
    for (MPI_Op &op : row)
      if (op != MPI_OP_NULL && op != 0)
        MPI_Op_free(&op);
  // A collective left pending would make MPI_Finalize wait for it forever;
  // the job is ended by abortJob or by the launcher in that case.
  if (shared_->broken)
    return;
  if (comm_ != MPI_COMM_NULL)
    MPI_Comm_free(&comm_);
  if (initialized_)
    MPI_Finalize();
}

MPI_Datatype MpiCommunicator::getType(DType type) const {
  switch (type) {
  case DType::F32:
    return MPI_FLOAT;
  case DType::F64:
    return MPI_DOUBLE;
  case DType::BF16:
  case DType::F16:
    return MPI_UINT16_T;
  case DType::I64:
  case DType::Index:
    return MPI_INT64_T;
  case DType::I32:
    return MPI_INT32_T;
  case DType::I1:
    return MPI_UINT8_T;
  }
  return MPI_BYTE;
}

MPI_Op MpiCommunicator::getOp(DType type, ReduceOp op) const {
  int index = op == ReduceOp::Max ? 1 : op == ReduceOp::Min ? 2 : 0;
  if (type == DType::BF16)
    return ops16_[0][index];
  if (type == DType::F16)
    return ops16_[1][index];
  return index == 1 ? MPI_MAX : index == 2 ? MPI_MIN : MPI_SUM;
}

Status MpiCommunicator::mpiError(int code,
                                 const CollectiveContext &context) const {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  std::string message = "error " + std::to_string(code);
  if (MPI_Error_string(code, text, &length) == MPI_SUCCESS)
    message = std::string(text, static_cast<size_t>(length));
  return comm::collectiveFailure(rank_, context, "MPI", message);
}

Status MpiCommunicator::checkCount(int64_t count,
                                   const CollectiveContext &context) const {
  if (count < 0 || count > INT_MAX)
    return ZERO_ERROR(kOutOfRange,
                      comm::describeCall(rank_, context) + ": " +
                          std::to_string(count) +
                          " elements per call exceed MPI's int count");
  return Status::ok();
}

Status MpiCommunicator::complete(MPI_Request &request,
                                 const CollectiveContext &context) {
  comm::CollectiveDeadline deadline(timeout_);
  std::chrono::microseconds pause(0);
  for (int polls = 0;; ++polls) {
    int done = 0;
    int code = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (code != MPI_SUCCESS) {
      shared_->broken = true;
      return mpiError(code, context);
    }
    if (done)
      return Status::ok();
    Status waiting = deadline.check(rank_, context);
    if (!waiting.isOk()) {
      shared_->broken = true;
      return waiting;
    }
    // Spin briefly (most calls of a step finish in microseconds), then back
    // off so that a waiting comm thread leaves the cores to compute.
    if (polls < 64) {
      std::this_thread::yield();
    } else {
      pause = std::min(std::chrono::microseconds(500),
                       std::max(std::chrono::microseconds(10), pause * 2));
      std::this_thread::sleep_for(pause);
    }
  }
}

Status MpiCommunicator::doAllGather(const void *send, void *recv, int64_t count,
                                    DType type,
                                    const CollectiveContext &context) {
  ZERO_RETURN_IF_ERROR(checkCount(count, context));
  std::lock_guard<std::mutex> lock(shared_->mutex);
  int64_t width = getDTypeWidth(type);
  const void *source =
      send == static_cast<const std::byte *>(recv) + rank_ * count * width
          ? MPI_IN_PLACE
          : send;
  MPI_Request request;
  int code =
      MPI_Iallgather(source, static_cast<int>(count), getType(type), recv,
                     static_cast<int>(count), getType(type), comm_, &request);
  if (code != MPI_SUCCESS)
    return mpiError(code, context);
  return complete(request, context);
}

Status MpiCommunicator::doReduceScatter(const void *send, void *recv,
                                        int64_t count, DType type, ReduceOp op,
                                        const CollectiveContext &context) {
  ZERO_RETURN_IF_ERROR(checkCount(count, context));
  std::lock_guard<std::mutex> lock(shared_->mutex);
  MPI_Request request;
  int code = MPI_Ireduce_scatter_block(send == recv ? MPI_IN_PLACE : send, recv,
                                       static_cast<int>(count), getType(type),
                                       getOp(type, op), comm_, &request);
  if (code != MPI_SUCCESS)
    return mpiError(code, context);
  ZERO_RETURN_IF_ERROR(complete(request, context));
  finishAvg(recv, count, type, op);
  return Status::ok();
}

Status MpiCommunicator::doAllReduce(const void *send, void *recv, int64_t count,
                                    DType type, ReduceOp op,
                                    const CollectiveContext &context) {
  ZERO_RETURN_IF_ERROR(checkCount(count, context));
  std::lock_guard<std::mutex> lock(shared_->mutex);
  MPI_Request request;
  int code = MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send, recv,
                            static_cast<int>(count), getType(type),
                            getOp(type, op), comm_, &request);
  if (code != MPI_SUCCESS)
    return mpiError(code, context);
  ZERO_RETURN_IF_ERROR(complete(request, context));
  finishAvg(recv, count, type, op);
  return Status::ok();
}

Status MpiCommunicator::doAllToAll(const void *send, void *recv,
                                   int64_t bytesPerPeer,
                                   const CollectiveContext &context) {
  ZERO_RETURN_IF_ERROR(checkCount(bytesPerPeer, context));
  std::lock_guard<std::mutex> lock(shared_->mutex);
  MPI_Request request;
  int code =
      MPI_Ialltoall(send, static_cast<int>(bytesPerPeer), MPI_BYTE, recv,
                    static_cast<int>(bytesPerPeer), MPI_BYTE, comm_, &request);
  if (code != MPI_SUCCESS)
    return mpiError(code, context);
  return complete(request, context);
}

Status MpiCommunicator::doAllGatherBlocks(void *buffer, const BlockGrid &held,
                                          int64_t peerStride,
                                          const CollectiveContext &context) {
  ZERO_RETURN_IF_ERROR(checkCount(held.blockBytes, context));
  for (int64_t count : held.counts)
    ZERO_RETURN_IF_ERROR(checkCount(count, context));
  std::lock_guard<std::mutex> lock(shared_->mutex);
  // The held blocks as one datatype: a block, repeated along each dimension
  // (hvector), its extent the distance between two ranks' places, so that
  // MPI puts rank p's at buffer + p * peerStride.
  std::vector<MPI_Datatype> types;
  struct FreeTypes {
    std::vector<MPI_Datatype> &types;
    ~FreeTypes() {
      for (MPI_Datatype &type : types)
        MPI_Type_free(&type);
    }
  } freeTypes{types};
  MPI_Datatype type;
  int code =
      MPI_Type_contiguous(static_cast<int>(held.blockBytes), MPI_BYTE, &type);
  for (size_t d = 0; code == MPI_SUCCESS && d < held.counts.size(); ++d) {
    types.push_back(type);
    code = MPI_Type_create_hvector(static_cast<int>(held.counts[d]), 1,
                                   static_cast<MPI_Aint>(held.strides[d]),
                                   types.back(), &type);
  }
  if (code == MPI_SUCCESS) {
    types.push_back(type);
    code = MPI_Type_create_resized(types.back(), 0,
                                   static_cast<MPI_Aint>(peerStride), &type);
  }
  if (code == MPI_SUCCESS) {
    types.push_back(type);
    code = MPI_Type_commit(&types.back());
  }
  if (code != MPI_SUCCESS)
    return mpiError(code, context);
  MPI_Request request;
  code = MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buffer, 1,
                        types.back(), comm_, &request);
  if (code != MPI_SUCCESS)
    return mpiError(code, context);
  return complete(request, context);
}

StatusOr<std::unique_ptr<Communicator>>
MpiCommunicator::doSplit(int color, int key, const CollectiveContext &context) {
  if (color < 0)
    return ZERO_ERROR(kInvalidArgument, comm::describeCall(rank_, context) +
                                            ": color " + std::to_string(color) +
                                            " is negative");
  MPI_Comm comm = MPI_COMM_NULL;
  {
    // Blocking: MPI has no non-blocking split. Every rank makes the same
    // splits in order when its executor is created, before any step.
    std::lock_guard<std::mutex> lock(shared_->mutex);
    int code = MPI_Comm_split(comm_, color, key, &comm);
    if (code != MPI_SUCCESS)
      return mpiError(code, context);
  }
  auto group = std::make_unique<MpiCommunicator>(MpiOptions{timeout_});
  ZERO_RETURN_IF_ERROR(group->initializeGroup(*this, comm));
  return std::unique_ptr<Communicator>(std::move(group));
}

Status MpiCommunicator::barrier(const CollectiveContext &context) {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  MPI_Request request;
  int code = MPI_Ibarrier(comm_, &request);
  if (code != MPI_SUCCESS)
    return mpiError(code, context);
  return complete(request, context);
}

StatusOr<std::vector<std::string>>
MpiCommunicator::gatherBytes(const std::string &bytes,
                             const CollectiveContext &context) {
  ZERO_RETURN_IF_ERROR(checkCount(static_cast<int64_t>(bytes.size()), context));
  std::lock_guard<std::mutex> lock(shared_->mutex);
  int length = static_cast<int>(bytes.size());
  std::vector<int> lengths(rank_ == 0 ? size_ : 0);
  MPI_Request request;
  int code = MPI_Igather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0,
                         comm_, &request);
  if (code != MPI_SUCCESS)
    return mpiError(code, context);
  ZERO_RETURN_IF_ERROR(complete(request, context));
  std::vector<int> displacements(lengths.size());
  int64_t total = 0;
  for (size_t r = 0; r < lengths.size(); ++r) {
    if (total > INT_MAX)
      return ZERO_ERROR(kOutOfRange, "rank 0: " + context.what +
                                         ": more than 2 GiB to gather");
    displacements[r] = static_cast<int>(total);
    total += lengths[r];
  }
  std::string all(static_cast<size_t>(total), '\0');
  code =
      MPI_Igatherv(bytes.data(), length, MPI_BYTE, all.data(), lengths.data(),
                   displacements.data(), MPI_BYTE, 0, comm_, &request);
  if (code != MPI_SUCCESS)
    return mpiError(code, context);
  ZERO_RETURN_IF_ERROR(complete(request, context));
  std::vector<std::string> result;
  for (size_t r = 0; r < lengths.size(); ++r)
    result.push_back(all.substr(displacements[r], lengths[r]));
  return result;
}

Status MpiCommunicator::broadcastBytes(std::string &bytes, int root,
                                       const CollectiveContext &context) {
  if (bytes.size() > INT_MAX)
    return ZERO_ERROR(kOutOfRange, comm::describeCall(rank_, context) +
                                       ": more than 2 GiB to broadcast");
  std::lock_guard<std::mutex> lock(shared_->mutex);
  MPI_Request request;
  int code = MPI_Ibcast(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE,
                        root, comm_, &request);
  if (code != MPI_SUCCESS)
    return mpiError(code, context);
  return complete(request, context);
}

} // namespace

StatusOr<std::unique_ptr<Communicator>>
createMpiCommunicator(const MpiOptions &options) {
  if (!(options.timeoutSeconds > 0))
    return ZERO_ERROR(kInvalidArgument,
                      "the collective timeout must be positive");
  auto communicator = std::make_unique<MpiCommunicator>(options);
  ZERO_RETURN_IF_ERROR(communicator->initialize());
  return std::unique_ptr<Communicator>(std::move(communicator));
}

void abortJob(Communicator &communicator, int exitCode) {
  if (auto *mpi = dynamic_cast<MpiCommunicator *>(&communicator))
    mpi->abort(exitCode);
}

} // namespace zero::runtime
