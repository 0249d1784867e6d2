//===- Operands.h - one-line errors and the checks every op runs -*- C++ -*-===//
//
// Kernels are called by a table-driven executor with tensors it planned at
// compile time, so a mismatch is a bug upstream, not an exceptional event:
// every kernel checks its operands cheaply and returns the runtime's Status
// instead of crashing or throwing.
//
// Messages follow the project's diagnostic style: they start with the op
// name, are lower-case, have no trailing period and name the concrete values,
// e.g. "add: shapes [2, 3] and [4] do not broadcast".
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_KERNELS_OPERANDS_H
#define SHARDC_RUNTIME_KERNELS_OPERANDS_H

#include "runtime/core/Status.h"
#include "runtime/core/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace shardc::rt::kernels {

/// "op: message".
Status fail(const char *op, const std::string &message);

/// A readable shape for messages ("[2, 3]").
inline std::string str(const Shape &shape) { return formatShape(shape); }

bool isFloatType(DType dtype);
bool isIntType(DType dtype); // not Bool

/// Dims non-negative, data present when there are elements.
Status checkTensor(const char *op, const char *role, const TensorView &tensor);
/// dtype equality with a message naming both.
Status checkDType(const char *op, const char *role, const TensorView &tensor, DType expected);
/// Shape equality with a message naming both.
Status checkShape(const char *op, const char *role, const TensorView &tensor,
                  const Shape &expected);
/// Axis in [0, rank).
Status checkAxis(const char *op, int64_t axis, size_t rank);

/// Returns from the calling kernel when a check fails.
#define SHARDC_KERNEL_TRY(expression)                                                              \
  do {                                                                                             \
    ::shardc::rt::Status status_ = (expression);                                                   \
    if (!status_.ok())                                                                             \
      return status_;                                                                              \
  } while (false)

} // namespace shardc::rt::kernels

#endif // SHARDC_RUNTIME_KERNELS_OPERANDS_H
