//===- Launch.h - what host code hands the CUDA kernels ---------*- C++ -*-===//
//
// Plain data shared by the host side (checks, parameter decoding: .cpp files
// compiled by the C++ compiler) and the device side (.cu files compiled by
// nvcc) of the CUDA kernels. Nothing here runs on the device by itself: the
// device functions that read these types live in DeviceSupport.cuh.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_LAUNCH_H
#define SHARDC_RUNTIME_CUDA_LAUNCH_H

#include <cstdint>

namespace shardc::rt::cuda {

/// The most dims an index space may have after its neighbouring dims are
/// merged (kernels::Walk::make): a strided view of a transformer tensor
/// has at most 5 or 6 dims before merging.
constexpr int kMaxRank = 8;

/// An index space of `rank` dims visited in row-major order, with the element
/// strides of N operands (0 where an operand broadcasts). Passed by value as
/// a kernel parameter; each thread turns a linear index into N offsets.
template <int N> struct IndexMap {
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[N][kMaxRank] = {};
};

/// Errors only the device can see (an index read from device memory out of
/// range, an integer division by zero): the kernel skips the bad element and
/// records the first such error in mapped host memory, which the stream's
/// synchronize() turns into a Status.
enum class DeviceErrorCode : int32_t {
  None = 0,
  GatherIndex,         // value: the index, limit: the axis size
  ScatterIndex,        // value: the index, limit: the axis size
  DivisionByZero,      // integer div
  ZeroToNegative,      // integer pow
  GatherElementsIndex, // value: the index, limit: the axis size
  GatherNdIndex,       // value: the index, limit: the dim size
  ScatterNdIndex,      // value: the index, limit: the dim size
  ModuloByZero,        // integer mod
};

struct DeviceError {
  int32_t code;
  int32_t unused;
  int64_t value;
  int64_t limit;
};

} // namespace shardc::rt::cuda

#endif
