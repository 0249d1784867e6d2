//===- Attention.cpp - scaled dot-product attention: host side ------------===//
#include "runtime/cuda/Attention.h"

#include "runtime/cuda/CudaStatus.h"

namespace shardc::rt::cuda {

using namespace detail;

Status attention(const TensorView &query, const TensorView &key, const TensorView &value,
                 const TensorView *mask, double scale, bool causal, const TensorView &out,
                 const LaunchContext &context) {
  const char *name = "attention";
  SHARDC_CPU_TRY(checkTensor(name, "query", query));
  SHARDC_CPU_TRY(checkTensor(name, "key", key));
  SHARDC_CPU_TRY(checkTensor(name, "value", value));
  SHARDC_CPU_TRY(checkTensor(name, "result", out));
  if (query.dtype == DType::F64)
    return float64Unsupported(name);
  if (!isCudaFloat(query.dtype))
    return fail(name, std::string("needs float operands but got ") + dtypeName(query.dtype));
  SHARDC_CPU_TRY(checkDType(name, "key", key, query.dtype));
  SHARDC_CPU_TRY(checkDType(name, "value", value, query.dtype));
  SHARDC_CPU_TRY(checkDType(name, "result", out, query.dtype));
  const size_t rank = query.shape.size();
  if (rank < 3 || key.shape.size() != rank || value.shape.size() != rank)
    return fail(name, "query, key and value must share a rank >= 3; got " + str(query.shape) +
                          ", " + str(key.shape) + " and " + str(value.shape));
  const Shape batch(query.shape.begin(), query.shape.end() - 3);
  const Shape keyBatch(key.shape.begin(), key.shape.end() - 3);
  const Shape valueBatch(value.shape.begin(), value.shape.end() - 3);
  if (keyBatch != batch || valueBatch != batch)
    return fail(name, "batch dims differ; expected " + str(batch) + " for key and value but got " +
                          str(keyBatch) + " and " + str(valueBatch));
  AttentionArgs args;
  args.headsQ = query.shape[rank - 3];
  args.seqQ = query.shape[rank - 2];
  args.headDim = query.shape[rank - 1];
  const int64_t headsKv = key.shape[rank - 3];
  args.seqK = key.shape[rank - 2];
  args.valueDim = value.shape[rank - 1];
  if (value.shape[rank - 3] != headsKv)
    return fail(name, "key and value head counts differ; expected " + std::to_string(headsKv) +
                          " but got " + std::to_string(value.shape[rank - 3]));
  if (headsKv == 0 || args.headsQ % headsKv != 0)
    return fail(name, "query heads must be a multiple of key/value heads; got " +
                          std::to_string(args.headsQ) + " and " + std::to_string(headsKv));
  if (key.shape[rank - 1] != args.headDim)
    return fail(name, "query and key head sizes differ; expected " + std::to_string(args.headDim) +
                          " but got " + std::to_string(key.shape[rank - 1]));
  if (value.shape[rank - 2] != args.seqK)
    return fail(name, "key and value sequence lengths differ; expected " +
                          std::to_string(args.seqK) + " but got " +
                          std::to_string(value.shape[rank - 2]));
  Shape expected = batch;
  expected.insert(expected.end(), {args.headsQ, args.seqQ, args.valueDim});
  SHARDC_CPU_TRY(checkShape(name, "result", out, expected));
  if (args.headDim > kMaxHeadSize || args.valueDim > kMaxHeadSize)
    return fail(name, "head sizes above " + std::to_string(kMaxHeadSize) +
                          " are not supported by the CUDA backend; got " +
                          std::to_string(args.headDim) + " and " + std::to_string(args.valueDim));
  if (mask) {
    SHARDC_CPU_TRY(checkTensor(name, "mask", *mask));
    if (mask->dtype != DType::Bool && mask->dtype != query.dtype)
      return fail(name, std::string("mask must be bool or of the query's element type ") +
                            dtypeName(query.dtype) + " but got " + dtypeName(mask->dtype));
    Shape scores = batch;
    scores.insert(scores.end(), {args.headsQ, args.seqQ, args.seqK});
    if (!broadcastsTo(mask->shape, scores))
      return fail(name, "mask does not broadcast to the scores; expected " + str(scores) +
                            " but got " + str(mask->shape));
    // The (batch..., head) dims of the scores with the mask's strides.
    const Shape strides = broadcastStrides(mask->shape, scores);
    const Shape heads(scores.begin(), scores.end() - 2);
    const Shape headStrides(strides.begin(), strides.end() - 2);
    SHARDC_CPU_TRY(toIndexMap(name, Walk<1>::make(heads, {headStrides}), args.maskHeads));
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
  args.batchHeads = numElements(batch) * args.headsQ;
  args.group = args.headsQ / headsKv;
  SHARDC_CPU_TRY(launchAttention(args, context.stream));
  return launchStatus(name);
}

} // namespace shardc::rt::cuda
