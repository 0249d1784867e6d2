//===- TensorBytes.h - Overflow-checked sizes of tensors ------------------===//
//
// Shapes read from files are hostile input: a dim of -1 or a product past
// 2^64 must be an error, not a wrapped size that later indexes out of bounds.
// runtime/core's numElements() multiplies without checks (it is meant for
// shapes the runtime made itself), so the readers and writers here validate
// every shape with these first.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_IO_TENSORBYTES_H
#define SHARDC_RUNTIME_IO_TENSORBYTES_H

#include "runtime/core/Tensor.h"
#include "runtime/io/ErrorText.h"

#include <cstdint>
#include <optional>
#include <string>

namespace shardc::rt::io {

/// numel * element size of a dense tensor, or nothing when a dim is negative
/// or any partial product exceeds INT64_MAX. Checking every partial product,
/// not just the total, is what makes a later numElements() on the same shape
/// safe: [2^32, 2^31, 0] has 0 elements but overflows int64 on the way.
inline std::optional<uint64_t> checkedByteCount(DType dtype, const Shape &shape) {
  uint64_t count = dtypeSize(dtype);
  for (int64_t dim : shape) {
    if (dim < 0 || __builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count) ||
        count > static_cast<uint64_t>(INT64_MAX))
      return std::nullopt;
  }
  return count;
}

/// A read-only view of a HostTensor for the writers, which take views so that
/// arena buffers and weight files' bytes can be written without a copy. Fails when
/// the tensor's byte vector does not match its dtype and shape (a caller's
/// bug, but one that must not make a writer read past the vector). The
/// const_cast is sound because writers never write through the view.
inline StatusOr<TensorView> viewOf(const HostTensor &tensor) {
  std::optional<uint64_t> bytes = checkedByteCount(tensor.dtype, tensor.shape);
  if (!bytes)
    return Status::error("invalid shape " + formatShape(tensor.shape));
  if (*bytes != tensor.bytes.size())
    return Status::error("tensor of " + std::string(dtypeName(tensor.dtype)) + " " +
                         formatShape(tensor.shape) + " needs " + std::to_string(*bytes) +
                         " bytes but holds " + std::to_string(tensor.bytes.size()));
  return TensorView{const_cast<std::byte *>(tensor.bytes.data()), tensor.dtype, tensor.shape};
}

/// `value` rounded up to a multiple of `alignment` (a power of two); callers
/// keep `value` far below 2^64.
inline uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_TENSORBYTES_H
