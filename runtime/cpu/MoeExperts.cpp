//===- MoeExperts.cpp - moe_experts on the CPU ----------------------------===//
//
// Each local expert's segment of rows through its MLP with the linear,
// unary and mul kernels: GEMMs of the segment's length (not R), the
// activation in place, in the rows' storage type as the unfused graph ops
// would compute it. Scratch for two [segment, F] matrices, sized once for
// the longest segment.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Moe.h"

#include "runtime/cpu/Elementwise.h"
#include "runtime/cpu/MatMul.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace shardc::rt::cpu::moe {
namespace {

using kernels::MoeExpertDims;

/// Expert `local`'s matrix of a stacked weight [E_l, a, b].
TensorView expertMatrix(const TensorView &stacked, int64_t local) {
  const Shape matrix{stacked.shape[1], stacked.shape[2]};
  auto *base = static_cast<std::byte *>(stacked.data);
  return {base + local * numElements(matrix) * dtypeSize(stacked.dtype), stacked.dtype, matrix};
}

/// Rows [first, first + count) of a [R, width] matrix.
TensorView rowRange(const TensorView &matrix, int64_t first, int64_t count) {
  const int64_t width = matrix.shape[1];
  auto *base = static_cast<std::byte *>(matrix.data);
  return {base + first * width * dtypeSize(matrix.dtype), matrix.dtype, {count, width}};
}

} // namespace

Status experts(const KernelCall &call) {
  const char *op = "moe_experts";
  const bool gated = call.params.flag("gated", false);
  const size_t weights = gated ? 3 : 2;
  if (call.inputs.size() != 2 + weights || call.outputs.size() != 1)
    return kernels::fail(op, std::string(gated ? "gated" : "ungated") +
                                 " takes rows, routing and " + std::to_string(weights) +
                                 " weights to one result; got " +
                                 std::to_string(call.inputs.size()) + " inputs and " +
                                 std::to_string(call.outputs.size()) + " outputs");
  const std::vector<std::string> &activationName = call.params.strings("activation");
  UnaryOp activation;
  SHARDC_KERNEL_TRY(
      kernels::moeActivation(activationName.size() == 1 ? activationName[0] : "", activation));
  const bool transposed = call.params.flag("transpose_weights", false);
  const kernels::MoeGroup group = groupOf(call);
  const TensorView &rows = call.inputs[0], &routing = call.inputs[1];
  const TensorView *gate = gated ? &call.inputs[2] : nullptr;
  const TensorView &up = call.inputs[gated ? 3 : 2], &down = call.inputs[gated ? 4 : 3];
  const TensorView &out = call.outputs[0];
  MoeExpertDims dims;
  SHARDC_KERNEL_TRY(
      kernels::checkMoeExperts(group, rows, routing, gate, up, down, transposed, out, dims));
  kernels::MoeLayout layout;
  SHARDC_KERNEL_TRY(
      kernels::makeMoeLayout(op, group, routing.as<const int64_t>(), dims.rows, layout));

  int64_t longest = 0;
  for (int64_t l = 0; l < group.localExperts(); ++l)
    longest = std::max(longest, layout.segmentRows(l));
  const size_t scratchBytes = size_t(longest * dims.ffn) * dtypeSize(rows.dtype);
  std::vector<std::byte> upScratch(scratchBytes), gateScratch(gated ? scratchBytes : 0);

  for (int64_t l = 0; l < group.localExperts(); ++l) {
    const int64_t length = layout.segmentRows(l);
    if (length == 0)
      continue;
    const TensorView in = rowRange(rows, layout.segmentStart[l], length);
    const TensorView hidden{upScratch.data(), rows.dtype, {length, dims.ffn}};
    SHARDC_KERNEL_TRY(linear(in, expertMatrix(up, l), nullptr, transposed, hidden));
    if (gated) {
      const TensorView gateHidden{gateScratch.data(), rows.dtype, {length, dims.ffn}};
      SHARDC_KERNEL_TRY(linear(in, expertMatrix(*gate, l), nullptr, transposed, gateHidden));
      SHARDC_KERNEL_TRY(unary(activation, gateHidden, gateHidden));
      SHARDC_KERNEL_TRY(mul(gateHidden, hidden, hidden));
    } else {
      SHARDC_KERNEL_TRY(unary(activation, hidden, hidden));
    }
    SHARDC_KERNEL_TRY(linear(hidden, expertMatrix(down, l), nullptr, transposed,
                             rowRange(out, layout.segmentStart[l], length)));
  }
  const TensorView unused = rowRange(out, layout.usedRows(), dims.rows - layout.usedRows());
  if (unused.numel())
    std::memset(unused.data, 0, unused.bytes());
  return Status::success();
}

} // namespace shardc::rt::cpu::moe
