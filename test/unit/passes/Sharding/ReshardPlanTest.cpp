//===- ReshardPlanTest.cpp - reshard plans move the right data -----------===//
//
// planReshard is checked by running its collectives on data: a reference
// simulator holds one buffer per device, cuts a random global tensor into
// the blocks a sharding gives each device (random pieces of the sum for
// partial axes), applies every step with the collective's plain semantics
// and compares what each device ends with against its block under the
// target sharding. The sweep covers every pair of shardings of small
// tensors on 1- and 2-axis meshes. The ShardOffsets tests hold the
// sharding's own placement (localOffsets, holdsPartialValue) to the
// simulator's.
//
// Values are small integers stored as doubles, so every sum is exact and
// buffers compare with ==.
//
//===----------------------------------------------------------------------===//
#include "passes/Sharding/ValueSharding.h"

#include <gtest/gtest.h>

#include <functional>
#include <numeric>
#include <random>
#include <sstream>

using shardc::sharding::AxisList;
using shardc::sharding::collectiveName;
using shardc::sharding::CollectiveKind;
using shardc::sharding::CollectiveStep;
using shardc::sharding::MeshShape;
using shardc::sharding::planReshard;
using shardc::sharding::ValueSharding;

namespace {

using Shape = std::vector<int64_t>;

/// A dense row-major tensor.
struct Buffer {
  Shape shape;
  std::vector<double> data;

  bool operator==(const Buffer &other) const {
    return shape == other.shape && data == other.data;
  }
};

/// Shape and values, for failure messages.
void PrintTo(const Buffer &buffer, std::ostream *out) {
  *out << "shape (";
  for (size_t dim = 0; dim < buffer.shape.size(); ++dim)
    *out << (dim ? "x" : "") << buffer.shape[dim];
  *out << ") values {";
  for (size_t element = 0; element < buffer.data.size(); ++element)
    *out << (element ? ", " : "") << buffer.data[element];
  *out << "}";
}

int64_t elementCount(const Shape &shape) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

/// Calls `visit(index, linear)` for every index of `shape`, row-major.
void forEachIndex(const Shape &shape, const std::function<void(const Shape &, int64_t)> &visit) {
  int64_t count = elementCount(shape);
  Shape index(shape.size(), 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    visit(index, linear);
    for (size_t dim = shape.size(); dim-- > 0;) {
      if (++index[dim] < shape[dim])
        break;
      index[dim] = 0;
    }
  }
}

int64_t linearIndex(const Shape &shape, const Shape &index) {
  int64_t linear = 0;
  for (size_t dim = 0; dim < shape.size(); ++dim)
    linear = linear * shape[dim] + index[dim];
  return linear;
}

/// The box of `boxShape` at `offsets` inside `source`.
Buffer cutBox(const Buffer &source, const Shape &offsets, const Shape &boxShape) {
  Buffer box{boxShape, std::vector<double>(elementCount(boxShape))};
  forEachIndex(boxShape, [&](const Shape &index, int64_t linear) {
    Shape at(index);
    for (size_t dim = 0; dim < at.size(); ++dim)
      at[dim] += offsets[dim];
    box.data[linear] = source.data[linearIndex(source.shape, at)];
  });
  return box;
}

/// Block `block` of `count` equal blocks along `dim`.
Buffer splitBlock(const Buffer &source, int64_t dim, int64_t count, int64_t block) {
  EXPECT_EQ(source.shape[dim] % count, 0) << "dim " << dim << " does not split " << count
                                          << " ways";
  Shape offsets(source.shape.size(), 0), boxShape(source.shape);
  boxShape[dim] /= count;
  offsets[dim] = block * boxShape[dim];
  return cutBox(source, offsets, boxShape);
}

/// The parts laid end to end along `dim`.
Buffer concatenate(const std::vector<Buffer> &parts, int64_t dim) {
  Shape shape(parts[0].shape);
  shape[dim] = 0;
  for (const Buffer &part : parts)
    shape[dim] += part.shape[dim];
  Buffer whole{shape, std::vector<double>(elementCount(shape))};
  int64_t offset = 0;
  for (const Buffer &part : parts) {
    forEachIndex(part.shape, [&](const Shape &index, int64_t linear) {
      Shape at(index);
      at[dim] += offset;
      whole.data[linearIndex(shape, at)] = part.data[linear];
    });
    offset += part.shape[dim];
  }
  return whole;
}

Buffer sum(const std::vector<Buffer> &parts) {
  Buffer total = parts[0];
  for (size_t part = 1; part < parts.size(); ++part) {
    EXPECT_EQ(parts[part].shape, total.shape);
    for (size_t element = 0; element < total.data.size(); ++element)
      total.data[element] += parts[part].data[element];
  }
  return total;
}

std::string describe(const ValueSharding &sharding) {
  std::ostringstream text;
  text << "[";
  for (size_t dim = 0; dim < sharding.dims.size(); ++dim) {
    text << (dim ? ", " : "") << "{";
    for (size_t position = 0; position < sharding.dims[dim].size(); ++position)
      text << (position ? "," : "") << sharding.dims[dim][position];
    text << "}";
  }
  text << "] partial {";
  for (size_t position = 0; position < sharding.partial.size(); ++position)
    text << (position ? "," : "") << sharding.partial[position];
  text << "}";
  return text.str();
}

std::string describe(const Shape &shape) {
  std::ostringstream text;
  text << "(";
  for (size_t dim = 0; dim < shape.size(); ++dim)
    text << (dim ? "x" : "") << shape[dim];
  text << ")";
  return text.str();
}

/// One buffer per device of a mesh, and the collectives between them.
class Simulator {
public:
  explicit Simulator(const MeshShape &mesh) : mesh(mesh) {
    for (int64_t rank = 0; rank < mesh.devices(); ++rank) {
      auto coords = mesh.coordinates(rank);
      coordinates.emplace_back(coords.begin(), coords.end());
    }
  }

