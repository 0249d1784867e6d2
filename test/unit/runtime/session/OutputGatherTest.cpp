//===- OutputGatherTest.cpp - outputs gathered onto the output rank -------===//
#include "runtime/session/OutputGather.h"

#include "runtime/comm/InProcess.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/session/MicroBatch.h"
#include "test/unit/runtime/comm/WrappedGroup.h"
#include "test/unit/runtime/session/Iota.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace shardc::rt {
namespace {

using comm::InProcessWorld;

/// `whole` cut into `pieces` along `dim`; piece k is what the ranks with
/// coordinate k along the gather's axes hold.
std::vector<HostTensor> piecesOf(const HostTensor &whole, int dim, int pieces) {
  std::vector<HostTensor> cut;
  for (int k = 0; k < pieces; ++k)
    cut.push_back(sliceAlong(whole, dim, k, pieces));
  return cut;
}

/// `mesh` with output 0 (whole: `whole`) gathered over `axes` along `dim`,
/// output 1 not gathered; the output rank is 0.
ArtifactLayout layoutOf(MeshShape mesh, std::vector<int> axes, int dim, Shape whole) {
  ArtifactLayout layout;
  layout.mesh = std::move(mesh);
  layout.ranks = static_cast<int>(layout.mesh.devices());
  OutputSplit split;
  split.dim = dim;
  for (int axis : axes) {
    split.axes.push_back(axis);
    split.pieces *= layout.mesh.sizes[axis];
  }
  layout.outputs = {{"y", DType::F32, whole}, {"z", DType::F32, {2}}};
  layout.outputSplits = {split, std::nullopt};
  return layout;
}

/// Every rank runs gather() on its piece of output 0 (its dp x ep
/// coordinates' piece; tp ranks hold copies) and on output 1; returns each
/// rank's tensors afterwards. `deviceLike`: the world claims device memory
/// (the host device's memory stands in for it), as NCCL does.
std::vector<std::vector<HostTensor>> gatherOn(const ArtifactLayout &layout, const HostTensor &whole,
                                              int dim, const std::vector<int> &axes,
                                              bool deviceLike = false) {
  const int64_t pieces = layout.outputSplits[0]->pieces;
  const std::vector<HostTensor> cut = piecesOf(whole, dim, static_cast<int>(pieces));
  std::vector<std::vector<HostTensor>> after(static_cast<size_t>(layout.ranks));
  InProcessWorld world(layout.ranks, std::chrono::seconds(20));
  std::atomic<int> flushes{0};
  Status status = world.run([&](int rank, Communicator &host) -> Status {
    WrappedGroup wrapped(world.communicator(rank), flushes, deviceLike);
    Communicator &communicator = deviceLike ? static_cast<Communicator &>(wrapped) : host;
    const std::vector<int64_t> coords = layout.mesh.coordinates(rank);
    int64_t index = 0;
    for (int axis : axes)
      index = index * layout.mesh.sizes[axis] + coords[axis];
    std::vector<HostTensor> outputs = {cut[index], iota({2})};
    cpu::CpuDevice device;
    OutputGather gather(layout, rank);
    if (Status status = gather.connect(communicator); !status)
      return status;
    for (size_t i = 0; i < outputs.size(); ++i) {
      HostTensor whole;
      if (Status status = gather.gather(i, outputs[i], whole, device); !status)
        return status;
      if (!whole.bytes.empty())
        outputs[i] = std::move(whole);
    }
    after[rank] = std::move(outputs);
    return {};
  });
  EXPECT_TRUE(status.ok()) << status.message();
  return after;
}

TEST(OutputGather, TheOutputRankGetsTheDataParallelPiecesInOrder) {
  // dp=2, tp=2: ranks 0 and 2 hold pieces 0 and 1; ranks 1 and 3 (tp 1)
  // hold copies and send nothing.
  ArtifactLayout layout = layoutOf(MeshShape({"dp", "tp"}, {2, 2}), {0}, 0, {4, 3});
  const HostTensor whole = iota({4, 3});
  auto after = gatherOn(layout, whole, 0, {0});
  EXPECT_EQ(after[0][0].shape, whole.shape);
  EXPECT_EQ(after[0][0].bytes, whole.bytes);
  EXPECT_EQ(after[0][1].bytes, iota({2}).bytes); // not gathered: as it was
  for (int rank = 1; rank < 4; ++rank)
    EXPECT_EQ(after[rank][0].shape, (Shape{2, 3})) << "rank " << rank << " keeps its piece";
}

TEST(OutputGather, PlacesPiecesAlongAnInnerDimOverTwoAxes) {
  // dp=2, ep=2, gathered along dim 1 with dp major: piece k = dp * 2 + ep.
  ArtifactLayout layout = layoutOf(MeshShape({"dp", "ep"}, {2, 2}), {0, 1}, 1, {2, 8, 3});
  const HostTensor whole = iota({2, 8, 3});
  auto after = gatherOn(layout, whole, 1, {0, 1});
  EXPECT_EQ(after[0][0].shape, whole.shape);
  EXPECT_EQ(after[0][0].bytes, whole.bytes);
}

TEST(OutputGather, OutputsOverTheSameRanksShareOneGroup) {
  // Both outputs gathered over dp: one split, used twice in a row.
  ArtifactLayout layout = layoutOf(MeshShape({"dp", "tp"}, {2, 2}), {0}, 0, {4, 3});
  layout.outputs[1] = {"z", DType::F32, {2, 5}};
  layout.outputSplits[1] = layout.outputSplits[0];
  const HostTensor first = iota({4, 3}), second = iota({2, 5});
  std::vector<HostTensor> held(8);
  InProcessWorld world(4, std::chrono::seconds(20));
  Status status = world.run([&](int rank, Communicator &communicator) -> Status {
    const int dp = static_cast<int>(layout.mesh.coordinates(rank)[0]);
    HostTensor pieces[2] = {sliceAlong(first, 0, dp, 2), sliceAlong(second, 0, dp, 2)};
    cpu::CpuDevice device;
    OutputGather gather(layout, rank);
    if (Status status = gather.connect(communicator); !status)
      return status;
    for (size_t i = 0; i < 2; ++i)
      if (Status status = gather.gather(i, pieces[i], held[rank * 2 + i], device); !status)
        return status;
    return {};
  });
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(held[0].bytes, first.bytes);
  EXPECT_EQ(held[1].bytes, second.bytes);
  EXPECT_TRUE(held[2].bytes.empty()) << "rank 1 is not the output rank";
}

TEST(OutputGather, StagesThroughDeviceMemoryOnADeviceCommunicator) {
  // The point-to-point gather with the root's piece in place, as on NCCL.
  for (int dim : {0, 1}) {
    ArtifactLayout layout = layoutOf(MeshShape({"dp", "tp"}, {2, 2}), {0}, dim, {4, 6});
    const HostTensor whole = iota({4, 6});
    auto after = gatherOn(layout, whole, dim, {0}, /*deviceLike=*/true);
    EXPECT_EQ(after[0][0].bytes, whole.bytes) << "dim " << dim;
  }
}

TEST(OutputGather, GathersOntoAPipelinesOutputRank) {
  // pp=2, dp=2: the output rank is rank 2 (pp 1, dp 0); its peer is rank 3.
  ArtifactLayout layout = layoutOf(MeshShape({"pp", "dp"}, {2, 2}), {1}, 0, {4, 2});
  auto plan = std::make_shared<PipelinePlan>();
  plan->outputRank = 2;
  layout.pipeline = plan;
  const HostTensor whole = iota({4, 2});
  const std::vector<HostTensor> cut = piecesOf(whole, 0, 2);
  std::vector<HostTensor> held(4);
  InProcessWorld world(4, std::chrono::seconds(20));
  Status status = world.run([&](int rank, Communicator &communicator) -> Status {
    held[rank] = cut[layout.mesh.coordinates(rank)[1]];
    cpu::CpuDevice device;
    // Every rank splits the group; the first stage's ranks (0, 1) hold no
    // output and take no part in it.
    OutputGather gather(layout, rank);
    if (Status status = gather.connect(communicator); !status)
      return status;
    HostTensor whole;
    if (Status status = gather.gather(0, held[rank], whole, device); !status)
      return status;
    if (!whole.bytes.empty())
      held[rank] = std::move(whole);
    return {};
  });
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(held[2].bytes, whole.bytes);
}

} // namespace
} // namespace shardc::rt
