//===- TopK.cpp - the k largest or smallest along an axis: host side ------===//
#include "runtime/cuda/Reduction.h"

#include "runtime/cuda/CudaStatus.h"

namespace shardc::rt::cuda {

using namespace detail;

Status topk(const TensorView &input, int64_t k, int64_t axis, bool largest,
            bool /*sorted: the result always is*/, const TensorView &values,
            const TensorView &indices, const LaunchContext &context) {
  const char *name = "topk";
  SHARDC_CPU_TRY(checkTensor(name, "input", input));
  SHARDC_CPU_TRY(checkTensor(name, "values", values));
  SHARDC_CPU_TRY(checkTensor(name, "indices", indices));
  SHARDC_CPU_TRY(checkAxis(name, axis, input.shape.size()));
  const int64_t dim = input.shape[size_t(axis)];
  if (k < 0 || k > dim)
    return fail(name, "k out of range; expected 0 <= k <= " + std::to_string(dim) + " but got " +
                          std::to_string(k));
  Shape expected = input.shape;
  expected[size_t(axis)] = k;
  SHARDC_CPU_TRY(checkDType(name, "values", values, input.dtype));
  SHARDC_CPU_TRY(checkDType(name, "indices", indices, DType::I64));
  SHARDC_CPU_TRY(checkShape(name, "values", values, expected));
  SHARDC_CPU_TRY(checkShape(name, "indices", indices, expected));
  if (context.checkOnly || values.numel() == 0)
    return Status::success();
  TopKArgs args;
  args.values = values.data;
  args.indices = indices.as<int64_t>();
  args.in = input.data;
  args.dtype = input.dtype;
  args.outer = product(input.shape, 0, size_t(axis));
  args.dim = dim;
  args.inner = product(input.shape, size_t(axis) + 1, input.shape.size());
  args.k = k;
  args.largest = largest;
  launchTopK(args, context.stream);
  return launchStatus(name);
}

} // namespace shardc::rt::cuda
