//===- HostSupport.h - the host side of every CUDA kernel -------*- C++ -*-===//
//
// Each CUDA kernel entry point (Elementwise.h, Reduction.h, ...) checks its
// operands on the host exactly as its CPU counterpart does, with the same
// one-line messages, then hands plain data (Launch.h) to a launch function in
// a .cu file. The checks, shape arithmetic and dim merging are the kernel
// contract's (runtime/kernels/), which the CPU kernels run too, so both
// backends accept and reject the same steps. What is only the GPU's lives here.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_HOSTSUPPORT_H
#define SHARDC_RUNTIME_CUDA_HOSTSUPPORT_H

#include "runtime/core/Tensor.h"
#include "runtime/cuda/Launch.h"
#include "runtime/kernels/Checks.h"

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>

namespace shardc::rt::cuda {

class GeneratedKernels;

/// How an entry point is called: to enqueue its work on `stream`, or, when
/// the executor prepares a program (KernelTable's check), only to check the
/// operands, returning before any CUDA call. `generated` is the artifact's
/// compiled fused kernels, held by the call's device (null: none loaded).
struct LaunchContext {
  cudaStream_t stream = nullptr;
  bool checkOnly = false;
  const GeneratedKernels *generated = nullptr;
};

namespace detail {

// The contract's checks and shape arithmetic, as if the CUDA kernels' own.
using namespace ::shardc::rt::kernels;

/// F32, F16 or BF16: the float types the CUDA math kernels compute on.
inline bool isCudaFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16;
}

/// Fails unless `tensor` is F32, F16 or BF16: "op: needs a float <role> but
/// got int32" (the CPU's words), or that float64 is a CPU-only type.
Status checkCudaFloat(const char *op, const char *role, const TensorView &tensor);

/// "op: float64 is not supported by the CUDA backend".
Status float64Unsupported(const char *op);

/// The CUDA backend's `extra` element-type check for the shared operand
/// checks (runtime/kernels/Checks.h): float64Unsupported for an F64 tensor.
Status rejectFloat64(const char *op, const TensorView &tensor);

/// The merged walk as a kernel parameter; fails past kMaxRank dims.
template <size_t N> Status toIndexMap(const char *op, const Walk<N> &walk, IndexMap<int(N)> &map) {
  if (walk.shape.size() > size_t(kMaxRank))
    return fail(op, "the index space has " + std::to_string(walk.shape.size()) +
                        " dims that do not merge; the CUDA kernels take at most " +
                        std::to_string(kMaxRank));
  map = IndexMap<int(N)>();
  map.rank = int(walk.shape.size());
  for (size_t d = 0; d < walk.shape.size(); ++d) {
    map.shape[d] = walk.shape[d];
    for (size_t k = 0; k < N; ++k)
      map.strides[k][d] = walk.strides[k][d];
  }
  return Status::success();
}

/// Whether every operand of the map walks its elements in order (one
/// contiguous run, same shape everywhere): the kernels then index flat.
template <int N> bool isFlat(const IndexMap<N> &map) {
  if (map.rank != 1)
    return false;
  for (int k = 0; k < N; ++k)
    if (map.strides[k][0] != 1)
      return false;
  return true;
}

/// Operand 0 is `out` (row-major), operand k+1 inputs[k] broadcast to it:
/// fails unless the inputs broadcast together to exactly out's shape.
template <size_t N>
Status broadcastMap(const char *op, const std::array<const TensorView *, N> &inputs,
                    const TensorView &out, IndexMap<int(N) + 1> &map) {
  Walk<N + 1> walk;
  SHARDC_KERNEL_TRY(broadcastWalk<N>(op, inputs, out, walk));
  return toIndexMap(op, walk, map);
}

/// Whether `pointer` is aligned to `bytes` (vector loads need 16).
inline bool isAligned(const void *pointer, size_t bytes) {
  return reinterpret_cast<uintptr_t>(pointer) % bytes == 0;
}

/// Where kernels on `stream` record device-side errors (null if nowhere).
DeviceError *deviceErrors(cudaStream_t stream);

/// `out` = `data` (as many bytes) on `stream`, unless they are one buffer:
/// the scatters' result starts so (the updates then land on it), and the
/// copy kernel is nothing else.
Status copyDataToResult(const TensorView &data, const TensorView &out, cudaStream_t stream);

} // namespace detail
} // namespace shardc::rt::cuda

#endif
