//===- SessionTest.cpp - what a session decides before it runs ------------===//
//
// Which GPU each rank takes: its local rank on a machine whose ranks see
// every GPU; its local rank mod --gpus-per-node where ranks share GPUs; the
// one GPU it sees where the launcher binds each rank its own
// (CUDA_VISIBLE_DEVICES per rank, as srun --gpus-per-task=1 does), which
// the local rank would name out of range.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Session.h"

#include <gtest/gtest.h>

using namespace zero::runtime;

namespace {

TEST(Session, ChoosesEachRanksGpu) {
  // Four ranks seeing four GPUs.
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_EQ(chooseGpu(rank, /*gpusPerNode=*/0, /*visible=*/4), rank);
  // Four ranks sharing two GPUs (--gpus-per-node 2), or one.
  EXPECT_EQ(chooseGpu(3, 2, 2), 1);
  EXPECT_EQ(chooseGpu(2, 2, 2), 0);
  EXPECT_EQ(chooseGpu(3, 1, 1), 0);
  // Each rank bound to its own GPU, the only one it sees.
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_EQ(chooseGpu(rank, 0, 1), 0);
  // Fewer GPUs than ranks and more than one: the local rank, which the
  // device then refuses as out of range (no silent sharing).
  EXPECT_EQ(chooseGpu(3, 0, 2), 3);
}

} // namespace
