//===- Attention.cpp - scaled dot-product attention: host side ------------===//
#include "runtime/cuda/Attention.h"

#include "runtime/cuda/CudaStatus.h"

namespace shardc::rt::cuda {

using namespace detail;

Status attention(const TensorView &query, const TensorView &key, const TensorView &value,
                 const TensorView *mask, double scale, bool causal, const TensorView &out,
                 const LaunchContext &context) {
  const char *name = "attention";
  AttentionDims dims;
  SHARDC_KERNEL_TRY(checkAttention(query, key, value, out, rejectFloat64, dims));
  const size_t rank = query.shape.size();
  AttentionArgs args;
  args.headsQ = dims.headsQ;
  args.seqQ = dims.seqQ;
  args.headDim = dims.headDim;
  args.seqK = dims.seqK;
  args.valueDim = dims.valueDim;
  if (args.headDim > kMaxHeadSize || args.valueDim > kMaxHeadSize)
    return fail(name, "head sizes above " + std::to_string(kMaxHeadSize) +
                          " are not supported by the CUDA backend; got " +
                          std::to_string(args.headDim) + " and " + std::to_string(args.valueDim));
  if (mask) {
    Shape strides;
    SHARDC_KERNEL_TRY(checkAttentionMask(query, *mask, dims, strides));
    // The (batch..., head) dims of the scores with the mask's strides.
    Shape heads = dims.batchShape;
    heads.push_back(dims.headsQ);
    const Shape headStrides(strides.begin(), strides.end() - 2);
    SHARDC_KERNEL_TRY(toIndexMap(name, Walk<1>::make(heads, {headStrides}), args.maskHeads));
    args.mask = mask->numel() > 0 ? mask->data : nullptr;
    args.maskBool = mask->dtype == DType::Bool;
    args.maskRowStride = strides[rank - 2];
    args.maskColStride = strides[rank - 1];
  }
  if (context.checkOnly || out.numel() == 0)
    return Status::success();
  args.query = query.data;
  args.key = key.data;
  args.value = value.data;
  args.out = out.data;
  args.dtype = query.dtype;
  args.scale = float(scale);
  args.causal = causal;
  args.batchHeads = dims.batch * args.headsQ;
  args.group = args.headsQ / dims.headsKv;
  SHARDC_KERNEL_TRY(launchAttention(args, context.stream));
  return launchStatus(name);
}

} // namespace shardc::rt::cuda
