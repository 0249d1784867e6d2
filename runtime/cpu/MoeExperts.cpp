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
#include "runtime/kernels/MoeCall.h"

#include <cstring>
#include <vector>

namespace shardc::rt::cpu::moe {
using kernels::expertMatrix;
using kernels::MoeExpertDims;
using kernels::rowRange;

Status experts(const KernelCall &call) {
  const char *op = "moe_experts";
  kernels::MoeExpertsCall decoded;
  SHARDC_KERNEL_TRY(kernels::decodeMoeExperts(call, decoded));
  const kernels::MoeGroup group = kernels::moeGroupOf(call);
  const bool gated = decoded.gated, transposed = decoded.transposeWeights;
  const TensorView &rows = *decoded.rows, &routing = *decoded.routing;
  const TensorView *gate = decoded.gate;
  const TensorView &up = *decoded.up, &down = *decoded.down, &out = *decoded.out;
  MoeExpertDims dims;
  SHARDC_KERNEL_TRY(
      kernels::checkMoeExperts(group, rows, routing, gate, up, down, transposed, out, dims));
  kernels::MoeLayout layout;
  SHARDC_KERNEL_TRY(
      kernels::makeMoeLayout(op, group, routing.as<const int64_t>(), dims.rows, layout));

  const size_t scratchBytes = size_t(layout.longestSegment() * dims.ffn) * dtypeSize(rows.dtype);
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
      SHARDC_KERNEL_TRY(unary(decoded.activation, gateHidden, gateHidden));
      SHARDC_KERNEL_TRY(mul(gateHidden, hidden, hidden));
    } else {
      SHARDC_KERNEL_TRY(unary(decoded.activation, hidden, hidden));
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
