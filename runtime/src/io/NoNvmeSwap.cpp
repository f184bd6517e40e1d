//===- NoNvmeSwap.cpp - the NVMe swap store of a build without liburing ---===//

#include "zero/runtime/NvmeSwap.h"

#include <cstdlib>

namespace zero::runtime {

// No store can be created, so no member below can be reached.
class NvmeSwapSpace::Impl {};

NvmeSwapSpace::NvmeSwapSpace(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

NvmeSwapSpace::~NvmeSwapSpace() = default;

StatusOr<std::unique_ptr<NvmeSwapSpace>>
NvmeSwapSpace::create(const NvmeSwapOptions &options) {
  return ZERO_ERROR(kUnavailable,
                    options.nvmePath +
                        ": cannot swap to NVMe: this runtime was built "
                        "without liburing (CMake found no liburing-dev)");
}

NvmeSwapSpace::Ticket NvmeSwapSpace::write(int64_t, const void *, int64_t,
                                           const std::string &) {
  std::abort();
}

NvmeSwapSpace::Ticket NvmeSwapSpace::read(int64_t, void *, int64_t,
                                          const std::string &) {
  std::abort();
}

Status NvmeSwapSpace::wait(Ticket) { std::abort(); }

Status NvmeSwapSpace::drain() { std::abort(); }

void NvmeSwapSpace::setStep(int64_t) { std::abort(); }

const std::string &NvmeSwapSpace::path() const { std::abort(); }

bool NvmeSwapSpace::directIo() const { std::abort(); }

const std::string &NvmeSwapSpace::notice() const { std::abort(); }

NvmeSwapStats NvmeSwapSpace::stats() const { std::abort(); }

} // namespace zero::runtime
