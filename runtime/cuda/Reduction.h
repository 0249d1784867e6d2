//===- Reduction.h - reductions, softmax, topk on a GPU ---------*- C++ -*-===//
//
// The CUDA forms of runtime/cpu/Reduction.h, with its semantics, checks and
// messages:
//  - reduce_sum/mean/max/min over any set of axes, integer or float (not
//    float64). Float sums accumulate in double, as on the CPU, and round
//    once; max/min propagate NaN; integer sums wrap; the empty reduction
//    gives the CPU's values. An output per block (threads striding over the
//    reduced elements, then a shuffle reduction) when the reduction is long,
//    else an output per thread.
//  - softmax along any axis (F32/F16/BF16): max, sum of exp(x - max) and
//    the scaled exps in fp32, a row per warp (rows up to 1024) or per block
//    (longer rows) with shuffle reductions; a column per thread when the
//    axis is not the last. A row of all -inf, or with a NaN, gives NaN.
//  - topk along any axis, every element type: the CPU's order exactly (NaN
//    above every number, ties to the lower index), always sorted. A row of
//    up to 2048 elements is bitonic-sorted in shared memory by one block;
//    a longer row takes k block-wide selection passes (fine for the small k
//    of routing and sampling).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_REDUCTION_H
#define SHARDC_RUNTIME_CUDA_REDUCTION_H

#include "runtime/cuda/HostSupport.h"
#include "runtime/kernels/Ops.h"

#include <vector>

namespace shardc::rt::cuda {

Status reduce(kernels::ReduceOp op, const TensorView &input, const std::vector<int64_t> &axes,
              bool keepdims, const TensorView &out, const LaunchContext &context);
Status softmax(const TensorView &input, int64_t axis, const TensorView &out,
               const LaunchContext &context);
Status topk(const TensorView &input, int64_t k, int64_t axis, bool largest, bool sorted,
            const TensorView &values, const TensorView &indices, const LaunchContext &context);

namespace detail {

/// out[o] = the reduction over r of in[kept offset of o + reduced offset of r].
struct ReduceArgs {
  void *out = nullptr;
  const void *in = nullptr;
  DType dtype = DType::F32;
  int op = 0; // kernels::ReduceOp
  int64_t outCount = 0, reducedCount = 0;
  IndexMap<1> kept, reduced;
};

/// The input as [outer, dim, inner].
struct SoftmaxArgs {
  void *out = nullptr;
  const void *in = nullptr;
  DType dtype = DType::F32;
  int64_t outer = 0, dim = 0, inner = 0;
};

/// The input as [outer, dim, inner]; values/indices as [outer, k, inner].
struct TopKArgs {
  void *values = nullptr;
  int64_t *indices = nullptr;
  const void *in = nullptr;
  DType dtype = DType::F32;
  int64_t outer = 0, dim = 0, inner = 0, k = 0;
  bool largest = true;
};

// Launches (Reduction.cu, Softmax.cu, TopK.cu).
void launchReduce(const ReduceArgs &args, cudaStream_t stream);
void launchSoftmax(const SoftmaxArgs &args, cudaStream_t stream);
void launchTopK(const TopKArgs &args, cudaStream_t stream);

} // namespace detail
} // namespace shardc::rt::cuda

#endif
