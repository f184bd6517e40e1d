//===- SessionTest.cpp - what a session decides before it runs ------------===//
//
// Which GPU each rank takes: its local rank on a machine whose ranks see
// every GPU; its local rank mod --gpus-per-node where ranks share GPUs; the
// one GPU it sees where the launcher binds each rank its own
// (CUDA_VISIBLE_DEVICES set per rank, as srun --gpus-per-task=1 does),
// which the local rank would name out of range. Without
// CUDA_VISIBLE_DEVICES, two ranks on a one-GPU machine are not silently put
// on the same GPU: the second names a GPU out of range (and the flag).
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Session.h"

#include <gtest/gtest.h>

using namespace zero::runtime;

namespace {

TEST(Session, ChoosesEachRanksGpu) {
  for (bool visibleSet : {false, true}) {
    // Four ranks seeing four GPUs.
    for (int rank = 0; rank < 4; ++rank)
      EXPECT_EQ(chooseGpu(rank, /*gpusPerNode=*/0, /*visible=*/4, visibleSet),
                rank);
    // Four ranks sharing two GPUs (--gpus-per-node 2), or one.
    EXPECT_EQ(chooseGpu(3, 2, 2, visibleSet), 1);
    EXPECT_EQ(chooseGpu(2, 2, 2, visibleSet), 0);
    EXPECT_EQ(chooseGpu(3, 1, 1, visibleSet), 0);
    // Fewer GPUs than ranks and more than one: the local rank, which the
    // device then refuses as out of range (no silent sharing).
    EXPECT_EQ(chooseGpu(3, 0, 2, visibleSet), 3);
  }
  // Each rank bound to its own GPU by the launcher, the only one it sees.
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_EQ(chooseGpu(rank, 0, 1, /*visibleSet=*/true), 0);
  // One GPU, no binding: the second rank's GPU is out of range.
  EXPECT_EQ(chooseGpu(1, 0, 1, /*visibleSet=*/false), 1);
}

} // namespace
