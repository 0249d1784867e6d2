//===- CollectivePlan.h - checks and block layout of collective steps -*- C++ -*-===//
//
// The collective kernels of every backend (runtime/cpu/Collectives.cpp,
// runtime/cuda/Collectives.cpp) take the same operands and parameters
// (runtime/cpu/Collectives.h lists them) and differ only in how they move
// bytes. This is the part they share: the operand checks, with the same
// messages everywhere, and where each rank's block lies.
//
// The communicators move contiguous blocks, one per group rank. Cut along
// dim 0 (or any dim with only size-1 dims before it) a tensor's blocks are
// contiguous already; cut along another dim they interleave with the outer
// dims: `outer` rows of `row` bytes per block. An all-gather hands those
// rows to Communicator::allGatherRows; the other kernels first gather each
// rank's block into scratch memory (or scatter received blocks out of it)
// with strided row copies.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_COLLECTIVEPLAN_H
#define SHARDC_RUNTIME_CORE_COLLECTIVEPLAN_H

#include "runtime/core/Communicator.h"
#include "runtime/core/Kernel.h"

#include <string>
#include <utility>

namespace shardc::rt {

/// A tensor cut along a dim into blocks: `outer` rows (the dims before the
/// cut) of one block's `row` bytes each (the cut dim and the dims after it).
struct Blocks {
  int64_t outer = 1;
  size_t row = 0;
  /// Blocks already contiguous: the tensor is the blocks one after another.
  bool contiguous() const { return outer == 1; }
};

/// One collective step's call, with the checks its kernel makes.
class CollectiveCall {
public:
  CollectiveCall(const char *name, const KernelCall &call) : name_(name), call_(call) {}

  /// "NAME: message".
  Status error(const std::string &message) const;
  Communicator &group() const { return *call_.communicator; }
  const TensorView &input() const { return call_.inputs[0]; }
  const TensorView &output() const { return call_.outputs[0]; }
  const Params &params() const { return call_.params; }
  const KernelCall &call() const { return call_; }

  /// A group is bound, the operand counts are `inputs` and `outputs`, and
  /// the input and output element types agree.
  Status check(size_t inputs, size_t outputs) const;
  /// The int parameter `key` as a dim of a rank-`rank` tensor (negative
  /// counts from the back).
  StatusOr<size_t> dim(const std::string &key, size_t rank) const;
  /// `actual` (the operand `which`) must be `expected`; `why` says why.
  Status expectShape(const char *which, const Shape &actual, const Shape &expected,
                     const std::string &why) const;
  /// `shape` with dim `dim` divided by n (an error unless it divides).
  StatusOr<Shape> divided(const Shape &shape, size_t dim, int n, const char *which) const;
  /// The `peer` (send/recv) or `root` (broadcast) parameter as a group rank.
  StatusOr<int> groupRank(const char *key, bool required) const;

private:
  const char *name_;
  const KernelCall &call_;
};

/// The blocks of a tensor of shape `block` cut along `dim`.
Blocks blocksOf(const Shape &block, size_t dim, DType dtype);

// The checks of each collective; the plans say where the blocks lie.
Status checkAllReduce(const CollectiveCall &op);
/// The blocks of the input, gathered along dim in the output.
StatusOr<Blocks> planAllGather(const CollectiveCall &op);
/// The blocks of the output, one of which each rank keeps of the input.
StatusOr<Blocks> planReduceScatter(const CollectiveCall &op);
/// The blocks to send (cut along split_dim) and received (along concat_dim).
StatusOr<std::pair<Blocks, Blocks>> planAllToAll(const CollectiveCall &op);
/// The blocks of the input of which this rank keeps its own.
StatusOr<Blocks> planAllSlice(const CollectiveCall &op);
/// The root.
StatusOr<int> planBroadcast(const CollectiveCall &op);
/// The peer.
StatusOr<int> planSend(const CollectiveCall &op);
StatusOr<int> planRecv(const CollectiveCall &op);

} // namespace shardc::rt

#endif
