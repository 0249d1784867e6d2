//===- BucketCollectives.cpp - small collectives fused into buckets -------===//
//
// A training step sums every weight's gradient over dp and, from ZeRO stage
// 1, gathers every new weight after the update: one collective per tensor,
// most of them small (biases, norm scales), each paying a collective's
// latency. PyTorch DDP and DeepSpeed fuse them into buckets of about 25 MiB;
// so does this pass, on the per-device program (docs/training.md, "ZeRO").
// The bucket's collective sums or gathers the same elements as its members
// did, so the step's numbers are the same bits.
//
//===----------------------------------------------------------------------===//
#include "passes/Partition/Passes.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/TrainingPhase.h"

#include "mlir/IR/Builders.h"

#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

using namespace mlir;

namespace shardc::partition {
#define GEN_PASS_DEF_BUCKETCOLLECTIVESPASS
#include "passes/Partition/Passes.h.inc"
} // namespace shardc::partition

namespace shardc::partition {
namespace {

RankedTensorType tensorType(Value value) { return cast<RankedTensorType>(value.getType()); }

/// Whether `op` adds a micro-batch's gradient into its accumulator.
bool accumulates(Operation *op) {
  return isa<graph::AddOp>(op) && llvm::any_of(op->getOperands(), [](Value operand) {
           return graph::trainRole(operand) == graph::kTrainAccumulator;
         });
}

/// A sum of a weight's gradient: reduces what the backward computed, or
/// the micro-batches' sum of it (an accumulator, summed over dp once after
/// the last micro-batch), for the update (or an accumulator) alone.
bool sumsGradient(Operation *op) {
  if (!isa<dist::AllReduceOp, dist::ReduceScatterOp>(op))
    return false;
  Operation *producer = op->getOperand(0).getDefiningOp();
  if (!producer || (graph::phaseOf(producer) != graph::Phase::Backward &&
                    graph::trainRole(producer) != graph::kTrainAccumulator))
    return false;
  return llvm::all_of(op->getUsers(), [](Operation *user) {
    return graph::phaseOf(user) == graph::Phase::Optimizer || accumulates(user);
  });
}

/// A gather of what the update computed (ZeRO's new weights), for the
/// update's own ops (the writes into storage) alone.
bool gathersUpdate(Operation *op) {
  if (!isa<dist::AllGatherOp>(op))
    return false;
  Operation *producer = op->getOperand(0).getDefiningOp();
  if (!producer || graph::phaseOf(producer) != graph::Phase::Optimizer)
    return false;
  return llvm::all_of(op->getUsers(), [](Operation *user) {
    return graph::phaseOf(user) == graph::Phase::Optimizer;
  });
}

/// The dim a reduce-scatter or all-gather splits (none for an all-reduce).
std::optional<int64_t> splitDim(Operation *op) {
  if (auto scatter = dyn_cast<dist::ReduceScatterOp>(op))
    return scatter.getDim();
  if (auto gather = dyn_cast<dist::AllGatherOp>(op))
    return gather.getDim();
  return std::nullopt;
}

/// Whether each rank's block of `op`'s split tensor (the reduce-scatter's
/// input, the all-gather's result) is contiguous: every dim before the
/// split one is 1. The tensor is then [group, n / group] flat, and blocks
/// of several tensors concatenated along dim 1 stay each rank's row.
/// Another split dim would interleave the ranks' blocks: such a collective
/// stays as it is (a transpose to make it contiguous would cost a copy of
/// the tensor each way).
bool contiguousBlocks(Operation *op) {
  std::optional<int64_t> dim = splitDim(op);
  if (!dim)
    return true;
  Value whole = isa<dist::ReduceScatterOp>(op) ? op->getOperand(0) : op->getResult(0);
  ArrayRef<int64_t> shape = tensorType(whole).getShape();
  return llvm::all_of(shape.take_front(size_t(*dim)), [](int64_t size) { return size == 1; });
}

/// What the members of one bucket share: the collective (its name), its
/// group (mesh and axes), its reduction (a gather has none) and the element
/// type.
using BucketKey = std::tuple<StringRef, Attribute, Attribute, std::optional<dist::Reduction>, Type>;

BucketKey keyOf(Operation *op) {
  std::optional<dist::Reduction> reduction;
  if (auto sum = dyn_cast<dist::AllReduceOp>(op))
    reduction = sum.getReduction();
  else if (auto scatter = dyn_cast<dist::ReduceScatterOp>(op))
    reduction = scatter.getReduction();
  return {op->getName().getStringRef(), op->getAttr("mesh"), op->getAttr("mesh_axes"), reduction,
          tensorType(op->getOperand(0)).getElementType()};
}

int64_t bytesOf(Value value) {
  RankedTensorType type = tensorType(value);
  return type.getNumElements() * int64_t(llvm::divideCeil(type.getElementTypeBitWidth(), 8));
}

/// Collectives of one key, in program order, and where they may go: after
/// the last op that defines one of their inputs, before the first op that
/// reads one of their results (positions in the block).
struct Bucket {
  SmallVector<Operation *> members;
  int64_t bytes = 0;
  int64_t lastInput = -1;
  int64_t firstRead = std::numeric_limits<int64_t>::max();
};

class BlockBuckets {
public:
  BlockBuckets(Block &block, int64_t limitBytes) : block(block), limitBytes(limitBytes) {
    for (Operation &op : block)
      position[&op] = int64_t(order.size()), order.push_back(&op);
  }

