//===- Elementwise.h - unary, binary, compare, where, cast on a GPU -*- C++ -*-===//
//
// The CUDA forms of runtime/cpu/Elementwise.h, with its semantics, operand
// rules and messages: numpy broadcasting (through strides, no copies),
// integers wrapping to their width, integer division truncating, NaN
// propagating through max/min, the stable sigmoid/silu/gelu forms, cast's
// saturation and single rounding. In place (out being an input of out's
// shape) is allowed.
//
// Element types: as on the CPU, except that float64 math (unary, binary,
// pow) is CPU-only; compare, where, cast, is_nan and is_inf take every type,
// float64 too. An integer division (or mod) by zero or 0 ** negative is
// found on the device: the element becomes 0 and the stream's synchronize()
// reports the error.
//
// Kernels: grid-stride loops; 16-byte vector loads and stores where every
// operand is contiguous and aligned; otherwise each thread maps its index to
// the operands' offsets (IndexMap).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_ELEMENTWISE_H
#define SHARDC_RUNTIME_CUDA_ELEMENTWISE_H

#include "runtime/cuda/HostSupport.h"
#include "runtime/kernels/Ops.h"

namespace shardc::rt::cuda {

Status unary(kernels::UnaryOp op, const TensorView &input, const TensorView &out,
             const LaunchContext &context);
Status binary(kernels::BinaryOp op, const TensorView &lhs, const TensorView &rhs,
              const TensorView &out, const LaunchContext &context);
Status isNaN(const TensorView &input, const TensorView &out, const LaunchContext &context);
Status isInf(const TensorView &input, bool detectPositive, bool detectNegative,
             const TensorView &out, const LaunchContext &context);
Status compare(kernels::ComparePredicate predicate, const TensorView &lhs, const TensorView &rhs,
               const TensorView &out, const LaunchContext &context);
Status where(const TensorView &condition, const TensorView &trueValue, const TensorView &falseValue,
             const TensorView &out, const LaunchContext &context);
Status cast(const TensorView &input, const TensorView &out, const LaunchContext &context);

namespace detail {

/// out = f(inputs...) over an index map; `types` are the operands' dtypes in
/// the map's order (out first).
template <int N> struct ElementwiseArgs {
  void *out = nullptr;
  const void *in[N - 1] = {};
  DType types[N] = {};
  int64_t count = 0;
  bool flat = false;       // every operand contiguous: index i everywhere
  bool vectorized = false; // flat and every pointer 16-byte aligned
  int op = 0;              // the family's enum, as an int
  IndexMap<N> map;
  DeviceError *errors = nullptr;
};

// Launches (ElementwiseKernels.cu). The float ones take F32, F16 or BF16.
void launchUnaryFloat(const ElementwiseArgs<2> &args, cudaStream_t stream);
void launchUnaryInteger(const ElementwiseArgs<2> &args, cudaStream_t stream); // and Not
void launchBinaryFloat(const ElementwiseArgs<3> &args, cudaStream_t stream);
void launchBinaryInteger(const ElementwiseArgs<3> &args, cudaStream_t stream); // and And/Or
void launchPow(const ElementwiseArgs<3> &args, cudaStream_t stream);
void launchClassify(const ElementwiseArgs<2> &args, cudaStream_t stream); // is_nan, is_inf
void launchCompare(const ElementwiseArgs<3> &args, cudaStream_t stream);
void launchWhere(const ElementwiseArgs<4> &args, cudaStream_t stream);
void launchCast(const ElementwiseArgs<2> &args, cudaStream_t stream);

} // namespace detail
} // namespace shardc::rt::cuda

#endif
