//===- Elementwise.cpp - unary, binary, compare, where, cast: host side ---===//
#include "runtime/cuda/Elementwise.h"

#include "runtime/cuda/CudaStatus.h"

namespace shardc::rt::cuda {

using namespace detail;
using kernels::BinaryOp;
using kernels::UnaryOp;

namespace {

/// Fills the pointers, flatness and alignment of `args` from its map.
template <int N>
void setOperands(ElementwiseArgs<N> &args, const TensorView &out,
                 const std::array<const TensorView *, N - 1> &inputs) {
  args.out = out.data;
  args.types[0] = out.dtype;
  bool aligned = isAligned(out.data, 16);
  for (int k = 0; k < N - 1; ++k) {
    args.in[k] = inputs[k]->data;
    args.types[k + 1] = inputs[k]->dtype;
    aligned = aligned && isAligned(inputs[k]->data, 16);
  }
  args.count = out.numel();
  args.flat = isFlat(args.map);
  args.vectorized = args.flat && aligned;
}

} // namespace

Status unary(UnaryOp op, const TensorView &input, const TensorView &out,
             const LaunchContext &context) {
  const char *name = kernels::unaryOpName(op);
  SHARDC_KERNEL_TRY(checkTensor(name, "input", input));
  SHARDC_KERNEL_TRY(checkTensor(name, "result", out));
  SHARDC_KERNEL_TRY(checkShape(name, "result", out, input.shape));
  SHARDC_KERNEL_TRY(checkDType(name, "result", out, input.dtype));
  const bool intOp = kernels::isIntegerUnary(op);
  bool isFloat = false;
  if (op == UnaryOp::Not) {
    if (input.dtype != DType::Bool)
      return fail(name, std::string("needs a bool input but got ") + dtypeName(input.dtype));
  } else if (input.dtype == DType::F64) {
    return float64Unsupported(name);
  } else if (isCudaFloat(input.dtype)) {
    isFloat = true;
  } else if (!(intOp && isIntType(input.dtype))) {
    return fail(name, std::string("needs a ") + (intOp ? "integer or float" : "float") +
                          " input but got " + dtypeName(input.dtype));
  }
  if (context.checkOnly || input.numel() == 0)
    return Status::success();
  ElementwiseArgs<2> args;
  args.op = int(op);
  args.map.rank = 1;
  args.map.shape[0] = input.numel();
  args.map.strides[0][0] = args.map.strides[1][0] = 1;
  setOperands<2>(args, out, {&input});
  if (isFloat)
    launchUnaryFloat(args, context.stream);
  else
    launchUnaryInteger(args, context.stream);
  return launchStatus(name);
}

Status binary(BinaryOp op, const TensorView &lhs, const TensorView &rhs, const TensorView &out,
              const LaunchContext &context) {
  const char *name = kernels::binaryOpName(op);
  SHARDC_KERNEL_TRY(checkBinary(op, lhs, rhs, out));
  const DType type = lhs.dtype;
  if (type == DType::F64 || rhs.dtype == DType::F64)
    return float64Unsupported(name);
  ElementwiseArgs<3> args;
  SHARDC_KERNEL_TRY(broadcastMap<2>(name, {&lhs, &rhs}, out, args.map));
  if (context.checkOnly || out.numel() == 0)
    return Status::success();
  args.op = int(op);
  setOperands<3>(args, out, {&lhs, &rhs});
  args.errors = deviceErrors(context.stream);
  if (op == BinaryOp::Pow)
    launchPow(args, context.stream);
  else if (isCudaFloat(type))
    launchBinaryFloat(args, context.stream);
  else
    launchBinaryInteger(args, context.stream);
  return launchStatus(name);
}

namespace {

/// is_nan and is_inf: `mode` is the classify kernel's op (Elementwise.cu).
Status classify(const char *name, const TensorView &input, const TensorView &out, int mode,
                const LaunchContext &context) {
  SHARDC_KERNEL_TRY(checkClassify(name, input, out));
  if (context.checkOnly || input.numel() == 0)
    return Status::success();
  ElementwiseArgs<2> args;
  args.op = mode;
  args.map.rank = 1;
  args.map.shape[0] = input.numel();
  args.map.strides[0][0] = args.map.strides[1][0] = 1;
  setOperands<2>(args, out, {&input});
  launchClassify(args, context.stream);
  return launchStatus(name);
}

} // namespace

Status isNaN(const TensorView &input, const TensorView &out, const LaunchContext &context) {
  return classify("is_nan", input, out, 0, context);
}

Status isInf(const TensorView &input, bool detectPositive, bool detectNegative,
             const TensorView &out, const LaunchContext &context) {
  return classify("is_inf", input, out, 1 | (detectPositive ? 2 : 0) | (detectNegative ? 4 : 0),
                  context);
}

Status compare(kernels::ComparePredicate predicate, const TensorView &lhs, const TensorView &rhs,
               const TensorView &out, const LaunchContext &context) {
  const char *name = "compare";
  SHARDC_KERNEL_TRY(checkCompare(lhs, rhs, out));
  ElementwiseArgs<3> args;
  SHARDC_KERNEL_TRY(broadcastMap<2>(name, {&lhs, &rhs}, out, args.map));
  if (context.checkOnly || out.numel() == 0)
    return Status::success();
  args.op = int(predicate);
  setOperands<3>(args, out, {&lhs, &rhs});
  launchCompare(args, context.stream);
  return launchStatus(name);
}

Status where(const TensorView &condition, const TensorView &trueValue, const TensorView &falseValue,
             const TensorView &out, const LaunchContext &context) {
  const char *name = "where";
  SHARDC_KERNEL_TRY(checkWhere(condition, trueValue, falseValue, out));
  ElementwiseArgs<4> args;
  SHARDC_KERNEL_TRY(broadcastMap<3>(name, {&condition, &trueValue, &falseValue}, out, args.map));
  if (context.checkOnly || out.numel() == 0)
    return Status::success();
  setOperands<4>(args, out, {&condition, &trueValue, &falseValue});
  launchWhere(args, context.stream);
  return launchStatus(name);
}

Status cast(const TensorView &input, const TensorView &out, const LaunchContext &context) {
  const char *name = "cast";
  SHARDC_KERNEL_TRY(checkTensor(name, "input", input));
  SHARDC_KERNEL_TRY(checkTensor(name, "result", out));
  SHARDC_KERNEL_TRY(checkShape(name, "result", out, input.shape));
  if (context.checkOnly || input.numel() == 0)
    return Status::success();
  if (input.dtype == out.dtype) {
    if (input.data != out.data)
      SHARDC_CUDA_TRY(cudaMemcpyAsync(out.data, input.data, input.bytes(), cudaMemcpyDeviceToDevice,
                                      context.stream));
    return Status::success();
  }
  ElementwiseArgs<2> args;
  args.map.rank = 1;
  args.map.shape[0] = input.numel();
  args.map.strides[0][0] = args.map.strides[1][0] = 1;
  setOperands<2>(args, out, {&input});
  launchCast(args, context.stream);
  return launchStatus(name);
}

} // namespace shardc::rt::cuda
