//===- CollectivePlan.cpp - checks and block layout of collective steps ---===//
#include "runtime/core/CollectivePlan.h"

namespace shardc::rt {
namespace {

int64_t product(const Shape &shape, size_t begin, size_t end) {
  int64_t result = 1;
  for (size_t i = begin; i < end; ++i)
    result *= shape[i];
  return result;
}

/// The "dim" of a collective of one input and one output along one dim
/// (all_gather, reduce_scatter, all_slice), within the input's rank.
StatusOr<size_t> oneDim(const CollectiveCall &op) {
  if (Status status = op.check(1, 1); !status)
    return status;
  return op.dim("dim", op.input().shape.size());
}

} // namespace

Status CollectiveCall::error(const std::string &message) const {
  return Status::error(std::string(name_) + ": " + message);
}

Status CollectiveCall::check(size_t inputs, size_t outputs) const {
  if (!call_.communicator)
    return error("no communicator is bound to the step (it has no mesh_axes)");
  if (call_.inputs.size() != inputs || call_.outputs.size() != outputs)
    return error("expected " + std::to_string(inputs) + " input(s) and " + std::to_string(outputs) +
                 " output(s); got " + std::to_string(call_.inputs.size()) + " and " +
                 std::to_string(call_.outputs.size()));
  if (inputs && outputs && call_.inputs[0].dtype != call_.outputs[0].dtype)
    return error(std::string("input is ") + dtypeName(call_.inputs[0].dtype) + " but output is " +
                 dtypeName(call_.outputs[0].dtype));
  return {};
}

StatusOr<size_t> CollectiveCall::dim(const std::string &key, size_t rank) const {
  if (!call_.params.has(key))
    return error("the parameter '" + key + "' is missing");
  int64_t value = call_.params.integer(key, 0);
  int64_t normalized = value < 0 ? value + static_cast<int64_t>(rank) : value;
  if (normalized < 0 || normalized >= static_cast<int64_t>(rank))
    return error(key + " " + std::to_string(value) + " is out of range for a rank-" +
                 std::to_string(rank) + " tensor");
  return static_cast<size_t>(normalized);
}

Status CollectiveCall::expectShape(const char *which, const Shape &actual, const Shape &expected,
                                   const std::string &why) const {
  if (actual != expected)
    return error(std::string(which) + " " + formatShape(actual) + " does not match " + why +
                 "; expected " + formatShape(expected));
  return {};
}

StatusOr<Shape> CollectiveCall::divided(const Shape &shape, size_t dim, int n,
                                        const char *which) const {
  if (shape[dim] % n != 0)
    return error(std::string(which) + " " + formatShape(shape) + " does not split into " +
                 std::to_string(n) + " blocks along dim " + std::to_string(dim));
  Shape block = shape;
  block[dim] /= n;
  return block;
}

StatusOr<int> CollectiveCall::groupRank(const char *key, bool required) const {
  if (required && !call_.params.has(key))
    return error(std::string("the parameter '") + key + "' is missing");
  const int64_t value = call_.params.integer(key, required ? -1 : 0);
  if (value < 0 || value >= group().size())
    return error(std::string(key) + " " + std::to_string(value) + " is not a rank of the " +
                 std::to_string(group().size()) + "-rank group");
  return static_cast<int>(value);
}

Blocks blocksOf(const Shape &block, size_t dim, DType dtype) {
  return {product(block, 0, dim),
          static_cast<size_t>(product(block, dim, block.size())) * dtypeSize(dtype)};
}

Status checkAllReduce(const CollectiveCall &op) {
  if (Status status = op.check(1, 1); !status)
    return status;
  return op.expectShape("output", op.output().shape, op.input().shape, "the input");
}

StatusOr<Blocks> planAllGather(const CollectiveCall &op) {
  auto dim = oneDim(op);
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
  return blocksOf(op.input().shape, *dim, op.input().dtype);
}

namespace {

/// reduce_scatter's and all_slice's plan: the output is one of the group's
/// blocks of the input along `dim`, which `describe(n, dim)` words.
template <typename Describe>
StatusOr<Blocks> planOneBlock(const CollectiveCall &op, Describe describe) {
  auto dim = oneDim(op);
  if (!dim)
    return dim.status();
  const int n = op.group().size();
  auto block = op.divided(op.input().shape, *dim, n, "input");
  if (!block)
    return block.status();
  if (Status status = op.expectShape("output", op.output().shape, *block, describe(n, *dim));
      !status)
    return status;
  return blocksOf(*block, *dim, op.input().dtype);
}

} // namespace

StatusOr<Blocks> planReduceScatter(const CollectiveCall &op) {
  return planOneBlock(op, [](int n, size_t dim) {
    return "the input scattered over " + std::to_string(n) + " ranks along dim " +
           std::to_string(dim);
  });
}

StatusOr<std::pair<Blocks, Blocks>> planAllToAll(const CollectiveCall &op) {
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
  return std::make_pair(blocksOf(*block, *splitDim, op.input().dtype),
                        blocksOf(*block, *concatDim, op.input().dtype));
}

StatusOr<Blocks> planAllSlice(const CollectiveCall &op) {
  return planOneBlock(op, [](int n, size_t dim) {
    return "one of " + std::to_string(n) + " blocks along dim " + std::to_string(dim);
  });
}

StatusOr<int> planBroadcast(const CollectiveCall &op) {
  if (Status status = op.check(1, 1); !status)
    return status;
  if (Status status = op.expectShape("output", op.output().shape, op.input().shape, "the input");
      !status)
    return status;
  return op.groupRank("root", false);
}

StatusOr<int> planSend(const CollectiveCall &op) {
  if (Status status = op.check(1, 0); !status)
    return status;
  return op.groupRank("peer", true);
}

StatusOr<int> planRecv(const CollectiveCall &op) {
  if (Status status = op.check(0, 1); !status)
    return status;
  return op.groupRank("peer", true);
}

} // namespace shardc::rt
