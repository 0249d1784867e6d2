//===- Operands.cpp - one-line errors and the checks every op runs --------===//
#include "runtime/kernels/Operands.h"

namespace shardc::rt::kernels {

Status fail(const char *op, const std::string &message) {
  return Status::error(std::string(op) + ": " + message);
}

bool isFloatType(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 || dtype == DType::BF16;
}

bool isIntType(DType dtype) {
  return dtype == DType::I64 || dtype == DType::I32 || dtype == DType::I16 || dtype == DType::I8 ||
         dtype == DType::U8;
}

Status checkTensor(const char *op, const char *role, const TensorView &tensor) {
  for (int64_t dim : tensor.shape)
    if (dim < 0)
      return fail(op, std::string(role) + " has a negative dim: " + str(tensor.shape));
  if (!tensor.data && tensor.numel() > 0)
    return fail(op, std::string(role) + " " + str(tensor.shape) + " has no data");
  return Status::success();
}

Status checkDType(const char *op, const char *role, const TensorView &tensor, DType expected) {
  if (tensor.dtype == expected)
    return Status::success();
  return fail(op, std::string(role) + " element type differs; expected " + dtypeName(expected) +
                      " but got " + dtypeName(tensor.dtype));
}

Status checkShape(const char *op, const char *role, const TensorView &tensor,
                  const Shape &expected) {
  if (tensor.shape == expected)
    return Status::success();
  return fail(op, std::string(role) + " shape differs; expected " + str(expected) + " but got " +
                      str(tensor.shape));
}

Status checkAxis(const char *op, int64_t axis, size_t rank) {
  if (axis >= 0 && axis < int64_t(rank))
    return Status::success();
  return fail(op,
              "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
}

} // namespace shardc::rt::kernels