  /// Forms the buckets of `block`'s collectives, then rewrites them.
  void run() {
    // The open bucket of each key, keys in the order first met (few).
    SmallVector<std::pair<BucketKey, Bucket>> open;
    for (Operation *op : order) {
      if (!(sumsGradient(op) || gathersUpdate(op)) || !contiguousBlocks(op))
        continue;
      int64_t bytes = bytesOf(op->getOperand(0));
      auto [input, read] = window(op);
      BucketKey key = keyOf(op);
      auto *entry = llvm::find_if(open, [&](const auto &other) { return other.first == key; });
      if (entry == open.end())
        entry = &open.emplace_back(key, Bucket());
      Bucket &bucket = entry->second;
      if (!bucket.members.empty() &&
          (bytes > limitBytes - bucket.bytes ||
           std::max(bucket.lastInput, input) >= std::min(bucket.firstRead, read)))
        closed.push_back(std::exchange(bucket, Bucket()));
      bucket.members.push_back(op);
      bucket.bytes += bytes;
      bucket.lastInput = std::max(bucket.lastInput, input);
      bucket.firstRead = std::min(bucket.firstRead, read);
    }
    for (auto &[key, bucket] : open)
      closed.push_back(std::move(bucket));
    // Every bucket is built before any member goes: a bucket's place may be
    // another bucket's member.
    SmallVector<Operation *> fused;
    for (Bucket &bucket : closed)
      if (bucket.members.size() > 1) {
        fuse(bucket);
        fused.append(bucket.members);
      }
    for (Operation *member : fused)
      member->erase();
  }

private:
  /// Where `op` may be moved: after the position its input is ready at,
  /// before the position its input or result is needed until. A value is
  /// ready from its definition; storage (an accumulator) from its last
  /// write before `op` until its next write, wherever its graph.weight
  /// stands (an op of no operands, moved up when a bucket reads it first).
  std::pair<int64_t, int64_t> window(Operation *op) const {
    Value input = op->getOperand(0);
    auto storage = input.getDefiningOp<graph::WeightOp>();
    int64_t ready = storage ? -1 : definedAt(input), until = firstRead(op);
    if (storage)
      for (Operation *user : storage->getUsers()) {
        auto write = dyn_cast<graph::AssignOp>(user);
        Operation *here = block.findAncestorOpInBlock(*user);
        if (!write || write.getTarget() != input || !here)
          continue;
        int64_t at = position.lookup(here);
        if (at < position.lookup(op))
          ready = std::max(ready, at);
        else
          until = std::min(until, at);
      }
    return {ready, until};
  }

  /// The position of the op of this block that defines `value`, or -1 when
  /// it is defined before the block starts.
  int64_t definedAt(Value value) const {
    Operation *producer = value.getDefiningOp();
    Operation *here = producer ? block.findAncestorOpInBlock(*producer) : nullptr;
    return here ? position.lookup(here) : -1;
  }

  /// The position of the first op of this block that reads `op`'s result
  /// (itself or in its regions).
  int64_t firstRead(Operation *op) const {
    int64_t first = int64_t(order.size());
    for (Operation *user : op->getUsers())
      if (Operation *here = block.findAncestorOpInBlock(*user))
        first = std::min(first, position.lookup(here));
    return first;
  }

