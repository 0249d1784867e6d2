//===- Collectives.cpp - collective steps on the CPU ----------------------===//
//
// The communicators move contiguous blocks, one per group rank. A collective
// along dim 0 (or along any dim with only size-1 dims before it) has its
// blocks contiguous already and hands the tensors over as they are; along
// another dim the blocks interleave with the outer dims, so the kernel first
// gathers each rank's block into scratch memory (or scatters the received
// blocks out of it) with strided row copies.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Collectives.h"

#include "runtime/core/Communicator.h"

#include <cstring>
#include <string>
#include <vector>

namespace shardc::rt::cpu {
namespace {

using Bytes = std::vector<std::byte>;

const std::byte *bytesOf(const TensorView &view) {
  return static_cast<const std::byte *>(view.data);
}
std::byte *mutableBytesOf(const TensorView &view) { return static_cast<std::byte *>(view.data); }

void copy(std::byte *to, const std::byte *from, size_t bytes) {
  if (bytes)
    std::memcpy(to, from, bytes);
}

/// to[o][j] = from[j][o], rows of `row` bytes: n blocks of `outer` rows
/// each, laid out block by block, become `outer` rows of n blocks.
void interleave(const std::byte *from, std::byte *to, int64_t n, int64_t outer, size_t row) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t o = 0; o < outer; ++o)
      copy(to + (o * n + j) * row, from + (j * outer + o) * row, row);
}

/// The inverse: to[j][o] = from[o][j].
void deinterleave(const std::byte *from, std::byte *to, int64_t n, int64_t outer, size_t row) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t o = 0; o < outer; ++o)
      copy(to + (j * outer + o) * row, from + (o * n + j) * row, row);
}

int64_t product(const Shape &shape, size_t begin, size_t end) {
  int64_t result = 1;
  for (size_t i = begin; i < end; ++i)
    result *= shape[i];
  return result;
}

/// A tensor cut along `dim` into blocks: `outer` rows (the dims before
/// `dim`) of one block's `row` bytes each (`dim` and the dims after it).
struct Blocks {
  int64_t outer;
  size_t row;
};

Blocks blocksOf(const Shape &block, size_t dim, DType dtype) {
  return {product(block, 0, dim),
          static_cast<size_t>(product(block, dim, block.size())) * dtypeSize(dtype)};
}

class Collective {
public:
  Collective(const char *name, const KernelCall &call) : name_(name), call_(call) {}

  Status error(const std::string &message) const {
    return Status::error(std::string(name_) + ": " + message);
  }

  /// The group, and the operand counts.
  Status check(size_t inputs, size_t outputs) const {
    if (!call_.communicator)
      return error("no communicator is bound to the step (it has no mesh_axes)");
    if (call_.inputs.size() != inputs || call_.outputs.size() != outputs)
      return error("expected " + std::to_string(inputs) + " input(s) and " +
                   std::to_string(outputs) + " output(s); got " +
                   std::to_string(call_.inputs.size()) + " and " +
                   std::to_string(call_.outputs.size()));
    if (inputs && outputs && call_.inputs[0].dtype != call_.outputs[0].dtype)
      return error(std::string("input is ") + dtypeName(call_.inputs[0].dtype) + " but output is " +
                   dtypeName(call_.outputs[0].dtype));
    return {};
  }

  /// The int parameter `key` as a dim of a rank-`rank` tensor (negative
  /// counts from the back).
  StatusOr<size_t> dim(const std::string &key, size_t rank) const {
    if (!call_.params.has(key))
      return error("the parameter '" + key + "' is missing");
    int64_t value = call_.params.integer(key, 0);
    int64_t normalized = value < 0 ? value + static_cast<int64_t>(rank) : value;
    if (normalized < 0 || normalized >= static_cast<int64_t>(rank))
      return error(key + " " + std::to_string(value) + " is out of range for a rank-" +
                   std::to_string(rank) + " tensor");
    return static_cast<size_t>(normalized);
  }

  /// `output` must be `expected`.
  Status expectShape(const char *which, const Shape &actual, const Shape &expected,
                     const std::string &why) const {
    if (actual != expected)
      return error(std::string(which) + " " + formatShape(actual) + " does not match " + why +
                   "; expected " + formatShape(expected));
    return {};
  }