  int64_t devices() const { return coordinates.size(); }

  /// The mixed-radix number of the device's coordinates along `axes`, the
  /// first axis most significant: its block of a dim split over `axes`, and
  /// its place in a group over `axes`.
  int64_t position(int64_t rank, llvm::ArrayRef<unsigned> axes) const {
    int64_t number = 0;
    for (unsigned axis : axes)
      number = number * mesh.sizes[axis] + coordinates[rank][axis];
    return number;
  }

  /// The devices whose coordinates differ from `rank`'s only along `axes`,
  /// in group order.
  std::vector<int64_t> group(int64_t rank, llvm::ArrayRef<unsigned> axes) const {
    std::vector<int64_t> members(mesh.groupSize(axes), -1);
    for (int64_t other = 0; other < devices(); ++other) {
      bool same = true;
      for (unsigned axis = 0; axis < mesh.numAxes(); ++axis)
        if (!llvm::is_contained(axes, axis) && coordinates[other][axis] != coordinates[rank][axis])
          same = false;
      if (same) {
        int64_t &slot = members[position(other, axes)];
        EXPECT_EQ(slot, -1) << "two devices in one group slot";
        slot = other;
      }
    }
    return members;
  }

  /// Where `rank`'s block of a tensor of `shape` sharded `sharding` starts.
  Shape blockOffsets(const ValueSharding &sharding, const Shape &shape, int64_t rank) const {
    Shape offsets;
    for (size_t dim = 0; dim < shape.size(); ++dim)
      offsets.push_back(position(rank, sharding.dims[dim]) *
                        (shape[dim] / mesh.groupSize(sharding.dims[dim])));
    return offsets;
  }

  Shape blockShape(const ValueSharding &sharding, const Shape &shape) const {
    Shape local(shape);
    for (size_t dim = 0; dim < shape.size(); ++dim)
      local[dim] /= mesh.groupSize(sharding.dims[dim]);
    return local;
  }

  /// `rank`'s block of `global`, whole (ignoring partial axes).
  Buffer block(const Buffer &global, const ValueSharding &sharding, int64_t rank) const {
    return cutBox(global, blockOffsets(sharding, global.shape, rank),
                  blockShape(sharding, global.shape));
  }

