//===- RaiseBatchGathers.cpp - GatherND tuples that name their own row ----===//
//
//   gather_nd(mask [B, S], indices [B, 1, 1, S, 2]) with indices[b, ..., 0] = b
//   -> gather_nd(mask, indices[..., 1:]) {batch_dims = 1}
//
// torch's dynamo exporter builds the attention mask this way. Both gather the
// same values, but with the batch as a batch dim of the gather, data, indices
// and result share it, so the batch splits (over dp or micro-batches)
// instead of the mask being gathered whole on every device.
//
//===----------------------------------------------------------------------===//
#include "passes/Graph/Passes.h"

#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace shardc::graph {
#define GEN_PASS_DEF_RAISEBATCHGATHERSPASS
#include "passes/Graph/Passes.h.inc"
} // namespace shardc::graph

using namespace shardc::graph;

namespace {

/// Whether every tuple of `values` (indices of `shape`, tuples along the
/// last dim) has as its first component its own coordinate along dim
/// `dim`, which data's dim of `rows` rows it indexes (negative indices
/// count from the end).
bool firstComponentIsOwnRow(ArrayRef<int64_t> values, ArrayRef<int64_t> shape, int64_t dim,
                            int64_t rows) {
  int64_t k = shape.back(), inner = 1;
  for (int64_t d = dim + 1; d + 1 < int64_t(shape.size()); ++d)
    inner *= shape[d];
  for (int64_t tuple = 0; tuple * k < int64_t(values.size()); ++tuple) {
    int64_t own = (tuple / inner) % shape[dim];
    int64_t index = values[size_t(tuple * k)];
    if (index != own && index != own - rows)
      return false;
  }
  return true;
}

void raise(GatherNdOp gather) {
  DenseIntElementsAttr constant;
  if (!matchPattern(gather.getIndices(), m_Constant(&constant)))
    return;
  SmallVector<int64_t> shape(gather.getIndices().getType().getShape());
  ArrayRef<int64_t> data = gather.getData().getType().getShape();
  SmallVector<int64_t> values;
  for (const APInt &value : constant.getValues<APInt>())
    values.push_back(value.getSExtValue());
  int64_t batch = gather.getBatchDims();
  // A tuple keeps at least one component; the new batch dim must be one of
  // the indices' positions, as long as data's.
  while (shape.back() > 1 && batch + 1 < int64_t(shape.size()) &&
         shape[batch] == data[batch] &&
         firstComponentIsOwnRow(values, shape, batch, data[batch])) {
    int64_t k = shape.back();
    SmallVector<int64_t> rest;
    for (size_t at = 0; at < values.size(); ++at)
      if (int64_t(at) % k != 0)
        rest.push_back(values[at]);
    values = std::move(rest);
    shape.back() = k - 1;
    ++batch;
  }
  if (batch == int64_t(gather.getBatchDims()))
    return;
  OpBuilder builder(gather);
  auto type = RankedTensorType::get(shape, builder.getI64Type());
  Value indices = builder.create<ConstantOp>(
      gather.getLoc(), cast<ElementsAttr>(DenseElementsAttr::get(type, ArrayRef<int64_t>(values))));
  auto raised = builder.create<GatherNdOp>(gather.getLoc(), gather.getData(), indices,
                                           builder.getI64IntegerAttr(batch));
  if (raised.getType() != gather.getType()) {
    raised.erase();
    return;
  }
  gather.getResult().replaceAllUsesWith(raised.getResult());
  gather.erase();
}

struct RaiseBatchGathersPass
    : shardc::graph::impl::RaiseBatchGathersPassBase<RaiseBatchGathersPass> {
  void runOnOperation() override {
    SmallVector<GatherNdOp> gathers;
    getOperation().walk([&](GatherNdOp gather) { gathers.push_back(gather); });
    for (GatherNdOp gather : gathers)
      raise(gather);
  }
};

} // namespace