  /// `value` as `type` (of as many elements): a view, none when it is one.
  static Value reshaped(OpBuilder &builder, Value value, RankedTensorType type) {
    if (value.getType() == type)
      return value;
    return builder.create<graph::ReshapeOp>(value.getLoc(), type, value);
  }

  /// One collective on the members' flat inputs, concatenated; each member's
  /// result a piece of it, reshaped.
  void fuse(Bucket &bucket) {
    Operation *first = bucket.members.front();
    int64_t place = std::max(position.lookup(first), bucket.lastInput + 1);
    Operation *before = order[size_t(place)];
    for (Operation *member : bucket.members)
      if (auto storage = member->getOperand(0).getDefiningOp<graph::WeightOp>();
          storage && storage->getBlock() == &block && before->isBeforeInBlock(storage))
        storage->moveBefore(before);
    OpBuilder builder(before);
    SmallVector<Location> locations;
    for (Operation *member : bucket.members)
      locations.push_back(member->getLoc());
    Location location = builder.getFusedLoc(locations);

    // An all-reduce's members are flat ([n]); a reduce-scatter's rows are
    // the ranks' blocks ([group, n / group]), an all-gather's input is its
    // rank's one row ([1, n]), so the pieces go side by side along dim 1.
    bool flat = isa<dist::AllReduceOp>(first);
    SmallVector<Value> pieces;
    SmallVector<int64_t> widths; // of each member's piece of the result
    for (Operation *member : bucket.members) {
      RankedTensorType input = tensorType(member->getOperand(0));
      int64_t elements = input.getNumElements();
      SmallVector<int64_t> shape{elements};
      if (isa<dist::ReduceScatterOp>(member)) {
        int64_t group = elements / tensorType(member->getResult(0)).getNumElements();
        shape = {group, elements / group};
      } else if (isa<dist::AllGatherOp>(member)) {
        shape = {1, elements};
      }
      widths.push_back(shape.back());
      pieces.push_back(reshaped(builder, member->getOperand(0),
                                RankedTensorType::get(shape, input.getElementType())));
    }
    int64_t axis = flat ? 0 : 1;
    auto concat = builder.create<graph::ConcatOp>(location, pieces, builder.getI64IntegerAttr(axis));

    // The first member, on the concatenation, splitting dim 0 (the rows).
    Operation *collective = builder.clone(*first);
    collective->setLoc(location);
    collective->setOperand(0, concat.getResult());
    RankedTensorType joined = tensorType(concat.getResult());
    SmallVector<int64_t> shape(joined.getShape());
    if (isa<dist::ReduceScatterOp>(first))
      shape[0] = 1;
    else if (isa<dist::AllGatherOp>(first))
      shape[0] = tensorType(first->getResult(0)).getNumElements() /
                 tensorType(first->getOperand(0)).getNumElements();
    collective->getResult(0).setType(RankedTensorType::get(shape, joined.getElementType()));
    if (!flat)
      collective->setAttr("dim", builder.getI64IntegerAttr(0));
    collective->setAttr(dist::kBucketAttrName,
                        builder.getI64IntegerAttr(int64_t(bucket.members.size())));

    auto split = builder.create<graph::SplitOp>(location, collective->getResult(0),
                                                uint64_t(axis), ArrayRef<int64_t>(widths));
    for (auto [member, piece] : llvm::zip(bucket.members, split.getResults())) {
      Value result = member->getResult(0);
      result.replaceAllUsesWith(reshaped(builder, piece, tensorType(result)));
    }
  }

  Block &block;
  int64_t limitBytes;
  SmallVector<Operation *> order;
  DenseMap<Operation *, int64_t> position;
  SmallVector<Bucket> closed;
};

struct BucketCollectivesPass : impl::BucketCollectivesPassBase<BucketCollectivesPass> {
  using BucketCollectivesPassBase::BucketCollectivesPassBase;

  void runOnOperation() override {
    if (!(bucketMb > 0))
      return;
    SmallVector<Block *> blocks;
    getOperation()->walk([&](Block *block) { blocks.push_back(block); });
    // A limit past what any rank holds is no limit.
    double bytes = std::ldexp(double(bucketMb), 20);
    int64_t limit = bytes < 0x1p62 ? int64_t(bytes) : std::numeric_limits<int64_t>::max();
    for (Block *block : blocks)
      BlockBuckets(*block, limit).run();
  }
};

} // namespace
} // namespace shardc::partition