  /// Every device's buffer for `global` sharded `sharding`. Over partial
  /// axes each device gets a random piece; the pieces of a group add up to
  /// the block.
  std::vector<Buffer> materialize(const Buffer &global, const ValueSharding &sharding,
                                  std::mt19937 &random) const {
    std::vector<Buffer> buffers;
    for (int64_t rank = 0; rank < devices(); ++rank)
      buffers.push_back(block(global, sharding, rank));
    std::uniform_int_distribution<int> noise(-50, 50);
    for (int64_t rank = 0; rank < devices(); ++rank) {
      int64_t holder = group(rank, sharding.partial)[0];
      if (holder == rank)
        continue;
      for (size_t element = 0; element < buffers[rank].data.size(); ++element) {
        double piece = noise(random);
        buffers[rank].data[element] = piece;
        buffers[holder].data[element] -= piece;
      }
    }
    return buffers;
  }

  /// Applies one collective to every device's buffer.
  std::vector<Buffer> apply(const CollectiveStep &step, const std::vector<Buffer> &in) const {
    std::vector<Buffer> out;
    for (int64_t rank = 0; rank < devices(); ++rank) {
      std::vector<int64_t> members = group(rank, step.axes);
      int64_t count = members.size(), own = position(rank, step.axes);
      std::vector<Buffer> parts;
      for (int64_t member : members)
        parts.push_back(in[member]);
      switch (step.kind) {
      case CollectiveKind::AllReduce:
        out.push_back(sum(parts));
        break;
      case CollectiveKind::AllGather:
        out.push_back(concatenate(parts, step.dim));
        break;
      case CollectiveKind::ReduceScatter:
        out.push_back(splitBlock(sum(parts), step.dim, count, own));
        break;
      case CollectiveKind::AllToAll: {
        // Member j sends its block `own` along the split dim to this device.
        std::vector<Buffer> received;
        for (const Buffer &part : parts)
          received.push_back(splitBlock(part, step.dim, count, own));
        out.push_back(concatenate(received, step.concatDim));
        break;
      }
      case CollectiveKind::AllSlice:
        out.push_back(splitBlock(in[rank], step.dim, count, own));
        break;
      }
    }
    return out;
  }

