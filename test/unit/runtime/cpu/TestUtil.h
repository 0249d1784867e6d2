//===- TestUtil.h - Tensors, references and matchers for the CPU kernel tests ===//
//
// Kernels are checked against the graph dialect's constant evaluator
// (ShardcConstEval: the same op semantics, computed in double and rounded
// once) where it has the op, and against naive loops in double here where it
// does not (attention, norms, rotary, linear).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TEST_UNIT_CPUKERNELS_TESTUTIL_H
#define SHARDC_TEST_UNIT_CPUKERNELS_TESTUTIL_H

#include "dialects/Graph/ConstEval/ConstEval.h"
#include "runtime/cpu/CpuKernels.h"
#include "test/unit/runtime/ElementValues.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace shardc::rt::cpu::test {

namespace cf = shardc::constfold;
using CTensor = cf::HostTensor;
using Rng = std::mt19937_64;

inline bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16;
}

inline cf::ScalarType scalarType(DType t) {
  switch (t) {
  case DType::F32: return cf::ScalarType::F32;
  case DType::F16: return cf::ScalarType::F16;
  case DType::BF16: return cf::ScalarType::BF16;
  case DType::F64: return cf::ScalarType::F64;
  case DType::I64: return cf::ScalarType::I64;
  case DType::I32: return cf::ScalarType::I32;
  case DType::I16: return cf::ScalarType::I16;
  case DType::I8: return cf::ScalarType::I8;
  case DType::U8: return cf::ScalarType::U8;
  case DType::Bool: return cf::ScalarType::Bool;
  }
  return cf::ScalarType::F32;
}

/// The kernels' scatter reduction as the reference's (two enums of one list).
inline cf::ScatterReduction scatterReduction(ScatterReduction r) {
  switch (r) {
  case ScatterReduction::None: return cf::ScatterReduction::None;
  case ScatterReduction::Add: return cf::ScatterReduction::Add;
  case ScatterReduction::Mul: return cf::ScatterReduction::Mul;
  case ScatterReduction::Max: return cf::ScatterReduction::Max;
  case ScatterReduction::Min: return cf::ScatterReduction::Min;
  }
  return cf::ScatterReduction::None;
}

/// Element i as a double (exact for every type but I64 beyond 2^53).
inline double getDouble(const HostTensor &t, int64_t i) { return rt::test::elementValue(t, i); }

inline int64_t getInt(const HostTensor &t, int64_t i) {
  const void *p = t.bytes.data();
  switch (t.dtype) {
  case DType::I64: return static_cast<const int64_t *>(p)[i];
  case DType::I32: return static_cast<const int32_t *>(p)[i];
  case DType::I16: return static_cast<const int16_t *>(p)[i];
  case DType::I8: return static_cast<const int8_t *>(p)[i];
  case DType::U8: return static_cast<const uint8_t *>(p)[i];
  case DType::Bool: return static_cast<const uint8_t *>(p)[i] != 0;
  default: return int64_t(getDouble(t, i));
  }
}

/// Stores v (rounded to nearest for the float types, truncated for ints).
inline void setDouble(HostTensor &t, int64_t i, double v) { rt::test::setElementValue(t, i, v); }

inline void setInt(HostTensor &t, int64_t i, int64_t v) {
  void *p = t.bytes.data();
  switch (t.dtype) {
  case DType::I64: static_cast<int64_t *>(p)[i] = v; break;
  case DType::I32: static_cast<int32_t *>(p)[i] = int32_t(v); break;
  case DType::I16: static_cast<int16_t *>(p)[i] = int16_t(v); break;
  case DType::I8: static_cast<int8_t *>(p)[i] = int8_t(v); break;
  case DType::U8: static_cast<uint8_t *>(p)[i] = uint8_t(v); break;
  case DType::Bool: static_cast<uint8_t *>(p)[i] = v != 0; break;
  default: setDouble(t, i, double(v)); break;
  }
}

inline HostTensor make(DType dtype, Shape shape, const std::vector<double> &values) {
  HostTensor t(dtype, std::move(shape));
  for (size_t i = 0; i < values.size() && int64_t(i) < t.numel(); ++i)
    setDouble(t, int64_t(i), values[i]);
  return t;
}

inline HostTensor filled(DType dtype, Shape shape, double value) {
  HostTensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    setDouble(t, i, value);
  return t;
}

/// Uniform floats in [lo, hi], or integers in [lo, hi] (bool: 0/1).
inline HostTensor random(DType dtype, Shape shape, Rng &rng, double lo = -1, double hi = 1) {
  HostTensor t(dtype, std::move(shape));
  if (isFloat(dtype)) {
    std::uniform_real_distribution<double> dist(lo, hi);
    for (int64_t i = 0; i < t.numel(); ++i)
      setDouble(t, i, dist(rng));
  } else {
    std::uniform_int_distribution<int64_t> dist(dtype == DType::Bool ? 0 : int64_t(lo),
                                                dtype == DType::Bool ? 1 : int64_t(hi));
    for (int64_t i = 0; i < t.numel(); ++i)
      setInt(t, i, dist(rng));
  }
  return t;
}

