//===- Moe.h - the routed-experts kernels' contract -------------*- C++ -*-===//
//
// moe_dispatch, moe_experts and moe_combine (docs/experts.md) on every
// backend: their operand checks, the keep rule, and where every entry's row
// lies. Plain arithmetic on host values: a backend gathers the counts and
// moves the rows, this says which rows and where, so that every backend
// places them alike.
//
// Three buffers of rows appear (a row is H elements):
//  - `rows`, this member's experts' entries: local expert by local expert,
//    within one source member by source member (the kernels' operand);
//  - the exchange buffer, the same rows packed by source member, then local
//    expert: what the all-to-all-v delivers (dispatch) or sends (combine);
//  - this member's own entries, sorted by expert, then (token, slot): what
//    it sends (dispatch) or gets back (combine). Without exchange it is
//    `rows` itself (one source, this member's experts only).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_KERNELS_MOE_H
#define SHARDC_RUNTIME_KERNELS_MOE_H

#include "runtime/core/Tensor.h"
#include "runtime/kernels/Operands.h"
#include "runtime/kernels/Ops.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace shardc::rt::kernels {

/// The parameters the three kernels share, and the group they run on.
struct MoeGroup {
  int64_t experts = 0;         ///< E, over the whole group
  bool exchange = false;       ///< tokens split over the group (else replicated)
  int64_t capacity = 0;        ///< kept entries per expert over the group; 0: all
  int members = 1, member = 0; ///< P and p (1 and 0 without a group)

  int64_t localExperts() const { return experts / members; }
  int64_t firstLocal() const { return member * localExperts(); }
  /// Q, the rows of the routing matrix: one per member with exchange.
  int64_t sources() const { return exchange ? members : 1; }
  /// This member's row of the routing matrix (its own entries).
  int64_t ownSource() const { return exchange ? member : 0; }
  /// The experts this member's own entries are sorted over: every expert
  /// with exchange (they travel to their owners), its own ones without.
  int64_t ownFirst() const { return exchange ? 0 : firstLocal(); }
  int64_t ownEnd() const { return exchange ? experts : firstLocal() + localExperts(); }
};

/// E >= 1 and a multiple of P, capacity >= 0.
Status checkMoeGroup(const char *op, const MoeGroup &group);

/// counts[e] (E of them): the entries of `indices` [tokens, slots] with
/// expert e. Fails on an expert outside [0, E) or one a token names twice.
Status countEntries(const char *op, const MoeGroup &group, const int64_t *indices, int64_t tokens,
                    int64_t slots, int64_t *counts);

/// The keep rule: kept[q][e] from count[q][e], both [Q, E].
void keepRule(const MoeGroup &group, const int64_t *count, int64_t *kept);

/// The load of one dispatch, for a profile (the type of the executor's
/// StepCounters): "kept_e<e>" per expert, the entries of the whole group it
/// keeps, then "dropped", those the capacity turned away, and "sent_rows",
/// this member's kept entries that leave it for another member's experts
/// (the rows each all-to-all moves out of it). `count` and `kept` are [Q, E].
void moeLoad(const MoeGroup &group, const int64_t *count, const int64_t *kept,
             std::vector<std::pair<std::string, int64_t>> &counters);

/// Where the rows of a routing matrix lie, all in rows.
struct MoeLayout {
  std::vector<int64_t> kept; ///< the routing matrix [Q, E]
  /// In `rows`: the first row of local expert l ([E_l + 1], the last entry
  /// the rows in use) and of its block from source q ([l * Q + q]).
  std::vector<int64_t> segmentStart, blockStart;
  /// In the exchange buffer: the first row of source q's block of local
  /// expert l ([q * E_l + l]) and the rows of each source ([Q]).
  std::vector<int64_t> packedStart, sourceRows;
  /// In this member's own entries: the first row of expert e ([E], for
  /// ownFirst() <= e < ownEnd()), the rows for each member's experts ([P]
  /// with exchange) and in all.
  std::vector<int64_t> ownStart, ownRowsTo;
  int64_t ownRows = 0;

  int64_t usedRows() const { return segmentStart.back(); }
  int64_t segmentRows(int64_t local) const { return segmentStart[local + 1] - segmentStart[local]; }
  /// The most rows of one local expert: what its MLP's intermediates need.
  int64_t longestSegment() const;
};

/// The layout of `routing` (the [Q, E] matrix, host memory), checked: no
/// negative entry, and its rows fit in `capacityRows` (R).
Status makeMoeLayout(const char *op, const MoeGroup &group, const int64_t *routing,
                     int64_t capacityRows, MoeLayout &layout);

/// rowsOfPacked[i] (usedRows() of them): the row of `rows` that row i of
/// the exchange buffer is, so that a backend can repack with one gather.
std::vector<int64_t> rowsOfPacked(const MoeGroup &group, const MoeLayout &layout);

/// The bytes of `rows[m]` rows of `rowBytes` each, per member m: the block
/// sizes of an all-to-all-v of rows.
std::vector<size_t> rowBlockBytes(const std::vector<int64_t> &rows, size_t rowBytes);

/// positions[t * slots + j]: the row of entry (t, j) among this member's own
/// entries, or -1 when the entry is dropped (or, without exchange, is
/// another member's). Checks every expert of `indices`.
Status placeEntries(const char *op, const MoeGroup &group, const MoeLayout &layout,
                    const int64_t *indices, int64_t tokens, int64_t slots,
                    std::vector<int64_t> &positions);

/// moe_dispatch: x float [T, H], indices int64 [T, k], rows [R, H] of x's
/// type with R at least the worst case (docs/experts.md), routing int64
/// [Q, E].
Status checkMoeDispatch(const MoeGroup &group, const TensorView &x, const TensorView &indices,
                        const TensorView &rows, const TensorView &routing);

/// moe_experts' sizes: R rows of H, F the experts' hidden size.
struct MoeExpertDims {
  int64_t rows = 0, hidden = 0, ffn = 0;
};
/// moe_experts: rows float [R, H], routing int64 [Q, E], the weights of
/// rows' type, [E_l, H, F] for gate and up and [E_l, F, H] for down (the
/// last two dims swapped with transposeWeights), out of rows' type and
/// shape. `gate` is null for an ungated MLP.
Status checkMoeExperts(const MoeGroup &group, const TensorView &rows, const TensorView &routing,
                       const TensorView *gate, const TensorView &up, const TensorView &down,
                       bool transposeWeights, const TensorView &out, MoeExpertDims &dims);

/// Expert `local`'s matrix [a, b] of a stacked weight [E_l, a, b].
TensorView expertMatrix(const TensorView &stacked, int64_t local);

/// Rows [first, first + count) of a [R, width] matrix.
TensorView rowRange(const TensorView &matrix, int64_t first, int64_t count);

/// The `activation` parameter: silu, gelu, gelu_tanh or relu.
Status moeActivation(const std::string &name, UnaryOp &op);

/// moe_combine: out float [R, H], routing int64 [Q, E], indices int64
/// [T, k], gates of out's type [T, k], y of out's type [T, H].
Status checkMoeCombine(const MoeGroup &group, const TensorView &out, const TensorView &routing,
                       const TensorView &indices, const TensorView &gates, const TensorView &y);

} // namespace shardc::rt::kernels

#endif // SHARDC_RUNTIME_KERNELS_MOE_H
