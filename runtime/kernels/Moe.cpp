//===- Moe.cpp - the routed-experts kernels' contract ---------------------===//
#include "runtime/kernels/Moe.h"

#include <algorithm>
#include <optional>

namespace shardc::rt::kernels {
namespace {

/// A float matrix [rows, cols].
Status checkFloatMatrix(const char *op, const char *role, const TensorView &tensor) {
  SHARDC_KERNEL_TRY(checkTensor(op, role, tensor));
  if (!isFloatType(tensor.dtype))
    return fail(op, std::string("needs a float ") + role + " but got " + dtypeName(tensor.dtype));
  if (tensor.shape.size() != 2)
    return fail(op, std::string(role) + " must be 2-D but got " + str(tensor.shape));
  return Status::success();
}

/// The int64 routing matrix [Q, E].
Status checkRouting(const char *op, const MoeGroup &group, const TensorView &routing) {
  SHARDC_KERNEL_TRY(checkTensor(op, "routing", routing));
  SHARDC_KERNEL_TRY(checkDType(op, "routing", routing, DType::I64));
  return checkShape(op, "routing", routing, {group.sources(), group.experts});
}

/// The int64 indices [tokens, k], k >= 1.
Status checkIndices(const char *op, const TensorView &indices, int64_t tokens) {
  SHARDC_KERNEL_TRY(checkTensor(op, "indices", indices));
  SHARDC_KERNEL_TRY(checkDType(op, "indices", indices, DType::I64));
  if (indices.shape.size() != 2 || indices.shape[0] != tokens || indices.shape[1] < 1)
    return fail(op, "indices must be [" + std::to_string(tokens) + ", k] with k >= 1 but got " +
                        str(indices.shape));
  return Status::success();
}

} // namespace

Status checkMoeGroup(const char *op, const MoeGroup &group) {
  if (group.experts < 1)
    return fail(op, "experts must be at least 1 but got " + std::to_string(group.experts));
  if (group.experts % group.members != 0)
    return fail(op, std::to_string(group.experts) + " experts do not divide over the group's " +
                        std::to_string(group.members) + " members");
  if (group.capacity < 0)
    return fail(op, "capacity must be >= 0 but got " + std::to_string(group.capacity));
  return Status::success();
}

Status countEntries(const char *op, const MoeGroup &group, const int64_t *indices, int64_t tokens,
                    int64_t slots, int64_t *counts) {
  std::fill(counts, counts + group.experts, 0);
  for (int64_t t = 0; t < tokens; ++t) {
    const int64_t *token = indices + t * slots;
    for (int64_t j = 0; j < slots; ++j) {
      const int64_t expert = token[j];
      if (expert < 0 || expert >= group.experts)
        return fail(op, "indices[" + std::to_string(t) + ", " + std::to_string(j) + "] is expert " +
                            std::to_string(expert) + ", outside [0, " +
                            std::to_string(group.experts) + ")");
      // Top-k gives distinct experts, which the worst-case row count assumes.
      for (int64_t before = 0; before < j; ++before)
        if (token[before] == expert)
          return fail(op, "token " + std::to_string(t) + " names expert " + std::to_string(expert) +
                              " in slots " + std::to_string(before) + " and " + std::to_string(j));
      ++counts[expert];
    }
  }
  return Status::success();
}

void keepRule(const MoeGroup &group, const int64_t *count, int64_t *kept) {
  const int64_t sources = group.sources(), experts = group.experts;
  for (int64_t e = 0; e < experts; ++e) {
    int64_t before = 0; // entries of e ranked ahead of source q's
    for (int64_t q = 0; q < sources; ++q) {
      const int64_t mine = count[q * experts + e];
      kept[q * experts + e] =
          group.capacity == 0 ? mine : std::clamp(group.capacity - before, int64_t(0), mine);
      before += mine;
    }
  }
}

void moeLoad(const MoeGroup &group, const int64_t *count, const int64_t *kept,
             std::vector<std::pair<std::string, int64_t>> &counters) {
  int64_t dropped = 0;
  for (int64_t e = 0; e < group.experts; ++e) {
    int64_t keptOfExpert = 0;
    for (int64_t q = 0; q < group.sources(); ++q) {
      keptOfExpert += kept[q * group.experts + e];
      dropped += count[q * group.experts + e] - kept[q * group.experts + e];
    }
    counters.emplace_back("kept_e" + std::to_string(e), keptOfExpert);
  }
  counters.emplace_back("dropped", dropped);
  int64_t sent = 0;
  if (group.exchange)
    for (int64_t e = 0; e < group.experts; ++e)
      if (e / group.localExperts() != group.member)
        sent += kept[group.ownSource() * group.experts + e];
  counters.emplace_back("sent_rows", sent);
}

Status makeMoeLayout(const char *op, const MoeGroup &group, const int64_t *routing,
                     int64_t capacityRows, MoeLayout &layout) {
  const int64_t sources = group.sources(), experts = group.experts;
  const int64_t local = group.localExperts(), first = group.firstLocal();
  layout.kept.assign(routing, routing + sources * experts);
  // Every count is some member's rows of one expert, and every member's
  // buffer has R rows: bounding each by R also keeps the sums from
  // overflowing.
  for (int64_t i = 0; i < sources * experts; ++i)
    if (layout.kept[i] < 0 || layout.kept[i] > capacityRows)
      return fail(op, "routing[" + std::to_string(i / experts) + ", " +
                          std::to_string(i % experts) + "] is " + std::to_string(layout.kept[i]) +
                          ", outside [0, " + std::to_string(capacityRows) + "] (the rows' R)");
  auto kept = [&](int64_t q, int64_t e) { return layout.kept[q * experts + e]; };

  layout.segmentStart.assign(local + 1, 0);
  layout.blockStart.assign(local * sources, 0);
  int64_t row = 0;
  for (int64_t l = 0; l < local; ++l) {
    layout.segmentStart[l] = row;
    for (int64_t q = 0; q < sources; ++q) {
      layout.blockStart[l * sources + q] = row;
      row += kept(q, first + l);
    }
  }
  layout.segmentStart[local] = row;
  if (row > capacityRows)
    return fail(op, "this member's experts keep " + std::to_string(row) + " rows, more than the " +
                        std::to_string(capacityRows) + " of the row buffer");

  layout.packedStart.assign(sources * local, 0);
  layout.sourceRows.assign(sources, 0);
  row = 0;
  for (int64_t q = 0; q < sources; ++q)
    for (int64_t l = 0; l < local; ++l) {
      layout.packedStart[q * local + l] = row;
      row += kept(q, first + l);
      layout.sourceRows[q] += kept(q, first + l);
    }

  const int64_t own = group.ownSource();
  layout.ownStart.assign(experts, 0);
  layout.ownRowsTo.assign(group.exchange ? group.members : 1, 0);
  row = 0;
  for (int64_t e = group.ownFirst(); e < group.ownEnd(); ++e) {
    layout.ownStart[e] = row;
    row += kept(own, e);
    layout.ownRowsTo[group.exchange ? e / local : 0] += kept(own, e);
  }
  layout.ownRows = row;
  return Status::success();
}

int64_t MoeLayout::longestSegment() const {
  int64_t longest = 0;
  for (size_t l = 0; l + 1 < segmentStart.size(); ++l)
    longest = std::max(longest, segmentRows(int64_t(l)));
  return longest;
}

std::vector<int64_t> rowsOfPacked(const MoeGroup &group, const MoeLayout &layout) {
  const int64_t sources = group.sources(), local = group.localExperts();
  std::vector<int64_t> rowOf(layout.usedRows());
  for (int64_t q = 0; q < sources; ++q)
    for (int64_t l = 0; l < local; ++l) {
      const int64_t packed = layout.packedStart[q * local + l];
      const int64_t row = layout.blockStart[l * sources + q];
      for (int64_t n = 0; n < layout.kept[q * group.experts + group.firstLocal() + l]; ++n)
        rowOf[packed + n] = row + n;
    }
  return rowOf;
}

Status placeEntries(const char *op, const MoeGroup &group, const MoeLayout &layout,
                    const int64_t *indices, int64_t tokens, int64_t slots,
                    std::vector<int64_t> &positions) {
  const int64_t entries = tokens * slots, own = group.ownSource() * group.experts;
  positions.assign(entries, -1);
  std::vector<int64_t> seen(group.experts, 0); // entries of each expert so far, in (t, j) order
  for (int64_t i = 0; i < entries; ++i) {
    const int64_t expert = indices[i];
    if (expert < 0 || expert >= group.experts)
      return fail(op, "indices[" + std::to_string(i / slots) + ", " + std::to_string(i % slots) +
                          "] is expert " + std::to_string(expert) + ", outside [0, " +
                          std::to_string(group.experts) + ")");
    if (expert < group.ownFirst() || expert >= group.ownEnd())
      continue;
    if (seen[expert] < layout.kept[own + expert])
      positions[i] = layout.ownStart[expert] + seen[expert];
    ++seen[expert];
  }
  return Status::success();
}

Status checkMoeDispatch(const MoeGroup &group, const TensorView &x, const TensorView &indices,
                        const TensorView &rows, const TensorView &routing) {
  const char *op = "moe_dispatch";
  SHARDC_KERNEL_TRY(checkMoeGroup(op, group));
  SHARDC_KERNEL_TRY(checkFloatMatrix(op, "input", x));
  const int64_t tokens = x.shape[0], hidden = x.shape[1];
  SHARDC_KERNEL_TRY(checkIndices(op, indices, tokens));
  SHARDC_KERNEL_TRY(checkTensor(op, "rows", rows));
  SHARDC_KERNEL_TRY(checkDType(op, "rows", rows, x.dtype));
  if (rows.shape.size() != 2 || rows.shape[1] != hidden)
    return fail(op, "rows must be [R, " + std::to_string(hidden) + "] but got " + str(rows.shape));
  SHARDC_KERNEL_TRY(checkRouting(op, group, routing));
  // Each source's tokens put at most min(k, E_l) entries on this member's
  // experts (the experts of a token are distinct).
  const int64_t perSource = tokens * std::min(indices.shape[1], group.localExperts());
  int64_t worst = group.sources() * perSource;
  if (group.capacity > 0)
    worst = std::min(worst, group.localExperts() * group.capacity);
  if (rows.shape[0] < worst)
    return fail(op, "rows has " + std::to_string(rows.shape[0]) + " rows, fewer than the " +
                        std::to_string(worst) + " the worst case needs");
  return Status::success();
}

Status checkMoeExperts(const MoeGroup &group, const TensorView &rows, const TensorView &routing,
                       const TensorView *gate, const TensorView &up, const TensorView &down,
                       bool transposeWeights, const TensorView &out, MoeExpertDims &dims) {
  const char *op = "moe_experts";
  SHARDC_KERNEL_TRY(checkMoeGroup(op, group));
  SHARDC_KERNEL_TRY(checkFloatMatrix(op, "rows", rows));
  SHARDC_KERNEL_TRY(checkRouting(op, group, routing));
  dims.rows = rows.shape[0];
  dims.hidden = rows.shape[1];
  SHARDC_KERNEL_TRY(checkTensor(op, "up weight", up));
  SHARDC_KERNEL_TRY(checkDType(op, "up weight", up, rows.dtype));
  if (up.shape.size() != 3)
    return fail(op, "up weight must be 3-D [local experts, ...] but got " + str(up.shape));
  dims.ffn = up.shape[transposeWeights ? 1 : 2];
  const int64_t local = group.localExperts(), hidden = dims.hidden, ffn = dims.ffn;
  // [E_l, in, out], or [E_l, out, in] as PyTorch stores them.
  const Shape intoFfn = transposeWeights ? Shape{local, ffn, hidden} : Shape{local, hidden, ffn};
  const Shape fromFfn = transposeWeights ? Shape{local, hidden, ffn} : Shape{local, ffn, hidden};
  SHARDC_KERNEL_TRY(checkShape(op, "up weight", up, intoFfn));
  if (gate) {
    SHARDC_KERNEL_TRY(checkTensor(op, "gate weight", *gate));
    SHARDC_KERNEL_TRY(checkDType(op, "gate weight", *gate, rows.dtype));
    SHARDC_KERNEL_TRY(checkShape(op, "gate weight", *gate, intoFfn));
  }
  SHARDC_KERNEL_TRY(checkTensor(op, "down weight", down));
  SHARDC_KERNEL_TRY(checkDType(op, "down weight", down, rows.dtype));
  SHARDC_KERNEL_TRY(checkShape(op, "down weight", down, fromFfn));
  SHARDC_KERNEL_TRY(checkTensor(op, "result", out));
  SHARDC_KERNEL_TRY(checkDType(op, "result", out, rows.dtype));
  return checkShape(op, "result", out, rows.shape);
}

TensorView expertMatrix(const TensorView &stacked, int64_t local) {
  const Shape matrix{stacked.shape[1], stacked.shape[2]};
  auto *base = static_cast<std::byte *>(stacked.data);
  return {base + local * numElements(matrix) * dtypeSize(stacked.dtype), stacked.dtype, matrix};
}

TensorView rowRange(const TensorView &matrix, int64_t first, int64_t count) {
  const int64_t width = matrix.shape[1];
  auto *base = static_cast<std::byte *>(matrix.data);
  return {base + first * width * dtypeSize(matrix.dtype), matrix.dtype, {count, width}};
}

Status moeActivation(const std::string &name, UnaryOp &op) {
  const std::optional<UnaryOp> found = unaryOpFromName(name);
  if (!found || (*found != UnaryOp::Silu && *found != UnaryOp::Gelu &&
                 *found != UnaryOp::GeluTanh && *found != UnaryOp::Relu))
    return fail("moe_experts",
                "activation '" + name + "' is not one of silu, gelu, gelu_tanh, relu");
  op = *found;
  return Status::success();
}

Status checkMoeCombine(const MoeGroup &group, const TensorView &out, const TensorView &routing,
                       const TensorView &indices, const TensorView &gates, const TensorView &y) {
  const char *op = "moe_combine";
  SHARDC_KERNEL_TRY(checkMoeGroup(op, group));
  SHARDC_KERNEL_TRY(checkFloatMatrix(op, "rows", out));
  SHARDC_KERNEL_TRY(checkRouting(op, group, routing));
  SHARDC_KERNEL_TRY(checkTensor(op, "result", y));
  SHARDC_KERNEL_TRY(checkDType(op, "result", y, out.dtype));
  if (y.shape.size() != 2 || y.shape[1] != out.shape[1])
    return fail(op,
                "result must be [T, " + std::to_string(out.shape[1]) + "] but got " + str(y.shape));
  SHARDC_KERNEL_TRY(checkIndices(op, indices, y.shape[0]));
  SHARDC_KERNEL_TRY(checkTensor(op, "gates", gates));
  SHARDC_KERNEL_TRY(checkDType(op, "gates", gates, out.dtype));
  return checkShape(op, "gates", gates, indices.shape);
}

std::vector<size_t> rowBlockBytes(const std::vector<int64_t> &rows, size_t rowBytes) {
  std::vector<size_t> bytes(rows.size());
  for (size_t m = 0; m < rows.size(); ++m)
    bytes[m] = size_t(rows[m]) * rowBytes;
  return bytes;
}

} // namespace shardc::rt::kernels
