//===- Elementwise.cu - unary, binary, compare, where, cast kernels -------===//
//
// The float kernels are templates over the storage type (float, __half,
// __nv_bfloat16) with the op a runtime value the same for every thread, so
// there is one kernel per type rather than one per (op, type): the branch
// costs nothing next to the memory traffic, and compile time stays small.
// The integer, compare, pow and cast kernels load and store through the
// runtime dtype (DeviceSupport.cuh): one kernel for every type.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/DeviceSupport.cuh"
#include "runtime/cuda/Elementwise.h"

namespace shardc::rt::cuda::detail {
namespace {

using namespace device;
using kernels::BinaryOp;
using kernels::ComparePredicate;
using kernels::UnaryOp;

template <int N>
__device__ inline void offsetsAt(const ElementwiseArgs<N> &args, int64_t i, int64_t (&at)[N]) {
  if (args.flat) {
#pragma unroll
    for (int k = 0; k < N; ++k)
      at[k] = i;
  } else {
    mapOffsets(args.map, i, at);
  }
}

/// 1 / (1 + e^-x) computed without overflowing e^-x (the CPU's form).
__device__ inline float stableSigmoid(float x) {
  if (x >= 0.0f)
    return 1.0f / (1.0f + expf(-x));
  const float e = expf(x);
  return e / (1.0f + e);
}

__device__ inline float applyUnary(int op, float x) {
  switch (static_cast<UnaryOp>(op)) {
  case UnaryOp::Neg:
    return -x;
  case UnaryOp::Abs:
    return fabsf(x);
  case UnaryOp::Sqrt:
    return sqrtf(x);
  case UnaryOp::Rsqrt:
    return 1.0f / sqrtf(x); // rsqrtf is not correctly rounded
  case UnaryOp::Reciprocal:
    return 1.0f / x;
  case UnaryOp::Exp:
    return expf(x);
  case UnaryOp::Log:
    return logf(x);
  case UnaryOp::Cos:
    return cosf(x);
  case UnaryOp::Sin:
    return sinf(x);
  case UnaryOp::Erf:
    return erff(x);
  case UnaryOp::Tanh:
    return tanhf(x);
  case UnaryOp::Sigmoid:
    return stableSigmoid(x);
  case UnaryOp::Relu:
    return x < 0.0f ? 0.0f : x; // NaN stays NaN
  // 1 + erf(z) = erfc(-z) and 1 + tanh(u) = 2 sigmoid(2u): no cancellation
  // for negative x.
  case UnaryOp::Gelu:
    return 0.5f * x * erfcf(-x * 0.70710678118654752440f);
  case UnaryOp::GeluTanh:
    return x * stableSigmoid(2.0f * 0.79788456080286535588f * (x + 0.044715f * x * x * x));
  case UnaryOp::Silu:
    return x * stableSigmoid(x);
  case UnaryOp::Floor:
    return floorf(x);
  case UnaryOp::Ceil:
    return ceilf(x);
  case UnaryOp::Round:
    return rintf(x); // halves to even, as ONNX Round
  case UnaryOp::Sign:
    return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x == 0.0f ? 0.0f : x; // NaN stays
  case UnaryOp::Not:
    break;
  }
  return x;
}

/// Python's %: the truncated remainder moved into the divisor's sign (the
/// CPU's form, ONNX Mod-28's special cases for floats).
__device__ inline float flooredMod(float x, float y) {
  const float r = fmodf(x, y);
  if (r == 0.0f)
    return copysignf(0.0f, y);
  return (r < 0.0f) != (y < 0.0f) ? r + y : r;
}

__device__ inline float applyBinary(int op, float x, float y) {
  switch (static_cast<BinaryOp>(op)) {
  case BinaryOp::Add:
    return x + y;
  case BinaryOp::Sub:
    return x - y;
  case BinaryOp::Mul:
    return x * y;
  case BinaryOp::Div:
    return x / y;
  case BinaryOp::Max:
    return x >= y || x != x ? x : y; // NaN wins
  case BinaryOp::Min:
    return x <= y || x != x ? x : y;
  case BinaryOp::Mod:
    return flooredMod(x, y);
  case BinaryOp::FMod:
    return fmodf(x, y);
  default:
    return 0.0f;
  }
}

template <typename T> __global__ void unaryFloatKernel(ElementwiseArgs<2> args) {
  const T *in = static_cast<const T *>(args.in[0]);
  T *out = static_cast<T *>(args.out);
  int64_t begin = 0;
  if (args.vectorized) {
    constexpr int kLanes = 16 / sizeof(T);
    const int64_t packs = args.count / kLanes;
    const auto *inPacks = reinterpret_cast<const Pack<T> *>(in);
    auto *outPacks = reinterpret_cast<Pack<T> *>(out);
    for (int64_t p = firstIndex(); p < packs; p += gridStride()) {
      Pack<T> x = inPacks[p];
#pragma unroll
      for (int v = 0; v < kLanes; ++v)
        x.lane[v] = fromFloat<T>(applyUnary(args.op, toFloat(x.lane[v])));
      outPacks[p] = x;
    }
    begin = packs * kLanes;
  }
  for (int64_t i = begin + firstIndex(); i < args.count; i += gridStride())
    out[i] = fromFloat<T>(applyUnary(args.op, toFloat(in[i])));
}

__global__ void unaryIntegerKernel(ElementwiseArgs<2> args) {
  const DType type = args.types[1];
  for (int64_t i = firstIndex(); i < args.count; i += gridStride()) {
    const int64_t x = loadInteger(args.in[0], type, i);
    // In uint64_t: negating INT_MIN wraps instead of overflowing.
    const uint64_t negated = uint64_t(0) - uint64_t(x);
    uint64_t result;
    switch (static_cast<UnaryOp>(args.op)) {
    case UnaryOp::Neg:
      result = negated;
      break;
    case UnaryOp::Abs:
      result = x < 0 ? negated : uint64_t(x);
      break;
    case UnaryOp::Not:
      result = x == 0;
      break;
    case UnaryOp::Sign:
      result = uint64_t(int64_t(x > 0) - int64_t(x < 0));
      break;
    default:
      result = x < 0 ? 0 : uint64_t(x);
      break; // Relu
    }
    storeInteger(args.out, type, i, result);
  }
}

template <typename T> __global__ void binaryFloatKernel(ElementwiseArgs<3> args) {
  const T *a = static_cast<const T *>(args.in[0]);
  const T *b = static_cast<const T *>(args.in[1]);
  T *out = static_cast<T *>(args.out);
  int64_t begin = 0;
  if (args.vectorized) {
    constexpr int kLanes = 16 / sizeof(T);
    const int64_t packs = args.count / kLanes;
    for (int64_t p = firstIndex(); p < packs; p += gridStride()) {
      const Pack<T> x = reinterpret_cast<const Pack<T> *>(a)[p];
      const Pack<T> y = reinterpret_cast<const Pack<T> *>(b)[p];
      Pack<T> r;
#pragma unroll
      for (int v = 0; v < kLanes; ++v)
        r.lane[v] = fromFloat<T>(applyBinary(args.op, toFloat(x.lane[v]), toFloat(y.lane[v])));
      reinterpret_cast<Pack<T> *>(out)[p] = r;
    }
    begin = packs * kLanes;
  }
  for (int64_t i = begin + firstIndex(); i < args.count; i += gridStride()) {
    int64_t at[3];
    offsetsAt(args, i, at);
    out[at[0]] = fromFloat<T>(applyBinary(args.op, toFloat(a[at[1]]), toFloat(b[at[2]])));
  }
}

/// Integer (and bool and/or) arithmetic in 64 bits, wrapped to the type.
__global__ void binaryIntegerKernel(ElementwiseArgs<3> args) {
  const DType type = args.types[1];
  for (int64_t i = firstIndex(); i < args.count; i += gridStride()) {
    int64_t at[3];
    offsetsAt(args, i, at);
    const int64_t x = loadInteger(args.in[0], type, at[1]);
    const int64_t y = loadInteger(args.in[1], type, at[2]);
    uint64_t result = 0;
    switch (static_cast<BinaryOp>(args.op)) {
    case BinaryOp::Add:
      result = uint64_t(x) + uint64_t(y);
      break;
    case BinaryOp::Sub:
      result = uint64_t(x) - uint64_t(y);
      break;
    case BinaryOp::Mul:
      result = uint64_t(x) * uint64_t(y);
      break;
    case BinaryOp::Max:
      result = uint64_t(x > y ? x : y);
      break;
    case BinaryOp::Min:
      result = uint64_t(x < y ? x : y);
      break;
    case BinaryOp::Div:
      if (y == 0)
        reportError(args.errors, DeviceErrorCode::DivisionByZero, 0, 0);
      else if (y == -1) // INT64_MIN / -1 overflows; negating wraps
        result = uint64_t(0) - uint64_t(x);
      else
        result = uint64_t(x / y); // truncates toward zero
      break;
    case BinaryOp::Mod:
    case BinaryOp::FMod:
      if (y == 0) {
        reportError(args.errors, DeviceErrorCode::ModuloByZero, 0, 0);
      } else {
        // INT64_MIN % -1 overflows; the remainder is 0. '%' truncates.
        int64_t r = y == -1 ? 0 : x % y;
        if (static_cast<BinaryOp>(args.op) == BinaryOp::Mod && r != 0 && (r < 0) != (y < 0))
          r += y;
        result = uint64_t(r);
      }
      break;
    case BinaryOp::And:
      result = x != 0 && y != 0;
      break;
    case BinaryOp::Or:
      result = x != 0 || y != 0;
      break;
    case BinaryOp::Pow:
      break; // launchPow
    }
    storeInteger(args.out, type, at[0], result);
  }
}

/// base ** exponent for integers, modulo 2^64; negative exponents give
/// 1 / base^n truncated. False for 0 ** negative.
__device__ inline bool integerPower(int64_t base, int64_t exponent, uint64_t &result) {
  if (exponent < 0) {
    if (base == 0)
      return false;
    result = base == 1 ? 1 : base == -1 ? (exponent % 2 == 0 ? 1 : ~uint64_t(0)) : 0;
    return true;
  }
  uint64_t value = 1, factor = uint64_t(base);
  for (auto e = uint64_t(exponent); e; e >>= 1) {
    if (e & 1)
      value *= factor;
    factor *= factor;
  }
  result = value;
  return true;
}

/// Every pair of base and exponent types: a float base computes in fp32, an
/// integer base with a float exponent in double (then truncated like cast),
/// two integers exactly.
__global__ void powKernel(ElementwiseArgs<3> args) {
  const DType base = args.types[1], exponent = args.types[2];
  for (int64_t i = firstIndex(); i < args.count; i += gridStride()) {
    int64_t at[3];
    offsetsAt(args, i, at);
    if (isRealType(base)) {
      const float x = float(loadReal(args.in[0], base, at[1]));
      const float y = float(loadNumber(args.in[1], exponent, at[2]));
      storeReal(args.out, base, at[0], powf(x, y));
      continue;
    }
    const int64_t x = loadInteger(args.in[0], base, at[1]);
    uint64_t result = 0;
    if (isRealType(exponent)) {
      const double y = loadReal(args.in[1], exponent, at[2]);
      result = uint64_t(saturatingTruncate(pow(double(x), y), base));
    } else if (!integerPower(x, loadInteger(args.in[1], exponent, at[2]), result)) {
      reportError(args.errors, DeviceErrorCode::ZeroToNegative, 0, 0);
    }
    storeInteger(args.out, base, at[0], result);
  }
}

/// is_nan (op 0) or is_inf (op bit 0, with bit 1 detecting +inf and bit 2
/// -inf) of any float type into bool.
__global__ void classifyKernel(ElementwiseArgs<2> args) {
  const DType type = args.types[1];
  auto *out = static_cast<uint8_t *>(args.out);
  const bool inf = args.op & 1, positive = args.op & 2, negative = args.op & 4;
  for (int64_t i = firstIndex(); i < args.count; i += gridStride()) {
    const double x = loadReal(args.in[0], type, i);
    out[i] = inf ? isinf(x) && (x > 0 ? positive : negative) : isnan(x);
  }
}

template <typename V> __device__ inline bool holds(int predicate, V x, V y) {
  switch (static_cast<ComparePredicate>(predicate)) {
  case ComparePredicate::Eq:
    return x == y;
  case ComparePredicate::Lt:
    return x < y;
  case ComparePredicate::Le:
    return x <= y;
  case ComparePredicate::Gt:
    return x > y;
  case ComparePredicate::Ge:
    return x >= y;
  }
  return false;
}

/// Floats compare as the doubles they are exactly (NaN compares false),
/// integers as int64, bools as 0/1.
__global__ void compareKernel(ElementwiseArgs<3> args) {
  const DType type = args.types[1];
  const bool real = isRealType(type);
  auto *out = static_cast<uint8_t *>(args.out);
  for (int64_t i = firstIndex(); i < args.count; i += gridStride()) {
    int64_t at[3];
    offsetsAt(args, i, at);
    out[at[0]] =
        real ? holds(args.op, loadReal(args.in[0], type, at[1]), loadReal(args.in[1], type, at[2]))
             : holds(args.op, loadInteger(args.in[0], type, at[1]),
                     loadInteger(args.in[1], type, at[2]));
  }
}

/// Selecting moves elements without looking at them: only their size matters.
template <typename U> __global__ void whereKernel(ElementwiseArgs<4> args) {
  const auto *condition = static_cast<const uint8_t *>(args.in[0]);
  const U *x = static_cast<const U *>(args.in[1]);
  const U *y = static_cast<const U *>(args.in[2]);
  U *out = static_cast<U *>(args.out);
  for (int64_t i = firstIndex(); i < args.count; i += gridStride()) {
    int64_t at[4];
    offsetsAt(args, i, at);
    out[at[0]] = condition[at[1]] ? x[at[2]] : y[at[3]];
  }
}

/// An integer as a float of `dtype`, rounded once (CUDA's _rn conversions
/// round the 64-bit integer directly, never through a double).
__device__ inline void storeIntegerAsReal(void *data, DType dtype, int64_t i, int64_t value) {
  switch (dtype) {
  case DType::F32:
    static_cast<float *>(data)[i] = __ll2float_rn(value);
    break;
  case DType::F16:
    static_cast<__half *>(data)[i] = __ll2half_rn(value);
    break;
  case DType::BF16:
    static_cast<__nv_bfloat16 *>(data)[i] = __ll2bfloat16_rn(value);
    break;
  case DType::F64:
    static_cast<double *>(data)[i] = __ll2double_rn(value);
    break;
  default:
    break;
  }
}

/// The CPU's cast rules: to bool is x != 0 (NaN too); float to integer
/// truncates and saturates (NaN: 0); integers wrap; to a float rounds once
/// (every float holds exactly in a double, which then rounds once).
__global__ void castKernel(ElementwiseArgs<2> args) {
  const DType to = args.types[0], from = args.types[1];
  for (int64_t i = firstIndex(); i < args.count; i += gridStride()) {
    if (isRealType(from)) {
      const double value = loadReal(args.in[0], from, i);
      if (to == DType::Bool)
        static_cast<uint8_t *>(args.out)[i] = value != 0.0;
      else if (isRealType(to))
        storeReal(args.out, to, i, value);
      else
        storeInteger(args.out, to, i, uint64_t(saturatingTruncate(value, to)));
    } else {
      const int64_t value = loadInteger(args.in[0], from, i);
      if (isRealType(to))
        storeIntegerAsReal(args.out, to, i, value);
      else
        storeInteger(args.out, to, i, uint64_t(value)); // Bool: value != 0
    }
  }
}

/// fn(T{}) for the storage type of F32, F16 or BF16.
template <typename Fn> void dispatchFloat(DType dtype, Fn &&fn) {
  switch (dtype) {
  case DType::F16:
    fn(__half());
    break;
  case DType::BF16:
    fn(__nv_bfloat16());
    break;
  default:
    fn(float());
    break;
  }
}

/// Blocks for a kernel that takes 16-byte packs when vectorized.
template <typename T, int N> unsigned blocksOf(const ElementwiseArgs<N> &args) {
  return blocksFor(args.vectorized ? args.count / int64_t(16 / sizeof(T)) : args.count);
}

} // namespace

void launchUnaryFloat(const ElementwiseArgs<2> &args, cudaStream_t stream) {
  dispatchFloat(args.types[0], [&](auto tag) {
    using T = decltype(tag);
    unaryFloatKernel<T><<<blocksOf<T>(args), kThreads, 0, stream>>>(args);
  });
}

void launchUnaryInteger(const ElementwiseArgs<2> &args, cudaStream_t stream) {
  unaryIntegerKernel<<<blocksFor(args.count), kThreads, 0, stream>>>(args);
}

void launchBinaryFloat(const ElementwiseArgs<3> &args, cudaStream_t stream) {
  dispatchFloat(args.types[0], [&](auto tag) {
    using T = decltype(tag);
    binaryFloatKernel<T><<<blocksOf<T>(args), kThreads, 0, stream>>>(args);
  });
}

void launchBinaryInteger(const ElementwiseArgs<3> &args, cudaStream_t stream) {
  binaryIntegerKernel<<<blocksFor(args.count), kThreads, 0, stream>>>(args);
}

void launchPow(const ElementwiseArgs<3> &args, cudaStream_t stream) {
  powKernel<<<blocksFor(args.count), kThreads, 0, stream>>>(args);
}

void launchClassify(const ElementwiseArgs<2> &args, cudaStream_t stream) {
  classifyKernel<<<blocksFor(args.count), kThreads, 0, stream>>>(args);
}

void launchCompare(const ElementwiseArgs<3> &args, cudaStream_t stream) {
  compareKernel<<<blocksFor(args.count), kThreads, 0, stream>>>(args);
}

void launchWhere(const ElementwiseArgs<4> &args, cudaStream_t stream) {
  const unsigned blocks = blocksFor(args.count);
  switch (dtypeSize(args.types[0])) {
  case 1:
    whereKernel<uint8_t><<<blocks, kThreads, 0, stream>>>(args);
    break;
  case 2:
    whereKernel<uint16_t><<<blocks, kThreads, 0, stream>>>(args);
    break;
  case 4:
    whereKernel<uint32_t><<<blocks, kThreads, 0, stream>>>(args);
    break;
  default:
    whereKernel<uint64_t><<<blocks, kThreads, 0, stream>>>(args);
    break;
  }
}

void launchCast(const ElementwiseArgs<2> &args, cudaStream_t stream) {
  castKernel<<<blocksFor(args.count), kThreads, 0, stream>>>(args);
}

} // namespace shardc::rt::cuda::detail