  const MeshShape &mesh;
  std::vector<Shape> coordinates;
};

/// Every sharding of a rank-`rank` tensor over the mesh: each axis unused,
/// partial or on one dim, in every order within a dim.
std::vector<ValueSharding> allShardings(unsigned rank, const MeshShape &mesh) {
  std::vector<ValueSharding> result;
  std::function<void(unsigned, ValueSharding &)> place = [&](unsigned axis,
                                                             ValueSharding &sharding) {
    if (axis == mesh.numAxes()) {
      result.push_back(sharding);
      return;
    }
    place(axis + 1, sharding); // unused
    sharding.partial.push_back(axis);
    place(axis + 1, sharding);
    sharding.partial.pop_back();
    for (unsigned dim = 0; dim < rank; ++dim)
      for (size_t at = 0; at <= sharding.dims[dim].size(); ++at) {
        sharding.dims[dim].insert(sharding.dims[dim].begin() + at, axis);
        place(axis + 1, sharding);
        sharding.dims[dim].erase(sharding.dims[dim].begin() + at);
      }
  };
  ValueSharding start = ValueSharding::replicated(rank);
  place(0, start);
  return result;
}

MeshShape makeMesh(std::vector<int64_t> sizes) {
  MeshShape mesh;
  for (size_t axis = 0; axis < sizes.size(); ++axis) {
    mesh.names.push_back("a" + std::to_string(axis));
    mesh.sizes.push_back(sizes[axis]);
  }
  return mesh;
}

Buffer randomTensor(const Shape &shape, std::mt19937 &random) {
  std::uniform_int_distribution<int> value(-100, 100);
  Buffer tensor{shape, std::vector<double>(elementCount(shape))};
  for (double &element : tensor.data)
    element = value(random);
  return tensor;
}

bool lacksPartialOf(const ValueSharding &from, const ValueSharding &to) {
  for (unsigned axis : to.partial)
    if (!llvm::is_contained(from.partial, axis))
      return true;
  return false;
}

/// Runs the plan for (from, to) on `global` and checks every device ends
/// with its block under `to`. Counts the steps by kind.
void checkPlan(const Simulator &simulator, const Buffer &global, const ValueSharding &from,
               const ValueSharding &to, std::mt19937 &random, std::vector<int> &kindsSeen) {
  auto plan = planReshard(from, to, global.shape, simulator.mesh);
  ASSERT_EQ(!plan, lacksPartialOf(from, to));
  if (!plan)
    return;
  if (from == to) {
    EXPECT_TRUE(plan->empty()) << "a reshard to the same sharding moves data";
  }

  std::vector<Buffer> buffers = simulator.materialize(global, from, random);
  for (auto [index, step] : llvm::enumerate(*plan)) {
    SCOPED_TRACE("step " + std::to_string(index) + ": " + collectiveName(step.kind));
    ++kindsSeen[int(step.kind)];
    ASSERT_FALSE(step.axes.empty());
    Shape input(step.inputShape.begin(), step.inputShape.end());
    for (const Buffer &buffer : buffers)
      ASSERT_EQ(buffer.shape, input) << "the step's input shape is not what the devices hold";
    buffers = simulator.apply(step, buffers);
    Shape output(step.outputShape.begin(), step.outputShape.end());
    for (const Buffer &buffer : buffers)
      ASSERT_EQ(buffer.shape, output) << "the step's output shape is not what it made";
  }

  for (int64_t rank = 0; rank < simulator.devices(); ++rank) {
    SCOPED_TRACE("device " + std::to_string(rank));
    Buffer expected = simulator.block(global, to, rank);
    if (to.partial.empty()) {
      ASSERT_EQ(buffers[rank], expected);
      continue;
    }
    std::vector<int64_t> members = simulator.group(rank, to.partial);
    if (members[0] != rank)
      continue;
    std::vector<Buffer> pieces;
    for (int64_t member : members) {
      ASSERT_EQ(buffers[member].shape, expected.shape);
      pieces.push_back(buffers[member]);
    }
    ASSERT_EQ(sum(pieces), expected) << "the partial pieces do not add up to the block";
  }
}

const std::vector<std::vector<int64_t>> kMeshes = {{2}, {3}, {2, 2}, {2, 3}, {3, 2}, {3, 3}};

/// fn(mesh, simulator, shape, global, shardings) on every mesh of kMeshes for
/// every rank up to `maxRank`: every dim of the shape divides by the whole
/// mesh and the dims differ in size, `global` is random, `shardings` are all
/// those of the rank. Stops at the first fatal failure.
template <typename Fn> void forEveryMeshAndRank(unsigned maxRank, std::mt19937 &random, Fn fn) {
  for (const std::vector<int64_t> &sizes : kMeshes) {
    MeshShape mesh = makeMesh(sizes);
    Simulator simulator(mesh);
    for (unsigned rank = 0; rank <= maxRank; ++rank) {
      Shape shape;
      for (unsigned dim = 0; dim < rank; ++dim)
        shape.push_back(mesh.devices() * (dim + 1));
      Buffer global = randomTensor(shape, random);
      fn(mesh, simulator, shape, global, allShardings(rank, mesh));
      if (::testing::Test::HasFatalFailure())
        return;
    }
  }
}

TEST(ReshardPlan, EveryPairOfShardingsMovesTheRightData) {
  std::mt19937 random(4242);
  std::vector<int> kindsSeen(5, 0);
  int plans = 0, refused = 0;
  forEveryMeshAndRank(3, random,
                      [&](const MeshShape &mesh, Simulator &simulator, const Shape &shape,
                          const Buffer &global, const std::vector<ValueSharding> &shardings) {
                        for (const ValueSharding &from : shardings)
                          for (const ValueSharding &to : shardings) {
                            SCOPED_TRACE("mesh " + mesh.describe() + ", shape " + describe(shape) +
                                         ", from " + describe(from) + " to " + describe(to));
                            checkPlan(simulator, global, from, to, random, kindsSeen);
                            if (HasFatalFailure())
                              return;
                            ++plans;
                            refused += lacksPartialOf(from, to);
                          }
                      });
  if (HasFatalFailure())
    return;
  // The sweep reaches every collective and both answers.
  for (int kind = 0; kind < 5; ++kind)
    EXPECT_GT(kindsSeen[kind], 0) << collectiveName(CollectiveKind(kind)) << " never planned";
  EXPECT_GT(refused, 0);
  EXPECT_GT(plans - refused, 1000);
}

TEST(ReshardPlan, RandomShapesOnRandomMeshes) {
  // Dims sized only as large as the sharding needs (not the whole mesh),
  // so a step that splits by the wrong group size shows in the shapes.
  std::mt19937 random(99);
  std::vector<int> kindsSeen(5, 0);
  for (int trial = 0; trial < 400; ++trial) {
    MeshShape mesh = makeMesh(kMeshes[random() % kMeshes.size()]);
    Simulator simulator(mesh);
    unsigned rank = 1 + random() % 3;
    std::vector<ValueSharding> shardings = allShardings(rank, mesh);
    const ValueSharding &from = shardings[random() % shardings.size()];
    const ValueSharding &to = shardings[random() % shardings.size()];
    Shape shape;
    for (unsigned dim = 0; dim < rank; ++dim) {
      // Divisible by both shardings' groups on this dim, no more.
      int64_t need = std::lcm(mesh.groupSize(from.dims[dim]), mesh.groupSize(to.dims[dim]));
      shape.push_back(need * (1 + random() % 2));
    }
    Buffer global = randomTensor(shape, random);
    SCOPED_TRACE("trial " + std::to_string(trial) + ", mesh " + mesh.describe() + ", shape " +
                 describe(shape) + ", from " + describe(from) + " to " + describe(to));
    checkPlan(simulator, global, from, to, random, kindsSeen);
    if (HasFatalFailure())
      return;
  }
}

TEST(ReshardPlan, RefusesToInventAPartialSum) {
  MeshShape mesh = makeMesh({2, 2});
  Shape shape = {4, 4};
  ValueSharding replicated = ValueSharding::replicated(2);
  ValueSharding partial0 = replicated, partial01 = replicated, partial1 = replicated;
  partial0.partial = {0};
  partial1.partial = {1};
  partial01.partial = {0, 1};
  EXPECT_FALSE(planReshard(replicated, partial0, shape, mesh));
  EXPECT_FALSE(planReshard(partial0, partial01, shape, mesh));
  EXPECT_FALSE(planReshard(partial0, partial1, shape, mesh));
  // Keeping or dropping a partial axis is fine.
  EXPECT_TRUE(planReshard(partial01, partial0, shape, mesh));
  EXPECT_TRUE(planReshard(partial0, partial0, shape, mesh));
  EXPECT_TRUE(planReshard(partial0, replicated, shape, mesh));
}

TEST(ShardOffsets, MeshCoordinatesAreRowMajor) {
  MeshShape mesh = makeMesh({2, 3});
  EXPECT_EQ(mesh.devices(), 6);
  EXPECT_EQ(mesh.coordinates(0), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(mesh.coordinates(2), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(mesh.coordinates(4), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(mesh.stride(0), 3);
  EXPECT_EQ(mesh.stride(1), 1);
}

TEST(ShardOffsets, LocalOffsetsMatchTheSimulatorsBlocks) {
  for (const std::vector<int64_t> &sizes : kMeshes) {
    MeshShape mesh = makeMesh(sizes);
    Simulator simulator(mesh);
    for (unsigned rank = 0; rank <= 3; ++rank) {
      Shape shape;
      for (unsigned dim = 0; dim < rank; ++dim)
        shape.push_back(mesh.devices() * (rank - dim));
      for (const ValueSharding &sharding : allShardings(rank, mesh)) {
        SCOPED_TRACE("mesh " + mesh.describe() + ", shape " + describe(shape) + ", " +
                     describe(sharding));
        Shape local = simulator.blockShape(sharding, shape);
        auto localShape = sharding.localShape(shape, mesh);
        EXPECT_EQ(Shape(localShape.begin(), localShape.end()), local);
        // Every element is covered by as many devices as the unsplit axes
        // (partial ones included) have members.
        std::vector<int> covered(elementCount(shape), 0);
        for (int64_t device = 0; device < simulator.devices(); ++device) {
          auto offsets = sharding.localOffsets(shape, mesh, simulator.coordinates[device]);
          ASSERT_EQ(Shape(offsets.begin(), offsets.end()),
                    simulator.blockOffsets(sharding, shape, device));
          forEachIndex(local, [&](const Shape &index, int64_t) {
            Shape at(index);
            for (size_t dim = 0; dim < at.size(); ++dim)
              at[dim] += offsets[dim];
            ++covered[linearIndex(shape, at)];
          });
        }
        int64_t split = 1;
        for (const AxisList &axes : sharding.dims)
          split *= mesh.groupSize(axes);
        for (int count : covered)
          ASSERT_EQ(count, simulator.devices() / split);
      }
    }
  }
}

TEST(ShardOffsets, LocalOffsetsByHand) {
  // On dp=2, tp=3 a dim split over [tp, dp] numbers blocks tp-major.
  MeshShape mesh = makeMesh({2, 3});
  ValueSharding sharding = ValueSharding::replicated(2);
  sharding.dims[1] = {1, 0};
  Shape shape = {5, 12};
  EXPECT_EQ(sharding.localOffsets(shape, mesh, {1, 2}), (llvm::SmallVector<int64_t, 4>{0, 10}));
  EXPECT_EQ(sharding.localOffsets(shape, mesh, {0, 2}), (llvm::SmallVector<int64_t, 4>{0, 8}));
  EXPECT_EQ(sharding.localOffsets(shape, mesh, {1, 0}), (llvm::SmallVector<int64_t, 4>{0, 2}));
  sharding.dims[1] = {0, 1};
  EXPECT_EQ(sharding.localOffsets(shape, mesh, {1, 2}), (llvm::SmallVector<int64_t, 4>{0, 10}));
  EXPECT_EQ(sharding.localOffsets(shape, mesh, {0, 2}), (llvm::SmallVector<int64_t, 4>{0, 4}));
  EXPECT_EQ(sharding.localOffsets(shape, mesh, {1, 0}), (llvm::SmallVector<int64_t, 4>{0, 6}));
}

TEST(ShardOffsets, OneHolderPerPartialGroup) {
  // Filling the holder with its block and the rest with zeros is a valid
  // partial value: the plan to any complete sharding recovers the tensor.
  std::mt19937 random(7);
  forEveryMeshAndRank(2, random,
                      [&](const MeshShape &mesh, Simulator &simulator, const Shape &shape,
                          const Buffer &global, const std::vector<ValueSharding> &shardings) {
                        for (const ValueSharding &from : shardings) {
                          SCOPED_TRACE("mesh " + mesh.describe() + ", shape " + describe(shape) +
                                       ", " + describe(from));
                          std::vector<Buffer> buffers;
                          for (int64_t device = 0; device < simulator.devices(); ++device) {
                            buffers.push_back(simulator.block(global, from, device));
                            int holders = 0;
                            for (int64_t member : simulator.group(device, from.partial))
                              holders += from.holdsPartialValue(simulator.coordinates[member]);
                            ASSERT_EQ(holders, 1);
                            if (!from.holdsPartialValue(simulator.coordinates[device]))
                              std::fill(buffers.back().data.begin(), buffers.back().data.end(),
                                        0.0);
                          }
                          for (const ValueSharding &to : shardings) {
                            if (!to.partial.empty())
                              continue;
                            auto plan = planReshard(from, to, shape, mesh);
                            ASSERT_TRUE(plan);
                            std::vector<Buffer> result = buffers;
                            for (const CollectiveStep &step : *plan)
                              result = simulator.apply(step, result);
                            for (int64_t device = 0; device < simulator.devices(); ++device)
                              ASSERT_EQ(result[device], simulator.block(global, to, device))
                                  << "device " << device << " to " << describe(to);
                          }
                        }
                      });
}

} // namespace
