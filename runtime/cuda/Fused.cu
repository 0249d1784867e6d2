//===- Fused.cu - the fused-expression interpreter ------------------------===//
#include "runtime/cuda/DeviceSupport.cuh"
#include "runtime/cuda/Fused.h"

namespace shardc::rt::cuda::detail {
namespace {

using namespace device;

/// One op, computed as runtime/cpu/Fused.cpp computes it.
__device__ inline float apply(FusedOp op, float a, float b) {
  switch (op) {
  case FusedOp::Add:
    return a + b;
  case FusedOp::Sub:
    return a - b;
  case FusedOp::Mul:
    return a * b;
  case FusedOp::Div:
    return a / b;
  case FusedOp::Pow:
    return powf(a, b);
  case FusedOp::Max:
    return isnan(a) || a > b ? a : b;
  case FusedOp::Min:
    return isnan(a) || a < b ? a : b;
  case FusedOp::Neg:
    return -a;
  case FusedOp::Abs:
    return fabsf(a);
  case FusedOp::Sqrt:
    return sqrtf(a);
  case FusedOp::Rsqrt:
    return 1.0f / sqrtf(a);
  case FusedOp::Reciprocal:
    return 1.0f / a;
  case FusedOp::Exp:
    return expf(a);
  case FusedOp::Log:
    return logf(a);
  case FusedOp::Cos:
    return cosf(a);
  case FusedOp::Sin:
    return sinf(a);
  case FusedOp::Erf:
    return erff(a);
  case FusedOp::Tanh:
    return tanhf(a);
  case FusedOp::Sigmoid:
    return 1.0f / (1.0f + expf(-a));
  case FusedOp::Relu:
    return a < 0.0f ? 0.0f : a;
  case FusedOp::Silu:
    return a * (1.0f / (1.0f + expf(-a)));
  case FusedOp::Gelu:
    return 0.5f * a * (1.0f + erff(a * 0.70710678118654752440f));
  case FusedOp::GeluTanh:
    return 0.5f * a * (1.0f + tanhf(0.79788456080286535588f * (a + 0.044715f * a * a * a)));
  case FusedOp::Floor:
    return floorf(a);
  case FusedOp::Ceil:
    return ceilf(a);
  case FusedOp::Round:
    return rintf(a); // halves to even
  case FusedOp::Sign:
    return a > 0.0f ? 1.0f : a < 0.0f ? -1.0f : a == 0.0f ? 0.0f : a;
  case FusedOp::Mod: { // Python's %: the divisor's sign
    const float r = fmodf(a, b);
    if (r == 0.0f)
      return copysignf(0.0f, b);
    return (r < 0.0f) != (b < 0.0f) ? r + b : r;
  }
  case FusedOp::FMod:
    return fmodf(a, b);
  }
  return a;
}

__global__ void fusedKernel(FusedArgs args) {
  float values[kMaxFusedInputs + kMaxFusedOps];
  constexpr int kOperands = kMaxFusedInputs + 1;
  for (int64_t i = firstIndex(); i < args.count; i += gridStride()) {
    int64_t at[kOperands];
    if (args.flat) {
      for (int k = 0; k <= args.inputCount; ++k)
        at[k] = i;
    } else {
      mapOffsets(args.map, i, at);
    }
    for (int k = 0; k < args.inputCount; ++k)
      values[k] = args.inputs[k][at[k + 1]];
    for (int s = 0; s < args.opCount; ++s)
      values[args.inputCount + s] =
          apply(args.ops[s], values[args.operands[s][0]], values[args.operands[s][1]]);
    args.out[at[0]] = values[args.inputCount + args.opCount - 1];
  }
}

} // namespace

void launchFused(const FusedArgs &args, cudaStream_t stream) {
  fusedKernel<<<blocksFor(args.count), kThreads, 0, stream>>>(args);
}

} // namespace shardc::rt::cuda::detail
