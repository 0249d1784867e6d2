//===- MoeExchange.cpp - moe_dispatch and moe_combine on the CPU ----------===//
//
// Dispatch: count this member's entries per expert, all-gather the counts,
// apply the keep rule (the routing matrix, the same on every member), copy
// the kept entries' token rows sorted by expert and send each member its
// experts' rows with one all-to-all-v. Combine runs the same layout
// backwards and adds up each token's rows, weighted by their gates. Without
// exchange (or with a group of one) this member's own entries are `rows`
// itself, so nothing is copied twice.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Moe.h"

#include "runtime/core/Communicator.h"
#include "runtime/cpu/KernelSupport.h"
#include "runtime/cpu/Parallel.h"
#include "runtime/kernels/MoeCall.h"

#include <cstring>
#include <vector>

namespace shardc::rt::cpu {
namespace {

using namespace detail;
using kernels::MoeGroup;
using kernels::MoeLayout;
using Bytes = std::vector<std::byte>;

std::byte *bytesOf(const TensorView &view) { return static_cast<std::byte *>(view.data); }

/// Whether the entries move between members; otherwise this member's own
/// entries are laid out as `rows` is.
bool moves(const MoeGroup &group) { return group.exchange && group.members > 1; }

/// Between the rows of `rows` (by local expert, then source) and the
/// exchange buffer (by source, then local expert): `toPacked` picks the
/// direction.
void repack(const MoeGroup &group, const MoeLayout &layout, std::byte *rows, std::byte *packed,
            size_t rowBytes, bool toPacked) {
  const int64_t sources = group.sources(), local = group.localExperts();
  for (int64_t q = 0; q < sources; ++q)
    for (int64_t l = 0; l < local; ++l) {
      std::byte *inRows = rows + layout.blockStart[l * sources + q] * rowBytes;
      std::byte *inPacked = packed + layout.packedStart[q * local + l] * rowBytes;
      const size_t bytes = layout.kept[q * group.experts + group.firstLocal() + l] * rowBytes;
      if (bytes)
        std::memcpy(toPacked ? inPacked : inRows, toPacked ? inRows : inPacked, bytes);
    }
}

/// The all-to-all-v of `rowsTo[d]` rows to each member d and `rowsFrom[q]`
/// from each member q.
Status exchangeRows(Communicator &group, const std::byte *in, const std::vector<int64_t> &rowsTo,
                    std::byte *out, const std::vector<int64_t> &rowsFrom, size_t rowBytes) {
  std::vector<size_t> sendBytes = kernels::rowBlockBytes(rowsTo, rowBytes);
  std::vector<size_t> recvBytes = kernels::rowBlockBytes(rowsFrom, rowBytes);
  return group.allToAllV(in, sendBytes.data(), out, recvBytes.data());
}

void zeroRowsFrom(const TensorView &rows, int64_t first) {
  const size_t rowBytes = size_t(rows.shape[1]) * dtypeSize(rows.dtype);
  std::memset(bytesOf(rows) + first * rowBytes, 0, (rows.shape[0] - first) * rowBytes);
}

/// y[t] = sum over slots j, in order, of gates[t, j] * own[positions[t, j]]
/// (skipping the entries not here), accumulated in the compute type.
template <typename T>
void weightedSum(const std::byte *own, const std::vector<int64_t> &positions,
                 const TensorView &gates, const TensorView &y) {
  using C = ComputeT<T>;
  const int64_t tokens = y.shape[0], hidden = y.shape[1], slots = gates.shape[1];
  const T *gate = gates.as<const T>();
  const T *rows = reinterpret_cast<const T *>(own);
  T *result = y.as<T>();
  parallelFor(tokens, slots * hidden, [&](int64_t begin, int64_t end) {
    std::vector<C> sum(hidden);
    for (int64_t t = begin; t < end; ++t) {
      std::fill(sum.begin(), sum.end(), C(0));
      for (int64_t j = 0; j < slots; ++j) {
        const int64_t row = positions[t * slots + j];
        if (row < 0)
          continue;
        const C g = load(gate[t * slots + j]);
        const T *values = rows + row * hidden;
        for (int64_t h = 0; h < hidden; ++h)
          sum[h] += g * load(values[h]);
      }
      for (int64_t h = 0; h < hidden; ++h)
        result[t * hidden + h] = store<T>(sum[h]);
    }
  });
}

} // namespace

namespace moe {

Status dispatch(const KernelCall &call) {
  const char *op = "moe_dispatch";
  SHARDC_KERNEL_TRY(expectOperands(call, 2, 2, 2));
  const MoeGroup group = kernels::moeGroupOf(call);
  const TensorView &x = call.inputs[0], &indices = call.inputs[1];
  const TensorView &rows = call.outputs[0], &routing = call.outputs[1];
  SHARDC_KERNEL_TRY(kernels::checkMoeDispatch(group, x, indices, rows, routing));
  const int64_t tokens = x.shape[0], slots = indices.shape[1];
  const int64_t *index = indices.as<const int64_t>();

  std::vector<int64_t> counts(group.sources() * group.experts);
  std::vector<int64_t> own(group.experts);
  SHARDC_KERNEL_TRY(kernels::countEntries(op, group, index, tokens, slots, own.data()));
  if (moves(group))
    SHARDC_KERNEL_TRY(
        call.communicator->allGather(own.data(), counts.data(), own.size() * sizeof(int64_t)));
  else
    counts = own;
  kernels::keepRule(group, counts.data(), routing.as<int64_t>());
  if (call.counters)
    kernels::moeLoad(group, counts.data(), routing.as<const int64_t>(), *call.counters);
  MoeLayout layout;
  SHARDC_KERNEL_TRY(
      kernels::makeMoeLayout(op, group, routing.as<const int64_t>(), rows.shape[0], layout));
  std::vector<int64_t> positions;
  SHARDC_KERNEL_TRY(kernels::placeEntries(op, group, layout, index, tokens, slots, positions));

  // Each kept entry's token row, at its place among this member's own entries.
  const size_t rowBytes = size_t(x.shape[1]) * dtypeSize(x.dtype);
  Bytes ownRows(moves(group) ? layout.ownRows * rowBytes : 0);
  std::byte *ownBase = moves(group) ? ownRows.data() : bytesOf(rows);
  parallelFor(tokens * slots, int64_t(rowBytes / 4), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      if (positions[i] >= 0)
        std::memcpy(ownBase + positions[i] * rowBytes, bytesOf(x) + (i / slots) * rowBytes,
                    rowBytes);
  });
  if (moves(group)) {
    Bytes packed(layout.usedRows() * rowBytes);
    SHARDC_KERNEL_TRY(exchangeRows(*call.communicator, ownRows.data(), layout.ownRowsTo,
                                   packed.data(), layout.sourceRows, rowBytes));
    repack(group, layout, bytesOf(rows), packed.data(), rowBytes, /*toPacked=*/false);
  }
  zeroRowsFrom(rows, layout.usedRows());
  return Status::success();
}

Status combine(const KernelCall &call) {
  const char *op = "moe_combine";
  SHARDC_KERNEL_TRY(expectOperands(call, 4, 4, 1));
  const MoeGroup group = kernels::moeGroupOf(call);
  const TensorView &out = call.inputs[0], &routing = call.inputs[1];
  const TensorView &indices = call.inputs[2], &gates = call.inputs[3], &y = call.outputs[0];
  SHARDC_KERNEL_TRY(kernels::checkMoeCombine(group, out, routing, indices, gates, y));
  MoeLayout layout;
  SHARDC_KERNEL_TRY(
      kernels::makeMoeLayout(op, group, routing.as<const int64_t>(), out.shape[0], layout));
  std::vector<int64_t> positions;
  SHARDC_KERNEL_TRY(kernels::placeEntries(op, group, layout, indices.as<const int64_t>(),
                                          y.shape[0], indices.shape[1], positions));

  // This member's own entries, back from their experts' owners.
  const size_t rowBytes = size_t(out.shape[1]) * dtypeSize(out.dtype);
  Bytes ownRows;
  const std::byte *own = bytesOf(out);
  if (moves(group)) {
    Bytes packed(layout.usedRows() * rowBytes);
    repack(group, layout, bytesOf(out), packed.data(), rowBytes, /*toPacked=*/true);
    ownRows.resize(layout.ownRows * rowBytes);
    SHARDC_KERNEL_TRY(exchangeRows(*call.communicator, packed.data(), layout.sourceRows,
                                   ownRows.data(), layout.ownRowsTo, rowBytes));
    own = ownRows.data();
  }
  dispatchFloat(out.dtype, [&](auto tag) { weightedSum<decltype(tag)>(own, positions, gates, y); });
  return Status::success();
}

} // namespace moe

void addMoeKernels(KernelTable &table) {
  table.add("moe_dispatch", moe::dispatch);
  table.add("moe_experts", moe::experts);
  table.add("moe_combine", moe::combine);
}

} // namespace shardc::rt::cpu