  /// The input's shape with dim `dim` divided by n (an error unless it divides).
  StatusOr<Shape> divided(const Shape &shape, size_t dim, int n, const char *which) const {
    if (shape[dim] % n != 0)
      return error(std::string(which) + " " + formatShape(shape) + " does not split into " +
                   std::to_string(n) + " blocks along dim " + std::to_string(dim));
    Shape block = shape;
    block[dim] /= n;
    return block;
  }

  Communicator &group() const { return *call_.communicator; }
  const TensorView &input() const { return call_.inputs[0]; }
  const TensorView &output() const { return call_.outputs[0]; }
  const Params &params() const { return call_.params; }

private:
  const char *name_;
  const KernelCall &call_;
};

Status allReduceKernel(const KernelCall &call) {
  Collective op("all_reduce", call);
  if (Status status = op.check(1, 1); !status)
    return status;
  if (Status status = op.expectShape("output", op.output().shape, op.input().shape, "the input");
      !status)
    return status;
  copy(mutableBytesOf(op.output()), bytesOf(op.input()), op.input().bytes());
  return op.group().allReduceSum(op.output().data, static_cast<size_t>(op.output().numel()),
                                 op.output().dtype);
}

Status allGatherKernel(const KernelCall &call) {
  Collective op("all_gather", call);
  if (Status status = op.check(1, 1); !status)
    return status;
  auto dim = op.dim("dim", op.input().shape.size());
  if (!dim)
    return dim.status();
  const int n = op.group().size();
  Shape expected = op.input().shape;
  expected[*dim] *= n;
  if (Status status = op.expectShape("output", op.output().shape, expected,
                                     "the input gathered from " + std::to_string(n) +
                                         " ranks along dim " + std::to_string(*dim));
      !status)
    return status;
  Blocks blocks = blocksOf(op.input().shape, *dim, op.input().dtype);
  if (blocks.outer == 1)
    return op.group().allGather(op.input().data, op.output().data, op.input().bytes());
  Bytes gathered(op.output().bytes());
  if (Status status = op.group().allGather(op.input().data, gathered.data(), op.input().bytes());
      !status)
    return status;
  interleave(gathered.data(), mutableBytesOf(op.output()), n, blocks.outer, blocks.row);
  return {};
}

Status reduceScatterKernel(const KernelCall &call) {
  Collective op("reduce_scatter", call);
  if (Status status = op.check(1, 1); !status)
    return status;
  auto dim = op.dim("dim", op.input().shape.size());
  if (!dim)
    return dim.status();
  const int n = op.group().size();
  auto block = op.divided(op.input().shape, *dim, n, "input");
  if (!block)
    return block.status();
  if (Status status = op.expectShape("output", op.output().shape, *block,
                                     "the input scattered over " + std::to_string(n) +
                                         " ranks along dim " + std::to_string(*dim));
      !status)
    return status;
  Blocks blocks = blocksOf(*block, *dim, op.input().dtype);
  const auto count = static_cast<size_t>(op.output().numel());
  if (blocks.outer == 1)
    return op.group().reduceScatterSum(op.input().data, op.output().data, count, op.input().dtype);
  Bytes contiguous(op.input().bytes());
  deinterleave(bytesOf(op.input()), contiguous.data(), n, blocks.outer, blocks.row);
  return op.group().reduceScatterSum(contiguous.data(), op.output().data, count, op.input().dtype);
}

