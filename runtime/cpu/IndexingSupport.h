//===- IndexingSupport.h - What the index-driven kernels share (internal) -*- C++ -*-===//
//
// Internal to the CPU kernels: reading and checking an I32 or I64 index
// tensor, and what scatter_elements and scatter_nd share: the copy of data
// they start from and the reductions they combine updates with.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_INDEXINGSUPPORT_H
#define SHARDC_RUNTIME_CPU_INDEXINGSUPPORT_H

#include "runtime/cpu/Checks.h"
#include "runtime/cpu/Indexing.h"
#include "runtime/cpu/KernelSupport.h"

#include <cstring>
#include <string>

namespace shardc::rt::cpu::detail {

/// Index element i as int64, whichever of I32/I64 the tensor holds.
inline int64_t indexAt(const TensorView &indices, int64_t i) {
  return indices.dtype == DType::I64 ? indices.as<const int64_t>()[i]
                                     : int64_t(indices.as<const int32_t>()[i]);
}

/// Fails on a non-index type or any index outside [-dim, dim), naming it.
inline Status checkIndices(const char *op, const TensorView &indices, int64_t axis, int64_t dim) {
  SHARDC_KERNEL_TRY(checkIndexType(op, indices));
  const int64_t count = indices.numel();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t index = indexAt(indices, i);
    if (index < -dim || index >= dim)
      return fail(op, "index " + std::to_string(index) + " (element " + std::to_string(i) +
                          ") is out of range for axis " + std::to_string(axis) + " of size " +
                          std::to_string(dim));
  }
  return Status::success();
}

/// The scatters' result starts as `data`: copied into `out` unless the
/// kernel runs in place (out is data), then the updates land on it.
inline void copyDataToResult(const TensorView &data, const TensorView &out) {
  if (out.data != data.data && data.numel() > 0)
    std::memcpy(out.data, data.data, data.bytes());
}

/// The slot's new value: the update (None), or the slot combined with it in
/// the element type (floats in their compute type, integers wrapping, Max
/// and Min keeping a NaN already there).
template <typename T> T combine(ScatterReduction reduction, T old, T update) {
  if constexpr (kIsFloat<T>) {
    using C = ComputeT<T>;
    const C a = load(old), b = load(update);
    switch (reduction) {
    case ScatterReduction::Add: return store<T>(a + b);
    case ScatterReduction::Mul: return store<T>(a * b);
    case ScatterReduction::Max: return a != a || a >= b ? old : update;
    case ScatterReduction::Min: return a != a || a <= b ? old : update;
    case ScatterReduction::None: break;
    }
    return update;
  } else if constexpr (kIsInt<T>) {
    switch (reduction) {
    case ScatterReduction::Add:
      return wrapTo<T>(uint64_t(int64_t(old)) + uint64_t(int64_t(update)));
    case ScatterReduction::Mul:
      return wrapTo<T>(uint64_t(int64_t(old)) * uint64_t(int64_t(update)));
    case ScatterReduction::Max: return old > update ? old : update;
    case ScatterReduction::Min: return old < update ? old : update;
    case ScatterReduction::None: break;
    }
    return update;
  } else {
    (void)reduction;
    (void)old;
    return update; // Bool: only None reaches here
  }
}

} // namespace shardc::rt::cpu::detail

#endif // SHARDC_RUNTIME_CPU_INDEXINGSUPPORT_H
