//===- Normalization.h - layer_norm and rms_norm on a GPU -------*- C++ -*-===//
//
// The CUDA forms of runtime/cpu/Normalization.h, with its checks, messages
// and broadcasting scale/bias; F32/F16/BF16 storage, fp32 math.
//
// One pass over each row for the statistics, by a warp (rows up to 2048
// elements, several rows per block) or a block (longer rows), with 16-byte
// loads where the rows are aligned and shuffle reductions:
//  - layer_norm sums x - x0 and its squares, x0 being the row's first
//    element. Shifting by a value of the row keeps both sums small when the
//    row has a large mean and a small spread (activations after residual
//    adds), where the sums of x and x^2 would cancel in fp32; the output is
//    centred as (x - x0) - mean(x - x0), so the mean's rounding does not
//    shift it either (the CPU kernel gets the same from double sums).
//  - rms_norm sums the squares.
// Then a second read of the row (from L1/L2) writes the output. In place is
// allowed.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_NORMALIZATION_H
#define SHARDC_RUNTIME_CUDA_NORMALIZATION_H

#include "runtime/cuda/HostSupport.h"

namespace shardc::rt::cuda {

Status layerNorm(const TensorView &input, const TensorView &scale, const TensorView *bias,
                 int64_t axis, double epsilon, const TensorView &out, const LaunchContext &context);
Status rmsNorm(const TensorView &input, const TensorView &scale, int64_t axis, double epsilon,
               const TensorView &out, const LaunchContext &context);

namespace detail {

struct NormArgs {
  void *out = nullptr;
  const void *in = nullptr;
  const void *scale = nullptr;
  const void *bias = nullptr; // layer_norm only; may be null
  DType dtype = DType::F32;
  bool rms = false;
  int64_t rows = 0, n = 0;
  float epsilon = 0;
  bool vectorized = false; // every row 16-byte aligned (in and out)
  // Normalized index j -> parameter offset, unless direct (offset j).
  bool scaleDirect = true, biasDirect = true;
  IndexMap<1> scaleMap, biasMap;
};

void launchNorm(const NormArgs &args, cudaStream_t stream); // Normalization.cu

} // namespace detail
} // namespace shardc::rt::cuda

#endif
