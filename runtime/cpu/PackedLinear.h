//===- PackedLinear.h - a linear step's GEMM, prepared once -----*- C++ -*-===//
//
// A linear layer multiplies by the same weight in every run, so the CPU
// backend prepares it once per step (KernelPrepare): a oneDNN matmul
// primitive for the step's shapes and the weight reordered into the blocked
// layout that primitive reads. sgemm (MatMul.cpp) instead packs the weight
// again in every call. Measured on a 2-core AVX-512 machine
// (oneDNN 2.6, M = 128, fp32, bias included, two threads): K 768 x N 3072
// 2.25 -> 1.87 ms, N 768 0.52 -> 0.44 ms, K 3072 x N 768 2.10 -> 1.84 ms, the
// 50257-wide LM head 36.5 -> 35.0 ms.
//
// Without AVX-512, oneDNN 2.6 runs its jit sgemm on a row-major weight, and
// there rows whose byte length is a multiple of 4 KiB collide in the cache:
// on a Zen 3 core (AVX2, one thread, M = 128) [768, 3072] took 14.0 ms
// against 7.1 for its transpose. The packed rows are padded to an odd number
// of cache lines (paddedRowStride): 6.4 ms, and 768 x 768 1.80 -> 1.60 ms.
// That sgemm also loses speed on wide results, and splits the work over
// its threads less well than we can. On that path the result is cut into
// column panels (columnPanels), each a single-threaded primitive over its
// columns of the weight, which our threads take one at a time. Two threads,
// interleaved in one process: GPT-2's [768, 50257] LM head 90.9 ms whole
// on oneDNN's threads, 75 in 384-512-wide panels; Llama's [768, 32000]
// head 62 -> 52 ms (against one slice per thread); [768, 3072]
// 6.1 -> 5.2 ms; [768, 2048] 3.6 -> 3.2; [768, 768] 1.26 -> 1.12 (two
// panels). On one thread, panels at most 1024 wide: the LM head 177 -> 126
// ms; up to 4096 columns, cutting gained nothing.
//
// Only fp32 steps whose weight is constant (a Weight buffer) are prepared;
// the others keep the sgemm path. Steps of the process that pack the same
// columns of the same weight alike share one packed copy
// (SharedPackedWeights.h): a tied weight's readers, and in-process ranks
// whose weight file is one.
//
// A linear step may carry an epilogue (passes/Lowering/FuseLinearEpilogue):
// elementwise work on the GEMM's result, which the primitive applies as
// post-ops before it stores each tile: GELU, a residual add, SwiGLU's
// silu(gate) * up. Two threads, [128, 768] x [768, 3072]: GEMM then GELU
// 1.87 + 0.25 ms, with GELU as a post-op 1.97 ms.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_PACKEDLINEAR_H
#define SHARDC_RUNTIME_CPU_PACKEDLINEAR_H

#include "runtime/core/Kernel.h"
#include "runtime/core/Tensor.h"
#include "runtime/cpu/Status.h"
#include "runtime/kernels/ViewList.h"

#include <memory>
#include <string>
#include <vector>

namespace shardc::rt::cpu {

using kernels::ViewList;

/// Elementwise work on a linear's GEMM result, in the fused kernel's
/// encoding (Fused.h) over the inputs [result, extra 1, ..., extra n]: a
/// chain in which each op reads the running value (first), binary ones also
/// an extra input of the result's shape.
struct LinearEpilogue {
  std::vector<std::string> ops;
  std::vector<int64_t> args;
  bool empty() const { return ops.empty(); }
};

/// The row stride, in floats, of a row-major [K, n] weight packed for
/// oneDNN's sgemm: whole 64-byte cache lines, an odd number of them, so that
/// rows a power of two apart do not map to the same cache sets.
int64_t paddedRowStride(int64_t n);

/// Output columns [begin, begin + width) of a linear's result.
struct ColumnPanel {
  int64_t begin = 0, width = 0;
};

/// How sgemm's row-major path cuts an n-wide result into panels of whole
/// cache lines, equal but for the last: on one thread whole up to 4096
/// columns, else at most 1024 wide; on several, about 384 wide, as many as
/// a multiple of the threads, none under 64 columns (fewer panels, down to
/// one, where n is small).
std::vector<ColumnPanel> columnPanels(int64_t n, int threads);

class PackedLinear : public KernelState {
public:
  /// The prepared GEMM of linear(input, weight, bias, transposeWeight) ->
  /// out (MatMul.h), or null where these operands are not prepared (not
  /// fp32, an empty product, or a weight that is not `constantWeight`).
  /// `extras` are the epilogue's extra inputs. A bad epilogue (an op
  /// post-ops cannot run, a chain broken) is an error. `holdWeight`, when
  /// set, keeps the stored weight in memory while it is packed, now or when
  /// a change of numThreads() packs it again (PrepareInput::hold; its error
  /// is prepare's, or run's); unset, the weight is always in place.
  static StatusOr<std::unique_ptr<PackedLinear>>
  prepare(const TensorView &input, const TensorView &weight, const TensorView *bias,
          bool transposeWeight, const TensorView &out, bool constantWeight,
          const LinearEpilogue &epilogue = {}, ViewList extras = {nullptr, 0},
          HoldWeight holdWeight = {});
  ~PackedLinear() override;

  /// out = epilogue(input x weight + bias, extras...), for the shapes it
  /// was prepared for.
  Status run(const TensorView &input, const TensorView *bias, const TensorView &out,
             ViewList extras = {nullptr, 0});

  /// The weight (input 1) is read only to be packed, under holdWeight.
  bool copiesInput(size_t index) const override { return index == 1; }

private:
  struct Impl;
  explicit PackedLinear(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace shardc::rt::cpu

#endif // SHARDC_RUNTIME_CPU_PACKEDLINEAR_H