Status allToAllKernel(const KernelCall &call) {
  Collective op("all_to_all", call);
  if (Status status = op.check(1, 1); !status)
    return status;
  const size_t rank = op.input().shape.size();
  auto splitDim = op.dim("split_dim", rank);
  if (!splitDim)
    return splitDim.status();
  auto concatDim = op.dim("concat_dim", rank);
  if (!concatDim)
    return concatDim.status();
  const int n = op.group().size();
  auto block = op.divided(op.input().shape, *splitDim, n, "input");
  if (!block)
    return block.status();
  Shape expected = *block;
  expected[*concatDim] *= n;
  if (Status status = op.expectShape(
          "output", op.output().shape, expected,
          "the input split " + std::to_string(n) + " ways along dim " + std::to_string(*splitDim) +
              " and concatenated along dim " + std::to_string(*concatDim));
      !status)
    return status;
  const size_t blockBytes = op.input().bytes() / n;
  // Blocks to send, contiguous in rank order.
  Bytes sendScratch;
  const std::byte *send = bytesOf(op.input());
  Blocks split = blocksOf(*block, *splitDim, op.input().dtype);
  if (split.outer != 1) {
    sendScratch.resize(op.input().bytes());
    deinterleave(send, sendScratch.data(), n, split.outer, split.row);
    send = sendScratch.data();
  }
  // Received blocks, in rank order, then concatenated along concat_dim.
  Blocks concat = blocksOf(*block, *concatDim, op.input().dtype);
  if (concat.outer == 1)
    return op.group().allToAll(send, op.output().data, blockBytes);
  Bytes received(op.output().bytes());
  if (Status status = op.group().allToAll(send, received.data(), blockBytes); !status)
    return status;
  interleave(received.data(), mutableBytesOf(op.output()), n, concat.outer, concat.row);
  return {};
}

Status allSliceKernel(const KernelCall &call) {
  Collective op("all_slice", call);
  if (Status status = op.check(1, 1); !status)
    return status;
  auto dim = op.dim("dim", op.input().shape.size());
  if (!dim)
    return dim.status();
  const int n = op.group().size(), me = op.group().rank();
  auto block = op.divided(op.input().shape, *dim, n, "input");
  if (!block)
    return block.status();
  if (Status status = op.expectShape("output", op.output().shape, *block,
                                     "one of " + std::to_string(n) + " blocks along dim " +
                                         std::to_string(*dim));
      !status)
    return status;
  Blocks blocks = blocksOf(*block, *dim, op.input().dtype);
  for (int64_t o = 0; o < blocks.outer; ++o)
    copy(mutableBytesOf(op.output()) + o * blocks.row,
         bytesOf(op.input()) + (o * n + me) * blocks.row, blocks.row);
  return {};
}

Status broadcastKernel(const KernelCall &call) {
  Collective op("broadcast", call);
  if (Status status = op.check(1, 1); !status)
    return status;
  if (Status status = op.expectShape("output", op.output().shape, op.input().shape, "the input");
      !status)
    return status;
  const int64_t root = op.params().integer("root", 0);
  if (root < 0 || root >= op.group().size())
    return op.error("root " + std::to_string(root) + " is not a rank of the " +
                    std::to_string(op.group().size()) + "-rank group");
  if (op.group().rank() == root)
    copy(mutableBytesOf(op.output()), bytesOf(op.input()), op.input().bytes());
  return op.group().broadcast(op.output().data, op.output().bytes(), static_cast<int>(root));
}

StatusOr<int> peerOf(const Collective &op) {
  if (!op.params().has("peer"))
    return op.error("the parameter 'peer' is missing");
  const int64_t peer = op.params().integer("peer", -1);
  if (peer < 0 || peer >= op.group().size())
    return op.error("peer " + std::to_string(peer) + " is not a rank of the " +
                    std::to_string(op.group().size()) + "-rank group");
  return static_cast<int>(peer);
}

Status sendKernel(const KernelCall &call) {
  Collective op("send", call);
  if (Status status = op.check(1, 0); !status)
    return status;
  auto peer = peerOf(op);
  if (!peer)
    return peer.status();
  return op.group().send(op.input().data, op.input().bytes(), *peer);
}

Status recvKernel(const KernelCall &call) {
  Collective op("recv", call);
  if (Status status = op.check(0, 1); !status)
    return status;
  auto peer = peerOf(op);
  if (!peer)
    return peer.status();
  return op.group().recv(op.output().data, op.output().bytes(), *peer);
}

} // namespace

void addCollectiveKernels(KernelTable &table) {
  table.add("all_reduce", allReduceKernel);
  table.add("all_gather", allGatherKernel);
  table.add("reduce_scatter", reduceScatterKernel);
  table.add("all_to_all", allToAllKernel);
  table.add("all_slice", allSliceKernel);
  table.add("broadcast", broadcastKernel);
  table.add("send", sendKernel);
  table.add("recv", recvKernel);
}

} // namespace shardc::rt::cpu
