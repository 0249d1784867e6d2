//===- MoeExperts.cpp - moe_experts on a GPU ------------------------------===//
//
// The routing matrix comes to the host for the segments' lengths; then each
// local expert's segment of rows runs through its MLP with the CUDA linear
// (cuBLASLt, fp32 accumulation), unary and mul kernels on views of the
// segment: GEMMs of the segment's length, not R, and F16/BF16 rounded
// between the steps as the unfused graph ops (and the CPU kernel) do. The
// two [segment, F] intermediates live in the stream's scratch, sized for
// the longest segment.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Moe.h"

#include "runtime/cuda/CudaStatus.h"
#include "runtime/cuda/Elementwise.h"
#include "runtime/cuda/HostValues.h"
#include "runtime/cuda/MatMul.h"
#include "runtime/cuda/StreamScratch.h"
#include "runtime/kernels/MoeCall.h"

namespace shardc::rt::cuda {

using namespace detail;

Status moeExperts(const KernelCall &call, const LaunchContext &context) {
  const char *op = "moe_experts";
  MoeExpertsCall decoded;
  SHARDC_KERNEL_TRY(decodeMoeExperts(call, decoded));
  const MoeGroup group = moeGroupOf(call);
  const bool transposed = decoded.transposeWeights;
  const TensorView &rows = *decoded.rows, &out = *decoded.out;
  MoeExpertDims dims;
  SHARDC_KERNEL_TRY(checkMoeExperts(group, rows, *decoded.routing, decoded.gate, *decoded.up,
                                    *decoded.down, transposed, out, dims));
  SHARDC_KERNEL_TRY(rejectFloat64(op, rows));
  if (context.checkOnly)
    return Status::success();
  cudaStream_t stream = context.stream;

  std::vector<int64_t> kept;
  SHARDC_KERNEL_TRY(copyValuesToHost(*decoded.routing, kept, stream));
  SHARDC_CUDA_TRY(cudaStreamSynchronize(stream));
  MoeLayout layout;
  SHARDC_KERNEL_TRY(makeMoeLayout(op, group, kept.data(), dims.rows, layout));

  ScratchPieces pieces;
  const size_t intermediate = size_t(layout.longestSegment() * dims.ffn) * dtypeSize(rows.dtype);
  const size_t upAt = pieces.add(intermediate);
  const size_t gateAt = pieces.add(decoded.gated ? intermediate : 0);
  auto scratch = deviceScratch(stream, pieces.total());
  if (!scratch)
    return scratch.status();

  for (int64_t l = 0; l < group.localExperts(); ++l) {
    const int64_t length = layout.segmentRows(l);
    if (length == 0)
      continue;
    const TensorView in = rowRange(rows, layout.segmentStart[l], length);
    const TensorView hidden{*scratch + upAt, rows.dtype, {length, dims.ffn}};
    SHARDC_KERNEL_TRY(
        linear(in, expertMatrix(*decoded.up, l), nullptr, transposed, hidden, context));
    if (decoded.gated) {
      const TensorView gateHidden{*scratch + gateAt, rows.dtype, {length, dims.ffn}};
      SHARDC_KERNEL_TRY(
          linear(in, expertMatrix(*decoded.gate, l), nullptr, transposed, gateHidden, context));
      SHARDC_KERNEL_TRY(unary(decoded.activation, gateHidden, gateHidden, context));
      SHARDC_KERNEL_TRY(binary(BinaryOp::Mul, gateHidden, hidden, hidden, context));
    } else {
      SHARDC_KERNEL_TRY(unary(decoded.activation, hidden, hidden, context));
    }
    SHARDC_KERNEL_TRY(linear(hidden, expertMatrix(*decoded.down, l), nullptr, transposed,
                             rowRange(out, layout.segmentStart[l], length), context));
  }
  const TensorView unused = rowRange(out, layout.usedRows(), dims.rows - layout.usedRows());
  if (unused.numel())
    SHARDC_CUDA_TRY(cudaMemsetAsync(unused.data, 0, unused.bytes(), stream));
  return Status::success();
}

} // namespace shardc::rt::cuda
