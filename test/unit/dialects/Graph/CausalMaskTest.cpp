//===- CausalMaskTest.cpp - packed causal masks equal MLIR's own packing --===//
//
// The mask is built as packed bits; MLIR packing a vector of bools must
// give the same attribute (uniqued: the same pointer), for masks whose rows
// start and end mid-byte, offsets that hide every key of early rows, and
// the splats (every key seen, none seen).
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/CausalMask.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <vector>

using namespace mlir;

namespace {

DenseElementsAttr byBools(MLIRContext &context, int64_t queries, int64_t keys, int64_t offset) {
  std::vector<char> visible; // std::vector<bool> has no ArrayRef
  for (int64_t i = 0; i < queries; ++i)
    for (int64_t j = 0; j < keys; ++j)
      visible.push_back(j <= i + offset);
  auto type = RankedTensorType::get({queries, keys}, IntegerType::get(&context, 1));
  return DenseElementsAttr::get(
      type, ArrayRef<bool>(reinterpret_cast<const bool *>(visible.data()), visible.size()));
}

TEST(CausalMaskTest, EqualsMlirPackedBools) {
  MLIRContext context;
  for (auto [queries, keys, offset] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {1, 1, 0}, {3, 5, 2}, {7, 13, 6}, {13, 7, -6}, {16, 16, 0}, {9, 33, 24}, {33, 9, -24},
           {5, 5, 10}, {5, 5, -10}, {17, 40, 0}, {64, 64, 0}}) {
    DenseElementsAttr packed = shardc::graph::causalMaskAttr(&context, queries, keys, offset);
    DenseElementsAttr reference = byBools(context, queries, keys, offset);
    EXPECT_EQ(packed, reference) << queries << "x" << keys << " offset " << offset;
    EXPECT_EQ(packed.isSplat(), reference.isSplat()) << queries << "x" << keys;
  }
}

} // namespace
