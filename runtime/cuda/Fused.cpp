//===- Fused.cpp - the "fused" elementwise kernel: host side --------------===//
#include "runtime/cuda/Fused.h"

#include "runtime/cuda/CudaStatus.h"
#include "runtime/cuda/GeneratedKernels.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <optional>
#include <utility>

namespace shardc::rt::cuda {

using namespace detail;

namespace {

/// The op of a name and its arity (the names of passes/Lowering's fusion).
std::optional<std::pair<FusedOp, int>> decode(const std::string &name) {
  static const std::pair<const char *, std::pair<FusedOp, int>> table[] = {
      {"add", {FusedOp::Add, 2}},           {"sub", {FusedOp::Sub, 2}},
      {"mul", {FusedOp::Mul, 2}},           {"div", {FusedOp::Div, 2}},
      {"pow", {FusedOp::Pow, 2}},           {"max", {FusedOp::Max, 2}},
      {"min", {FusedOp::Min, 2}},           {"neg", {FusedOp::Neg, 1}},
      {"abs", {FusedOp::Abs, 1}},           {"sqrt", {FusedOp::Sqrt, 1}},
      {"rsqrt", {FusedOp::Rsqrt, 1}},       {"reciprocal", {FusedOp::Reciprocal, 1}},
      {"exp", {FusedOp::Exp, 1}},           {"log", {FusedOp::Log, 1}},
      {"cos", {FusedOp::Cos, 1}},           {"sin", {FusedOp::Sin, 1}},
      {"erf", {FusedOp::Erf, 1}},           {"tanh", {FusedOp::Tanh, 1}},
      {"sigmoid", {FusedOp::Sigmoid, 1}},   {"relu", {FusedOp::Relu, 1}},
      {"silu", {FusedOp::Silu, 1}},         {"gelu", {FusedOp::Gelu, 1}},
      {"gelu_tanh", {FusedOp::GeluTanh, 1}}, {"floor", {FusedOp::Floor, 1}},
      {"ceil", {FusedOp::Ceil, 1}},         {"round", {FusedOp::Round, 1}},
      {"sign", {FusedOp::Sign, 1}},         {"mod", {FusedOp::Mod, 2}},
      {"fmod", {FusedOp::FMod, 2}}};
  for (const auto &[known, op] : table)
    if (name == known)
      return op;
  return std::nullopt;
}

} // namespace

Status fused(kernels::ViewList inputs, const std::vector<std::string> &ops,
             const std::vector<int64_t> &args, const TensorView &out,
             const LaunchContext &context) {
  const char *name = "fused";
  if (out.dtype != DType::F32)
    return fail(name, "output must be float32");
  if (inputs.size() > size_t(kMaxFusedInputs) || ops.size() > size_t(kMaxFusedOps))
    return fail(name, "the expression has " + std::to_string(inputs.size()) + " inputs and " +
                          std::to_string(ops.size()) + " ops; the CUDA kernel takes at most " +
                          std::to_string(kMaxFusedInputs) + " and " + std::to_string(kMaxFusedOps));
  FusedArgs program;
  program.inputCount = int(inputs.size());
  size_t next = 0;
  for (const std::string &opName : ops) {
    auto decoded = decode(opName);
    if (!decoded)
      return fail(name, "unknown op '" + opName + "'");
    const int index = program.opCount++;
    program.ops[index] = decoded->first;
    for (int i = 0; i < decoded->second; ++i) {
      if (next >= args.size())
        return fail(name, "too few arguments for the ops");
      const int64_t arg = args[next++];
      if (arg < 0 || arg >= program.inputCount + index)
        return fail(name, "argument " + std::to_string(arg) + " is out of range");
      program.operands[index][i] = uint8_t(arg);
    }
    if (decoded->second == 1) // a defined value in the unused slot
      program.operands[index][1] = program.operands[index][0];
  }
  if (program.opCount == 0 || next != args.size())
    return fail(name, "the ops and their arguments do not match");
  SHARDC_KERNEL_TRY(checkTensor(name, "result", out));
  std::array<Shape, kMaxFusedInputs + 1> strides;
  strides[0] = rowMajorStrides(out.shape);
  for (size_t k = 0; k < size_t(kMaxFusedInputs); ++k)
    strides[k + 1] = Shape(out.shape.size(), 0); // unused operands merge anywhere
  for (size_t k = 0; k < inputs.size(); ++k) {
    const TensorView &input = inputs[k];
    SHARDC_KERNEL_TRY(checkTensor(name, "input", input));
    if (input.dtype != DType::F32)
      return fail(name, "inputs must be float32");
    if (!broadcastsTo(input.shape, out.shape))
      return fail(name, "input " + str(input.shape) + " does not broadcast to the result " +
                            str(out.shape));
    strides[k + 1] = broadcastStrides(input.shape, out.shape);
    program.inputs[k] = input.as<const float>();
  }
  SHARDC_KERNEL_TRY(
      toIndexMap(name, Walk<kMaxFusedInputs + 1>::make(out.shape, strides), program.map));
  if (context.checkOnly || out.numel() == 0)
    return Status::success();
  program.out = out.as<float>();
  program.count = out.numel();
  program.flat = program.map.rank == 1;
  for (int k = 0; k <= program.inputCount; ++k)
    program.flat = program.flat && program.map.strides[k][0] == 1;
  launchFused(program, context.stream);
  return launchStatus(name);
}

Status launchGenerated(const std::string &kernel, kernels::ViewList inputs, const TensorView &out,
                       const LaunchContext &context) {
  const char *name = "fused";
  void *function = context.generated ? context.generated->find(kernel) : nullptr;
  if (!function)
    return fail(name, "the step runs the generated kernel '" + kernel +
                          "', which the artifact's loaded kernels do not hold");
  if (out.dtype != DType::F32)
    return fail(name, "output must be float32");
  for (const TensorView &input : inputs)
    if (input.dtype != DType::F32)
      return fail(name, "inputs must be float32");
  if (context.checkOnly || out.numel() == 0)
    return Status::success();
  std::vector<const void *> pointers;
  for (const TensorView &input : inputs)
    pointers.push_back(input.data);
  void *output = out.data;
  std::vector<void *> args;
  for (const void *&pointer : pointers)
    args.push_back(&pointer);
  args.push_back(&output);
  constexpr int64_t kThreads = 256, kMaxBlocks = 8192;
  const int64_t blocks = std::min<int64_t>((out.numel() + kThreads - 1) / kThreads, kMaxBlocks);
  cudaError_t error = cudaLaunchKernel(function, dim3(unsigned(blocks)), dim3(unsigned(kThreads)),
                                       args.data(), 0, context.stream);
  if (error != cudaSuccess)
    return fail(name, std::string("launching '") + kernel + "': " + cudaGetErrorString(error));
  return Status::success();
}

} // namespace shardc::rt::cuda
