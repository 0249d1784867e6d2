//===- ScatterCombine.cuh - how scattered updates combine on a GPU -*- CUDA -*-===//
//
// Device code shared by the scatter kernels (scatter_elements, scatter_nd):
// one update applied to one element with the CPU kernels' reductions
// (runtime/cpu/IndexingSupport.h).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_SCATTERCOMBINE_CUH
#define SHARDC_RUNTIME_CUDA_SCATTERCOMBINE_CUH

#include "runtime/cuda/DeviceSupport.cuh"
#include "runtime/kernels/Ops.h"

namespace shardc::rt::cuda::device {

template <typename U>
__device__ inline void copyElement(void *to, int64_t i, const void *from, int64_t j) {
  static_cast<U *>(to)[i] = static_cast<const U *>(from)[j];
}

/// out[target] = combine(out[target], updates[p]) with the CPU's rules:
/// floats in fp32 (float64 in double), integers wrapping, max/min keeping the
/// old value when it is NaN.
__device__ inline void scatterCombine(void *out, int64_t target, const void *updates, int64_t p,
                                      DType dtype, kernels::ScatterReduction reduction) {
  using kernels::ScatterReduction;
  if (reduction == ScatterReduction::None) {
    switch (dtype) {
    case DType::F64:
    case DType::I64:
      copyElement<uint64_t>(out, target, updates, p);
      break;
    case DType::F32:
    case DType::I32:
      copyElement<uint32_t>(out, target, updates, p);
      break;
    case DType::F16:
    case DType::BF16:
    case DType::I16:
      copyElement<uint16_t>(out, target, updates, p);
      break;
    default:
      copyElement<uint8_t>(out, target, updates, p);
      break;
    }
    return;
  }
  if (isRealType(dtype)) {
    const double old = loadReal(out, dtype, target);
    const double update = loadReal(updates, dtype, p);
    const bool wide = dtype == DType::F64;
    double result = update;
    switch (reduction) {
    case ScatterReduction::Add:
      result = wide ? old + update : double(float(old) + float(update));
      break;
    case ScatterReduction::Mul:
      result = wide ? old * update : double(float(old) * float(update));
      break;
    case ScatterReduction::Max:
      result = old != old || old >= update ? old : update;
      break;
    case ScatterReduction::Min:
      result = old != old || old <= update ? old : update;
      break;
    case ScatterReduction::None:
      break;
    }
    storeReal(out, dtype, target, result);
    return;
  }
  const int64_t old = loadInteger(out, dtype, target);
  const int64_t update = loadInteger(updates, dtype, p);
  uint64_t result = uint64_t(update);
  switch (reduction) {
  case ScatterReduction::Add:
    result = uint64_t(old) + uint64_t(update);
    break;
  case ScatterReduction::Mul:
    result = uint64_t(old) * uint64_t(update);
    break;
  case ScatterReduction::Max:
    result = uint64_t(old > update ? old : update);
    break;
  case ScatterReduction::Min:
    result = uint64_t(old < update ? old : update);
    break;
  case ScatterReduction::None:
    break;
  }
  storeInteger(out, dtype, target, result);
}

} // namespace shardc::rt::cuda::device

#endif