inline CTensor toConst(const HostTensor &t) {
  CTensor c;
  c.type = scalarType(t.dtype);
  c.shape = t.shape;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (isFloat(t.dtype))
      c.floats.push_back(getDouble(t, i));
    else
      c.ints.push_back(getInt(t, i));
  }
  return c;
}

/// The reference result, or a failed test with ConstEval's message.
inline CTensor expectOk(const cf::StatusOr<CTensor> &result) {
  EXPECT_TRUE(result.ok()) << "reference failed: " << result.message();
  return result.ok() ? *result : CTensor{};
}

/// got matches want: same shape; integers/bool equal; floats within
/// atol + rtol * |want| (NaN matches NaN, inf the same inf).
inline ::testing::AssertionResult closeTo(const HostTensor &got, const Shape &shape,
                                          const std::vector<double> &want, double rtol,
                                          double atol = 0) {
  if (got.shape != shape)
    return ::testing::AssertionFailure() << "shape " << formatShape(got.shape)
                                         << ", expected " << formatShape(shape);
  if (int64_t(want.size()) != got.numel())
    return ::testing::AssertionFailure() << want.size() << " expected values for "
                                         << got.numel() << " elements";
  int64_t bad = 0;
  std::ostringstream message;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double g = isFloat(got.dtype) ? getDouble(got, i) : double(getInt(got, i));
    const double w = want[size_t(i)];
    bool same;
    if (std::isnan(w) || std::isinf(w))
      same = std::isnan(w) ? std::isnan(g) : g == w;
    else
      same = std::fabs(g - w) <= atol + rtol * std::fabs(w);
    if (!same && bad++ < 8)
      message << " [" << i << "] got " << g << " want " << w << ";";
  }
  if (bad)
    return ::testing::AssertionFailure() << bad << " of " << got.numel()
                                         << " elements differ:" << message.str();
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult closeTo(const HostTensor &got, const CTensor &want,
                                          double rtol, double atol = 0) {
  if (scalarType(got.dtype) != want.type)
    return ::testing::AssertionFailure() << "type " << dtypeName(got.dtype) << ", expected "
                                         << cf::typeName(want.type);
  if (!cf::isFloat(want.type)) {
    // Exact integer comparison (doubles could blur int64 above 2^53).
    if (got.shape != want.shape || got.numel() != int64_t(want.ints.size()))
      return ::testing::AssertionFailure()
             << "shape " << formatShape(got.shape) << ", expected " << formatShape(want.shape);
    for (int64_t i = 0; i < got.numel(); ++i)
      if (getInt(got, i) != want.ints[size_t(i)])
        return ::testing::AssertionFailure() << "[" << i << "] got " << getInt(got, i)
                                             << " want " << want.ints[size_t(i)];
    return ::testing::AssertionSuccess();
  }
  return closeTo(got, want.shape, want.floats, rtol, atol);
}

/// The address of a view for an optional operand; the temporary lives until
/// the end of the full expression, i.e. through the kernel call.
inline const TensorView *ptr(const TensorView &view) { return &view; }

/// The kernel succeeded.
inline ::testing::AssertionResult succeeded(const Status &status) {
  if (status.ok())
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "failed: " << status.message();
}

/// The kernel failed with a message containing `needle`.
inline ::testing::AssertionResult failsWith(const Status &status, const std::string &needle) {
  if (status.ok())
    return ::testing::AssertionFailure() << "succeeded, expected an error with '" << needle << "'";
  if (status.message().find(needle) == std::string::npos)
    return ::testing::AssertionFailure() << "message '" << status.message()
                                         << "' lacks '" << needle << "'";
  return ::testing::AssertionSuccess();
}

/// Bitwise equality (for checks that threading changes nothing).
inline bool sameBits(const HostTensor &a, const HostTensor &b) {
  return a.dtype == b.dtype && a.shape == b.shape && a.bytes == b.bytes;
}

/// Every element of `t` as a double, in order.
inline std::vector<double> valuesOf(const HostTensor &t) {
  std::vector<double> values;
  for (int64_t i = 0; i < t.numel(); ++i)
    values.push_back(getDouble(t, i));
  return values;
}

/// linear's product in double: x [..., K] x w [K, N] (or [N, K] when
/// transposed) + bias, written out.
inline std::vector<double> naiveLinear(const HostTensor &x, const HostTensor &w, const HostTensor *bias,
                                bool transposed) {
  const int64_t k = x.shape.back(), n = w.shape[transposed ? 0 : 1], m = x.numel() / k;
  std::vector<double> out;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = bias ? getDouble(*bias, j) : 0;
      for (int64_t p = 0; p < k; ++p)
        sum += getDouble(x, i * k + p) * getDouble(w, transposed ? j * k + p : p * n + j);
      out.push_back(sum);
    }
  return out;
}

/// Runs the body with `threads` kernel threads, restoring the setting after.
class ThreadScope {
public:
  explicit ThreadScope(int threads) : saved_(numThreads()) { setNumThreads(threads); }
  ~ThreadScope() { setNumThreads(saved_); }

private:
  int saved_;
};

} // namespace shardc::rt::cpu::test

#endif // SHARDC_TEST_UNIT_CPUKERNELS_TESTUTIL_H
