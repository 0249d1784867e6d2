//===- DispatchUnit.cuh - a kernel template per element width ---*- CUDA -*-===//
//
// Kernels that only move elements (copies, gathers, trilu) do not care what
// the bytes mean, only how many there are: one instantiation per width
// serves every dtype of that width. Host code in the .cu files only.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_DISPATCHUNIT_CUH
#define SHARDC_RUNTIME_CUDA_DISPATCHUNIT_CUH

#include <cuda_runtime.h>

#include <cstdint>

namespace shardc::rt::cuda::device {

/// fn(U{}) with the unsigned type of `bytes` (1, 2, 4, 8; 16 as uint4).
/// Callers whose units never exceed an element skip the 16-byte case with
/// `if constexpr (sizeof(U) <= 8)`, so no kernel is built for it.
template <typename Fn> void dispatchUnit(int bytes, Fn &&fn) {
  switch (bytes) {
  case 1:
    fn(uint8_t());
    break;
  case 2:
    fn(uint16_t());
    break;
  case 4:
    fn(uint32_t());
    break;
  case 8:
    fn(uint64_t());
    break;
  default:
    fn(uint4());
    break;
  }
}

} // namespace shardc::rt::cuda::device

#endif
