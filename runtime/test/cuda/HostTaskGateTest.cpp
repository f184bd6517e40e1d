//===- HostTaskGateTest.cpp - host functions and a device's teardown ------===//
//
// HostCompute's gate (HostCompute.h): a device torn down after a fatal GPU
// error closes it before freeing what its host functions read. Closing
// waits for a function inside, and lets none in after. Plain C++: runs
// without a GPU.
//
//===----------------------------------------------------------------------===//

#include "HostCompute.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace zero::runtime::cuda;

namespace {

TEST(HostTaskGate, CloseWaitsForTheFunctionInsideAndLetsNoneIn) {
  HostTaskGate gate;
  ASSERT_TRUE(gate.enter()); // a host function running on CUDA's thread
  std::atomic<bool> closed{false};
  std::thread teardown([&] {
    gate.close();
    closed = true;
  });
  // Once the teardown has closed the gate, give a close() that did not
  // wait the time to return: it must still be waiting.
  while (!gate.closed())
    std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(closed.load());
  gate.leave();
  teardown.join();
  EXPECT_TRUE(closed.load());
  EXPECT_FALSE(gate.enter()); // the next function returns untouched
}

TEST(HostTaskGate, ClosingAnIdleGateReturnsAtOnce) {
  HostTaskGate gate;
  ASSERT_TRUE(gate.enter());
  gate.leave();
  gate.close(); // nobody inside: no wait
  EXPECT_FALSE(gate.enter());
}

} // namespace
