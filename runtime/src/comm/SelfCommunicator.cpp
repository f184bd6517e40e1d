//===- SelfCommunicator.cpp - world size 1 --------------------------------===//
//
// One rank: every collective is a copy of the rank's own data, and no byte
// crosses a link.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Communicator.h"

#include <cstring>

namespace zero::runtime {

namespace {
class SelfCommunicator final : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string describe() const override { return "self"; }

  Status barrier(const CollectiveContext &) override { return Status::ok(); }
  StatusOr<std::vector<std::string>>
  gatherBytes(const std::string &bytes, const CollectiveContext &) override {
    return std::vector<std::string>{bytes};
  }
  Status broadcastBytes(std::string &, int,
                        const CollectiveContext &) override {
    return Status::ok();
  }

protected:
  Status doAllGather(const void *send, void *recv, int64_t count, DType type,
                     const CollectiveContext &) override {
    return copy(send, recv, count, type);
  }
  Status doReduceScatter(const void *send, void *recv, int64_t count,
                         DType type, ReduceOp,
                         const CollectiveContext &) override {
    return copy(send, recv, count, type);
  }
  Status doAllReduce(const void *send, void *recv, int64_t count, DType type,
                     ReduceOp, const CollectiveContext &) override {
    return copy(send, recv, count, type);
  }
  Status doAllToAll(const void *send, void *recv, int64_t bytesPerPeer,
                    const CollectiveContext &) override {
    if (send != recv && bytesPerPeer > 0)
      std::memmove(recv, send, static_cast<size_t>(bytesPerPeer));
    return Status::ok();
  }
  // The only rank's blocks are in place already.
  Status doAllGatherBlocks(void *, const BlockGrid &, int64_t,
                           const CollectiveContext &) override {
    return Status::ok();
  }
  // Every group of one rank is this rank alone.
  StatusOr<std::unique_ptr<Communicator>>
  doSplit(int, int, const CollectiveContext &) override {
    return std::unique_ptr<Communicator>(new SelfCommunicator());
  }

private:
  Status copy(const void *send, void *recv, int64_t elements, DType type) {
    if (send != recv && elements > 0)
      std::memmove(recv, send,
                   static_cast<size_t>(elements * getDTypeWidth(type)));
    return Status::ok();
  }
};
} // namespace

std::unique_ptr<Communicator> createSelfCommunicator() {
  return std::make_unique<SelfCommunicator>();
}

} // namespace zero::runtime
