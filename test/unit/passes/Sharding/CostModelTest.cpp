//===- CostModelTest.cpp - device presets and collective prices by hand ----===//
//
// The A100 preset holds the published figures of a DGX A100 node, and a
// collective is priced over NVLink inside a node and over InfiniBand
// across nodes, with ring or tree (the cheaper), as computed here by hand.
//
//===----------------------------------------------------------------------===//
#include "passes/Sharding/CostModel.h"

#include <gtest/gtest.h>

namespace shardc::sharding {
namespace {

TEST(CostModelTest, A100PresetHoldsADgxA100NodesFigures) {
  std::optional<DeviceModel> a100 = DeviceModel::preset("a100");
  ASSERT_TRUE(a100);
  EXPECT_EQ(a100->name, "a100");
  EXPECT_EQ(a100->peakFlops16, 312e12);
  EXPECT_EQ(a100->peakFlops32, 156e12);
  EXPECT_EQ(a100->memoryBandwidth, 2.039e12);
  EXPECT_EQ(a100->memoryBytes, 80LL << 30);
  EXPECT_EQ(a100->devicesPerNode, 8);
  EXPECT_EQ(a100->intraNode.bytesPerSecond, 300e9);
  EXPECT_EQ(a100->interNode.bytesPerSecond, 25e9);
  EXPECT_FALSE(DeviceModel::preset("a10"));
}

/// An fp32 all-reduce of `bytes` over `axis` of a dp=2 x tp=8 mesh.
double allReduceSeconds(unsigned axis, int64_t bytes, const DeviceModel &device) {
  MeshShape mesh;
  mesh.names = {"dp", "tp"};
  mesh.sizes = {2, 8};
  CollectiveStep step{CollectiveKind::AllReduce, {axis}, 0, 0, {bytes / 4}, {bytes / 4}};
  return collectiveSeconds(step, 4, mesh, device);
}

TEST(CostModelTest, AllReduceTakesNvlinkInsideANodeAndInfinibandAcross) {
  DeviceModel a100 = *DeviceModel::preset("a100");
  // tp's 8 ranks share a node: ring 2*7*(5 us + 1 GB / (8 * 300 GB/s)) beats
  // the tree's 2*3*5 us + 2 * 1 GB / 300 GB/s; plus the 5 us launch.
  double ring = 14 * (5e-6 + 1e9 / (8 * 300e9));
  EXPECT_NEAR(allReduceSeconds(1, 1'000'000'000, a100), ring + 5e-6, 1e-12);
  // dp's 2 ranks are 8 apart, in two nodes: ring 2*(10 us + 1 GB / (2 * 25
  // GB/s)) beats the tree's 2*10 us + 2 * 1 GB / 25 GB/s.
  ring = 2 * (10e-6 + 1e9 / (2 * 25e9));
  EXPECT_NEAR(allReduceSeconds(0, 1'000'000'000, a100), ring + 5e-6, 1e-12);
  // A small buffer: the tree's log-depth latency wins over the ring's 14 hops.
  double tree = 2 * 3 * 5e-6 + 2 * 4096 / 300e9;
  EXPECT_NEAR(allReduceSeconds(1, 4096, a100), tree + 5e-6, 1e-15);
}

} // namespace
} // namespace shardc::sharding
