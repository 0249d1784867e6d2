//===- Fused.h - the "fused" elementwise kernel on a GPU --------*- C++ -*-===//
//
// runtime/cpu/Fused.h's kernel: a flat expression (`ops` in order, each
// reading `args`: an index below the input count names an input, above it
// an earlier op's result) evaluated per element of `out`, every input
// broadcasting to out's shape. Float32 throughout, each op computed as the
// CPU kernel computes it.
//
// On the GPU the expression is interpreted: each thread of a grid-stride
// loop loads its element of every input, runs the ops over a small array of
// values, and stores the last one. The program travels in the kernel's
// parameters, so a launch needs no copy; it must fit them: at most 16
// inputs and 64 ops, refused when the program is prepared. (Generated code
// per fusion may replace the interpreter; this interface stays.)
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_FUSED_H
#define SHARDC_RUNTIME_CUDA_FUSED_H

#include "runtime/cuda/HostSupport.h"
#include "runtime/kernels/ViewList.h"

#include <string>
#include <vector>

namespace shardc::rt::cuda {

Status fused(kernels::ViewList inputs, const std::vector<std::string> &ops,
             const std::vector<int64_t> &args, const TensorView &out, const LaunchContext &context);

/// Launches the compiler's function `kernel` for a fused step (see
/// GeneratedKernels.h): its shapes are baked in, its arguments are the
/// inputs' and the output's device pointers, its loop is grid-stride.
Status launchGenerated(const std::string &kernel, kernels::ViewList inputs, const TensorView &out,
                       const LaunchContext &context);

namespace detail {

constexpr int kMaxFusedInputs = 16;
constexpr int kMaxFusedOps = 64;

enum class FusedOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Max,
  Min,
  Neg,
  Abs,
  Sqrt,
  Rsqrt,
  Reciprocal,
  Exp,
  Log,
  Cos,
  Sin,
  Erf,
  Tanh,
  Sigmoid,
  Relu,
  Silu,
  Gelu,
  GeluTanh,
  Floor,
  Ceil,
  Round,
  Sign,
  Mod,
  FMod
};

struct FusedArgs {
  float *out = nullptr;
  const float *inputs[kMaxFusedInputs] = {};
  int inputCount = 0, opCount = 0;
  FusedOp ops[kMaxFusedOps] = {};
  uint8_t operands[kMaxFusedOps][2] = {}; // value indices (second unused by unary ops)
  int64_t count = 0;
  bool flat = false;
  IndexMap<kMaxFusedInputs + 1> map; // operand 0 out, k + 1 input k
};

void launchFused(const FusedArgs &args, cudaStream_t stream); // Fused.cu

} // namespace detail
} // namespace shardc::rt::cuda

#endif
