//===- Attention.cpp - importers of Attention and RotaryEmbedding (opset 23) ===//
//
// Both ops accept a 3-D [batch, seq, heads * head_size] layout besides the
// 4-D [batch, heads, seq, head_size] one; the importer reshapes the 3-D form
// into the 4-D one the graph ops use and back.
//
//===----------------------------------------------------------------------===//
#include "compiler/Import/NodeContext.h"
#include "compiler/Import/OpRegistry.h"

#include "dialects/Graph/CausalMask.h"
#include "dialects/Graph/TypeUtils.h"

#include <cmath>

using namespace mlir;
using namespace shardc::graph;

namespace shardc::import {
namespace {

/// [B, S, H*D] -> [B, H, S, D].
FailureOr<Value> splitHeads(NodeContext &node, Value value, int64_t heads, StringRef role) {
  ArrayRef<int64_t> shape = tensorType(value).getShape();
  if (heads <= 0 || shape[2] % heads != 0)
    return node.error() << role << " hidden size " << shape[2]
                        << " does not split into heads; expected a multiple of the head count "
                        << heads;
  auto split = node.reshape(value, {shape[0], shape[1], heads, shape[2] / heads});
  if (failed(split))
    return failure();
  return node.transpose(*split, {0, 2, 1, 3});
}

/// [B, H, S, D] -> [B, S, H*D].
FailureOr<Value> mergeHeads(NodeContext &node, Value value) {
  ArrayRef<int64_t> shape = tensorType(value).getShape();
  auto transposed = node.transpose(value, {0, 2, 1, 3});
  if (failed(transposed))
    return failure();
  return node.reshape(*transposed, {shape[0], shape[2], shape[1] * shape[3]});
}

/// Pads a mask whose key dim is shorter than the keys: the missing keys are hidden.
FailureOr<Value> padMask(NodeContext &node, Value mask, int64_t keys) {
  RankedTensorType type = tensorType(mask);
  int64_t given = type.getShape().empty() ? 1 : type.getShape().back();
  if (type.getRank() == 0 || given == keys || given == 1)
    return mask;
  if (given > keys)
    return node.error() << "attn_mask covers " << given << " keys; expected at most " << keys;
  SmallVector<int64_t> padShape(type.getShape());
  padShape.back() = keys - given;
  auto padType = RankedTensorType::get(padShape, type.getElementType());
  Attribute hidden = type.getElementType().isInteger(1)
                         ? Attribute(node.builder().getBoolAttr(false))
                         : node.builder().getFloatAttr(type.getElementType(), -INFINITY);
  Value pad = node.constant(DenseElementsAttr::get(padType, hidden));
  return node.create<ConcatOp>(ValueRange{mask, pad}, {node.i64Attr("axis", type.getRank() - 1)});
}

LogicalResult importAttention(NodeContext &node) {
  auto causal = node.intAttr("is_causal", 0);
  auto headsQ = node.intAttr("q_num_heads", 0);
  auto headsKv = node.intAttr("kv_num_heads", 0);
  auto softcap = node.floatAttr("softcap", 0.0);
  if (failed(node.requireInputs(3)) || failed(causal) || failed(headsQ) || failed(headsKv) ||
      failed(softcap) || failed(node.rejectAttr("qk_matmul_output_mode", 0)) ||
      failed(node.rejectAttr("left_window_size", -1)) ||
      failed(node.rejectAttr("right_window_size", -1)) ||
      failed(node.rejectOutputsFrom(3)))
    return failure();
  if (*softcap != 0.0)
    return node.error() << "attribute 'softcap' = " << *softcap << " is not supported; expected 0";
  if (node.hasInput(6))
    return node.error() << "input 'nonpad_kv_seqlen' is not supported";
  if (node.hasInput(4) != node.hasInput(5))
    return node.error() << "past_key and past_value must be given together";

  int64_t rank = node.inputType(0).getRank();
  if (rank != 3 && rank != 4)
    return node.error() << "Q must be 3-D or 4-D; got rank " << rank;
  for (unsigned i = 1; i < 3; ++i)
    if (node.inputType(i).getRank() != rank)
      return node.error() << "Q, K and V must have the same rank; got " << rank << " and "
                          << node.inputType(i).getRank();
  Value q = node.input(0), k = node.input(1), v = node.input(2);
  if (rank == 3) {
    auto q4 = splitHeads(node, q, *headsQ, "Q");
    auto k4 = succeeded(q4) ? splitHeads(node, k, *headsKv, "K") : noValue();
    auto v4 = succeeded(k4) ? splitHeads(node, v, *headsKv, "V") : noValue();
    if (failed(v4))
      return failure();
    q = *q4, k = *k4, v = *v4;
  }
  if (node.hasInput(4)) {
    auto keys = node.create<ConcatOp>(ValueRange{node.input(4), k}, {node.i64Attr("axis", 2)});
    auto values = succeeded(keys) ? node.create<ConcatOp>(ValueRange{node.input(5), v},
                                                          {node.i64Attr("axis", 2)})
                                  : noValue();
    if (failed(values))
      return failure();
    k = *keys, v = *values;
  }
  node.setOutput(1, k);
  node.setOutput(2, v);

  // ONNX's causal rule: query i sees key j <= i + (keys cached in past_key).
  // graph.attention's flag offsets by Sk - Sq instead; where the two differ
  // (more new keys than queries), the rule becomes an explicit mask.
  int64_t queries = tensorType(q).getShape()[2], keys = tensorType(k).getShape()[2];
  int64_t cached = node.hasInput(4) ? node.inputType(4).getShape()[2] : 0;
  Value causalMask;
  if (*causal && cached != keys - queries) {
    causalMask =
        node.constant(graph::causalMaskAttr(node.builder().getContext(), queries, keys, cached));
    *causal = 0;
  }

  int64_t headSize = tensorType(q).getShape().back();
  auto scale = node.floatAttr("scale", 1.0 / std::sqrt(static_cast<double>(headSize)));
  if (failed(scale))
    return failure();
  SmallVector<Value> operands = {q, k, v};
  Value mask = causalMask;
  if (node.hasInput(3)) {
    auto given = padMask(node, node.input(3), keys);
    if (failed(given))
      return failure();
    mask = *given;
    if (causalMask) {
      // Keep what both allow: and() for a boolean mask, -inf outside for a float one.
      Type element = tensorType(mask).getElementType();
      FailureOr<Value> combined =
          element.isInteger(1)
              ? node.create<AndOp>(ValueRange{mask, causalMask})
              : node.create<WhereOp>(
                    ValueRange{causalMask, mask,
                               node.constant(DenseElementsAttr::get(
                                   RankedTensorType::get({}, element),
                                   node.builder().getFloatAttr(element, -INFINITY)))});
      if (failed(combined))
        return failure();
      mask = *combined;
    }
  }
  if (mask)
    operands.push_back(mask);
  auto result = node.create<AttentionOp>(
      operands, {node.f64Attr("scale", *scale), node.boolAttr("causal", *causal != 0)});
  if (succeeded(result) && rank == 3)
    result = mergeHeads(node, *result);
  return node.define(result);
}

/// cos/sin of width R/2 per position -> width R in the graph op's pairing:
/// [c, c] for half-split rotation, [c0, c0, c1, c1, ...] for interleaved.
FailureOr<Value> fullWidth(NodeContext &node, Value half, bool interleaved) {
  ArrayRef<int64_t> shape = tensorType(half).getShape();
  int64_t last = shape.size() - 1;
  if (!interleaved)
    return node.create<ConcatOp>(ValueRange{half, half}, {node.i64Attr("axis", last)});
  SmallVector<int64_t> column(shape);
  column.push_back(1);
  auto pairs = node.reshape(half, column);
  auto doubled = succeeded(pairs) ? node.create<ConcatOp>(ValueRange{*pairs, *pairs},
                                                          {node.i64Attr("axis", last + 1)})
                                  : noValue();
  if (failed(doubled))
    return failure();
  SmallVector<int64_t> widened(shape);
  widened.back() *= 2;
  return node.reshape(*doubled, widened);
}

LogicalResult importRotaryEmbedding(NodeContext &node) {
  auto interleaved = node.intAttr("interleaved", 0);
  auto heads = node.intAttr("num_heads", 0);
  auto rotaryDim = node.intAttr("rotary_embedding_dim", 0);
  if (failed(node.requireInputs(3)) || failed(interleaved) || failed(heads) || failed(rotaryDim))
    return failure();
  RankedTensorType xType = node.inputType(0);
  int64_t rank = xType.getRank();
  if (rank != 3 && rank != 4)
    return node.error() << "input must be 3-D or 4-D; got rank " << rank;
  Value x = node.input(0);
  ArrayRef<int64_t> shape = xType.getShape();
  int64_t batch = shape[0], seq = rank == 4 ? shape[2] : shape[1];
  if (rank == 3) {
    if (*heads <= 0 || shape[2] % *heads != 0)
      return node.error() << "3-D input needs num_heads dividing its hidden size " << shape[2]
                          << "; got " << *heads;
    auto split = node.reshape(x, {batch, seq, *heads, shape[2] / *heads});
    if (failed(split))
      return failure();
    x = *split;
  }
  int64_t headSize = tensorType(x).getShape().back();
  int64_t rotated = *rotaryDim ? *rotaryDim : headSize;
  if (rotated % 2 || rotated > headSize || rotated <= 0)
    return node.error() << "rotary_embedding_dim " << rotated
                        << " is invalid; expected an even size of at most " << headSize;

  SmallVector<Value, 2> tables;
  for (unsigned i : {1u, 2u}) {
    FailureOr<Value> table = success(node.input(i));
    if (node.hasInput(3))
      table = node.create<GatherOp>(ValueRange{node.input(i), node.input(3)},
                                    {node.i64Attr("axis", 0)});
    if (failed(table))
      return failure();
    ArrayRef<int64_t> tableShape = tensorType(*table).getShape();
    if (tableShape.size() != 3 || tableShape[2] < rotated / 2)
      return node.error() << "cos/sin tables give " << formatShape(tableShape)
                          << " per token; expected [batch, seq, >= " << rotated / 2 << "]";
    if (tableShape[2] > rotated / 2)
      table = node.create<SliceOp>(
          *table, {node.arrayAttr("starts", {0, 0, 0}),
                   node.arrayAttr("ends", {tableShape[0], tableShape[1], rotated / 2}),
                   node.arrayAttr("steps", {1, 1, 1})});
    auto wide = succeeded(table) ? fullWidth(node, *table, *interleaved != 0) : noValue();
    // Broadcast over heads: [B, 1, S, R] for [B, H, S, D], [B, S, 1, R] for [B, S, H, D].
    SmallVector<int64_t> broadcast =
        rank == 4 ? SmallVector<int64_t>{tableShape[0], 1, tableShape[1], rotated}
                  : SmallVector<int64_t>{tableShape[0], tableShape[1], 1, rotated};
    auto placed = succeeded(wide) ? node.reshape(*wide, broadcast) : noValue();
    if (failed(placed))
      return failure();
    tables.push_back(*placed);
  }
  auto result = node.create<RotaryOp>(ValueRange{x, tables[0], tables[1]},
                                      {node.boolAttr("interleaved", *interleaved != 0)});
  if (succeeded(result) && rank == 3)
    result = node.reshape(*result, shape);
  return node.define(result);
}

} // namespace

void registerAttentionImporters(OpImporterMap &map) {
  map["Attention"] = {importAttention, 23};
  map["RotaryEmbedding"] = {importRotaryEmbedding, 23};
}

} // namespace shardc::import
