//===- CollectiveFitTest.cpp - calibration fits the cost model's formula --===//
//
// Times made by the compiler's own collectiveSeconds from known link figures
// are fitted back: the fit must recover them, so a calibrated device file
// prices what was measured.
//
//===----------------------------------------------------------------------===//
#include "tools/shardc-calibrate/CollectiveFit.h"

#include "passes/Sharding/CostModel.h"

#include <gtest/gtest.h>

namespace shardc::calibrate {
namespace {

sharding::MeshShape line(int64_t ranks) {
  sharding::MeshShape mesh;
  mesh.names = {"tp"};
  mesh.sizes = {ranks};
  return mesh;
}

/// The model's seconds for a collective of `kind` on `bytes` of fp32 over
/// all of `mesh` (an all-gather's `bytes` is the gathered whole).
Timed priced(sharding::CollectiveKind kind, int64_t bytes, const sharding::MeshShape &mesh,
             const sharding::DeviceModel &device) {
  sharding::CollectiveStep step{kind, {0}, 0, 0, {bytes / 4}, {bytes / 4}};
  if (kind == sharding::CollectiveKind::AllGather)
    step.inputShape = {bytes / 4 / mesh.sizes[0]};
  return {double(bytes), sharding::collectiveSeconds(step, 4, mesh, device)};
}

TEST(CollectiveFitTest, RecoversTheFiguresTheCostModelPricedWith) {
  sharding::DeviceModel device = *sharding::DeviceModel::preset("h100");
  device.intraNode = {3e-6, 13e9};
  device.collectiveLaunchSeconds = 2e-6;
  for (int64_t ranks : {2, 3}) {
    const sharding::MeshShape mesh = line(ranks);
    using sharding::CollectiveKind;
    LinkFit fit = fitRing(int(ranks), priced(CollectiveKind::AllReduce, 4096 * ranks, mesh, device),
                          priced(CollectiveKind::AllReduce, 24 << 20, mesh, device),
                          priced(CollectiveKind::AllGather, 4096 * ranks, mesh, device));
    ASSERT_TRUE(fit.error.empty()) << fit.error;
    EXPECT_TRUE(fit.clamped.empty()) << fit.clamped;
    EXPECT_NEAR(fit.bytesPerSecond, 13e9, 13e9 * 1e-9) << ranks;
    EXPECT_NEAR(fit.latencySeconds, 3e-6, 1e-15) << ranks;
    EXPECT_NEAR(fit.launchSeconds, 2e-6, 1e-15) << ranks;
  }
}

TEST(CollectiveFitTest, RaisesFiguresNoiseTookBelowZeroAndRefusesAFlatSlope) {
  // Launch + 2 latency = 1 us, launch + latency = 1.5 us: latency < 0.
  LinkFit fit = fitRing(2, {4096, 1e-6 + 4096 / 13e9}, {1 << 24, 1e-6 + (1 << 24) / 13e9},
                        {8192, 1.5e-6 + 4096 / 13e9});
  ASSERT_TRUE(fit.error.empty()) << fit.error;
  EXPECT_EQ(fit.clamped, "latency");
  EXPECT_EQ(fit.latencySeconds, kFloorSeconds);
  EXPECT_NEAR(fit.bytesPerSecond, 13e9, 1);
  LinkFit flat = fitRing(2, {4096, 2e-3}, {1 << 24, 1e-3}, {8192, 1e-6});
  EXPECT_NE(flat.error.find("no slower"), std::string::npos) << flat.error;
  EXPECT_FALSE(fitRing(1, {1, 1}, {2, 2}, {1, 1}).error.empty());
}

} // namespace
} // namespace shardc::calibrate
