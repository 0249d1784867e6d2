//===- PackedLinear.h - a linear step's GEMM, prepared once -----*- C++ -*-===//
//
// A linear layer multiplies by the same weight in every run, so the CPU
// backend prepares it once per step (KernelPrepare): a oneDNN matmul
// primitive for the step's shapes and the weight reordered into the blocked
// layout that primitive reads. sgemm (MatMul.cpp) instead packs the weight
// again in every call. Measured on this project's 2-core AVX-512 machine
// (oneDNN 2.6, M = 128, fp32, bias included, two threads): K 768 x N 3072
// 2.25 -> 1.87 ms, N 768 0.52 -> 0.44 ms, K 3072 x N 768 2.10 -> 1.84 ms, the
// 50257-wide LM head 36.5 -> 35.0 ms.
//
// Only fp32 steps whose weight is constant (a Weight buffer) are prepared;
// the others keep the sgemm path. The packed copy is the step's own: a
// weight read by several linears is packed once per step.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_PACKEDLINEAR_H
#define SHARDC_RUNTIME_CPU_PACKEDLINEAR_H

#include "runtime/core/Kernel.h"
#include "runtime/core/Tensor.h"
#include "runtime/cpu/Status.h"

#include <memory>

namespace shardc::rt::cpu {

class PackedLinear : public KernelState {
public:
  /// The prepared GEMM of linear(input, weight, bias, transposeWeight) ->
  /// out (MatMul.h), or null where these operands are not prepared (not
  /// fp32, an empty product, or a weight that is not `constantWeight`).
  static StatusOr<std::unique_ptr<PackedLinear>>
  prepare(const TensorView &input, const TensorView &weight, const TensorView *bias,
          bool transposeWeight, const TensorView &out, bool constantWeight);
  ~PackedLinear() override;

  /// out = input x weight + bias, for the shapes it was prepared for.
  Status run(const TensorView &input, const TensorView *bias, const TensorView &out);

  /// The weight (input 1) is read once, when it is packed. (A change of
  /// numThreads() may pack it again, from the file if its pages left.)
  bool copiesInput(size_t index) const override { return index == 1; }

private:
  struct Impl;
  explicit PackedLinear(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace shardc::rt::cpu

#endif // SHARDC_RUNTIME_CPU_PACKEDLINEAR_H
