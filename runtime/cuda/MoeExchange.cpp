//===- MoeExchange.cpp - moe_dispatch and moe_combine on a GPU ------------===//
//
// The host decides, the device moves rows. Dispatch: indices to the host,
// the counts all-gathered, the keep rule and layout of the contract; then
// every row of the result is one row gather (a list of source rows, -1 for
// zeros): x into `rows` when nothing moves, else x into this member's own
// entries, the all-to-all-v, and the received blocks into `rows`. Combine
// runs the same layout backwards: `out`'s rows gathered into send order,
// the all-to-all-v, and the gate-weighted sum over the positions the
// contract gives each (token, slot).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Moe.h"

#include "runtime/cuda/CudaStatus.h"
#include "runtime/cuda/HostValues.h"
#include "runtime/cuda/StreamGroup.h"
#include "runtime/cuda/StreamScratch.h"
#include "runtime/kernels/MoeCall.h"

#include <optional>
#include <vector>

namespace shardc::rt::cuda {

using namespace detail;

namespace {

constexpr const char *kDispatch = "moe_dispatch";
constexpr const char *kCombine = "moe_combine";

/// Whether the entries move between members; otherwise this member's own
/// entries are laid out as `rows` is.
bool moves(const MoeGroup &group) { return group.exchange && group.members > 1; }

size_t rowBytesOf(const TensorView &matrix) {
  return size_t(matrix.shape[1]) * dtypeSize(matrix.dtype);
}

Status gatherRows(const char *op, void *out, int64_t rows, const void *in, const std::byte *source,
                  size_t rowBytes, cudaStream_t stream) {
  if (!rows || !rowBytes)
    return Status::success();
  RowGatherArgs args;
  args.out = out;
  args.in = in;
  args.source = reinterpret_cast<const int64_t *>(source);
  args.rows = rows;
  args.rowBytes = int64_t(rowBytes);
  launchRowGather(args, stream);
  return launchStatus(op);
}

/// The all-to-all-v of `rowsTo[d]` rows to each member d and `rowsFrom[q]`
/// from each member q.
Status exchangeRows(StreamGroup &group, const void *in, const std::vector<int64_t> &rowsTo,
                    void *out, const std::vector<int64_t> &rowsFrom, size_t rowBytes) {
  std::vector<size_t> sendBytes = kernels::rowBlockBytes(rowsTo, rowBytes);
  std::vector<size_t> recvBytes = kernels::rowBlockBytes(rowsFrom, rowBytes);
  return group.allToAllV(in, sendBytes.data(), out, recvBytes.data());
}

} // namespace

Status moeDispatch(const KernelCall &call, const LaunchContext &context) {
  SHARDC_KERNEL_TRY(expectOperands(call, 2, 2, 2));
  const MoeGroup group = moeGroupOf(call);
  const TensorView &x = call.inputs[0], &indices = call.inputs[1];
  const TensorView &rows = call.outputs[0], &routing = call.outputs[1];
  SHARDC_KERNEL_TRY(checkMoeDispatch(group, x, indices, rows, routing));
  SHARDC_KERNEL_TRY(rejectFloat64(kDispatch, x));
  if (context.checkOnly)
    return Status::success();
  cudaStream_t stream = context.stream;
  const int64_t tokens = x.shape[0], slots = indices.shape[1], rowCount = rows.shape[0];

  std::vector<int64_t> index;
  SHARDC_KERNEL_TRY(copyValuesToHost(indices, index, stream));
  SHARDC_CUDA_TRY(cudaStreamSynchronize(stream));
  std::vector<int64_t> own(group.experts), counts(group.sources() * group.experts);
  SHARDC_KERNEL_TRY(countEntries(kDispatch, group, index.data(), tokens, slots, own.data()));
  std::optional<StreamGroup> exchange;
  if (moves(group)) {
    exchange.emplace(*call.communicator, stream);
    SHARDC_KERNEL_TRY(
        exchange->allGatherOnHost(own.data(), counts.data(), own.size() * sizeof(int64_t)));
  } else {
    counts = own;
  }
  std::vector<int64_t> kept(counts.size());
  keepRule(group, counts.data(), kept.data());
  if (call.counters)
    moeLoad(group, counts.data(), kept.data(), *call.counters);
  MoeLayout layout;
  SHARDC_KERNEL_TRY(makeMoeLayout(kDispatch, group, kept.data(), rowCount, layout));
  std::vector<int64_t> positions;
  SHARDC_KERNEL_TRY(placeEntries(kDispatch, group, layout, index.data(), tokens, slots, positions));

  // The token of each of this member's own entries, and where each row of
  // `rows` comes from: an own entry, or the exchange buffer's row.
  std::vector<int64_t> ownSource(layout.ownRows), rowSource;
  for (int64_t i = 0; i < tokens * slots; ++i)
    if (positions[i] >= 0)
      ownSource[positions[i]] = i / slots;
  if (moves(group)) {
    rowSource.assign(rowCount, -1);
    const std::vector<int64_t> rowOfPacked = rowsOfPacked(group, layout);
    for (int64_t packed = 0; packed < layout.usedRows(); ++packed)
      rowSource[rowOfPacked[packed]] = packed;
  } else { // the own entries are `rows` itself
    rowSource = std::move(ownSource);
    rowSource.resize(rowCount, -1);
    ownSource.clear();
  }

  const size_t rowBytes = rowBytesOf(x);
  ScratchPieces pieces;
  const size_t rowSourceAt = pieces.add(rowSource.size() * sizeof(int64_t));
  const size_t ownSourceAt = pieces.add(ownSource.size() * sizeof(int64_t));
  const size_t ownRowsAt = pieces.add(moves(group) ? layout.ownRows * rowBytes : 0);
  const size_t packedAt = pieces.add(moves(group) ? layout.usedRows() * rowBytes : 0);
  auto scratch = deviceScratch(stream, pieces.total());
  if (!scratch)
    return scratch.status();
  std::byte *base = *scratch;
  SHARDC_KERNEL_TRY(uploadValues(
      {{&kept, routing.data}, {&rowSource, base + rowSourceAt}, {&ownSource, base + ownSourceAt}},
      stream));

  const void *gatherFrom = x.data;
  if (moves(group)) {
    SHARDC_KERNEL_TRY(gatherRows(kDispatch, base + ownRowsAt, layout.ownRows, x.data,
                                 base + ownSourceAt, rowBytes, stream));
    SHARDC_KERNEL_TRY(exchangeRows(*exchange, base + ownRowsAt, layout.ownRowsTo, base + packedAt,
                                   layout.sourceRows, rowBytes));
    gatherFrom = base + packedAt;
  }
  // Every row of `rows`, the unused ones zeroed.
  return gatherRows(kDispatch, rows.data, rowCount, gatherFrom, base + rowSourceAt, rowBytes,
                    stream);
}

Status moeCombine(const KernelCall &call, const LaunchContext &context) {
  SHARDC_KERNEL_TRY(expectOperands(call, 4, 4, 1));
  const MoeGroup group = moeGroupOf(call);
  const TensorView &out = call.inputs[0], &routing = call.inputs[1];
  const TensorView &indices = call.inputs[2], &gates = call.inputs[3], &y = call.outputs[0];
  SHARDC_KERNEL_TRY(checkMoeCombine(group, out, routing, indices, gates, y));
  SHARDC_KERNEL_TRY(rejectFloat64(kCombine, out));
  if (context.checkOnly)
    return Status::success();
  cudaStream_t stream = context.stream;
  const int64_t tokens = y.shape[0], slots = indices.shape[1];

  std::vector<int64_t> kept, index;
  SHARDC_KERNEL_TRY(copyValuesToHost(routing, kept, stream));
  SHARDC_KERNEL_TRY(copyValuesToHost(indices, index, stream));
  SHARDC_CUDA_TRY(cudaStreamSynchronize(stream));
  MoeLayout layout;
  SHARDC_KERNEL_TRY(makeMoeLayout(kCombine, group, kept.data(), out.shape[0], layout));
  std::vector<int64_t> positions;
  SHARDC_KERNEL_TRY(placeEntries(kCombine, group, layout, index.data(), tokens, slots, positions));

  const size_t rowBytes = rowBytesOf(out);
  const std::vector<int64_t> rowOfPacked =
      moves(group) ? rowsOfPacked(group, layout) : std::vector<int64_t>();
  ScratchPieces pieces;
  const size_t positionsAt = pieces.add(positions.size() * sizeof(int64_t));
  const size_t rowOfPackedAt = pieces.add(rowOfPacked.size() * sizeof(int64_t));
  const size_t packedAt = pieces.add(moves(group) ? layout.usedRows() * rowBytes : 0);
  const size_t ownRowsAt = pieces.add(moves(group) ? layout.ownRows * rowBytes : 0);
  auto scratch = deviceScratch(stream, pieces.total());
  if (!scratch)
    return scratch.status();
  std::byte *base = *scratch;
  SHARDC_KERNEL_TRY(uploadValues(
      {{&positions, base + positionsAt}, {&rowOfPacked, base + rowOfPackedAt}}, stream));

  // This member's own entries, back from their experts' owners.
  const void *own = out.data;
  if (moves(group)) {
    SHARDC_KERNEL_TRY(gatherRows(kCombine, base + packedAt, layout.usedRows(), out.data,
                                 base + rowOfPackedAt, rowBytes, stream));
    StreamGroup exchange(*call.communicator, stream);
    SHARDC_KERNEL_TRY(exchangeRows(exchange, base + packedAt, layout.sourceRows, base + ownRowsAt,
                                   layout.ownRowsTo, rowBytes));
    own = base + ownRowsAt;
  }
  if (y.numel() == 0)
    return Status::success();
  WeightedSumArgs args;
  args.y = y.data;
  args.own = own;
  args.gates = gates.data;
  args.positions = reinterpret_cast<const int64_t *>(base + positionsAt);
  args.dtype = y.dtype;
  args.tokens = tokens;
  args.slots = slots;
  args.hidden = y.shape[1];
  launchWeightedSum(args, stream);
  return launchStatus(kCombine);
}

} // namespace shardc::rt::cuda
