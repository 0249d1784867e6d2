//===- CausalMask.cpp - the boolean mask of causal attention --------------===//
#include "dialects/Graph/CausalMask.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

using namespace mlir;

namespace shardc::graph {

DenseElementsAttr causalMaskAttr(MLIRContext *context, int64_t queries, int64_t keys,
                                 int64_t offset) {
  auto type = RankedTensorType::get({queries, keys}, IntegerType::get(context, 1));
  auto seen = [&](int64_t query) { return std::clamp<int64_t>(query + offset + 1, 0, keys); };
  // Every query seeing every key, or none: a splat, as MLIR builds one.
  if (queries == 0 || keys == 0 || seen(0) == keys || seen(queries - 1) == 0)
    return DenseElementsAttr::get(type, queries > 0 && keys > 0 && seen(0) == keys);
  // MLIR's i1 storage: one bit per element in row-major order, the first
  // element in a byte's lowest bit.
  std::vector<char> bits((queries * keys + CHAR_BIT - 1) / CHAR_BIT, 0);
  for (int64_t query = 0; query < queries; ++query) {
    int64_t first = query * keys, end = first + seen(query);
    int64_t bit = first;
    for (; bit < end && bit % CHAR_BIT; ++bit)
      bits[bit / CHAR_BIT] |= char(1 << (bit % CHAR_BIT));
    int64_t wholeBytes = (end - bit) / CHAR_BIT;
    std::memset(bits.data() + bit / CHAR_BIT, 0xff, size_t(wholeBytes));
    for (bit += wholeBytes * CHAR_BIT; bit < end; ++bit)
      bits[bit / CHAR_BIT] |= char(1 << (bit % CHAR_BIT));
  }
  return DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(bits));
}

} // namespace shardc::graph
