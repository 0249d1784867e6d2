//===- Binary.cpp - Broadcasting binary ops, compare and where -------------===//
#include "runtime/cpu/Elementwise.h"

#include "runtime/cpu/Checks.h"
#include "runtime/cpu/KernelSupport.h"
#include "runtime/cpu/Parallel.h"

#include <atomic>
#include <cmath>
#include <limits>

namespace shardc::rt::cpu {
namespace {

using namespace detail;

/// out[i] = fn(a[...], b[...]) over the broadcast walk, with the common
/// stride patterns (both contiguous, one side a repeated scalar) as separate
/// loops the compiler can vectorize.
template <typename O, typename A, typename B, typename Fn>
void zip(const Walk<3> &walk, int64_t count, int64_t cost, O *out, const A *a,
         const B *b, Fn fn) {
  const int64_t sa = walk.innerStride(1), sb = walk.innerStride(2);
  parallelFor(count, cost, [&](int64_t begin, int64_t end) {
    walk.run(begin, end, {0, 0, 0}, [&](const std::array<int64_t, 3> &at, int64_t n) {
      O *o = out + at[0];
      const A *x = a + at[1];
      const B *y = b + at[2];
      if (sa == 1 && sb == 1) {
        for (int64_t i = 0; i < n; ++i)
          o[i] = fn(x[i], y[i]);
      } else if (sa == 0 && sb == 1) {
        const A xv = *x;
        for (int64_t i = 0; i < n; ++i)
          o[i] = fn(xv, y[i]);
      } else if (sa == 1 && sb == 0) {
        const B yv = *y;
        for (int64_t i = 0; i < n; ++i)
          o[i] = fn(x[i], yv);
      } else {
        for (int64_t i = 0; i < n; ++i)
          o[i] = fn(x[i * sa], y[i * sb]);
      }
    });
  });
}

/// Python's %: the truncated remainder moved into the divisor's sign (a zero
/// takes it too), which gives ONNX Mod-28's special cases for floats.
template <typename C> C flooredMod(C a, C b) {
  const C r = std::fmod(a, b);
  if (r == 0)
    return std::copysign(C(0), b);
  return (r < 0) != (b < 0) ? r + b : r;
}

template <typename T>
void floatArithmetic(BinaryOp op, const Walk<3> &walk, int64_t count, T *out,
                     const T *a, const T *b) {
  using C = ComputeT<T>;
  auto run = [&](auto fn) {
    zip(walk, count, 1, out, a, b,
        [fn](T x, T y) { return store<T>(fn(load(x), load(y))); });
  };
  switch (op) {
  case BinaryOp::Add: run([](C x, C y) { return x + y; }); break;
  case BinaryOp::Sub: run([](C x, C y) { return x - y; }); break;
  case BinaryOp::Mul: run([](C x, C y) { return x * y; }); break;
  case BinaryOp::Div: run([](C x, C y) { return x / y; }); break;
  case BinaryOp::Mod: run([](C x, C y) { return flooredMod(x, y); }); break;
  case BinaryOp::FMod: run([](C x, C y) { return std::fmod(x, y); }); break;
  // NaN wins (numpy maximum/minimum); std::max would depend on the order.
  case BinaryOp::Max: run([](C x, C y) { return x >= y || x != x ? x : y; }); break;
  case BinaryOp::Min: run([](C x, C y) { return x <= y || x != x ? x : y; }); break;
  default: break;
  }
}

/// Integer arithmetic in 64 bits, wrapped to T. Returns false on a zero
/// divisor (the quotient has no value to write).
template <typename T>
bool intArithmetic(BinaryOp op, const Walk<3> &walk, int64_t count, T *out,
                   const T *a, const T *b) {
  auto run = [&](auto fn) { zip(walk, count, 1, out, a, b, fn); };
  switch (op) {
  case BinaryOp::Add:
    run([](T x, T y) { return wrapTo<T>(uint64_t(int64_t(x)) + uint64_t(int64_t(y))); });
    return true;
  case BinaryOp::Sub:
    run([](T x, T y) { return wrapTo<T>(uint64_t(int64_t(x)) - uint64_t(int64_t(y))); });
    return true;
  case BinaryOp::Mul:
    run([](T x, T y) { return wrapTo<T>(uint64_t(int64_t(x)) * uint64_t(int64_t(y))); });
    return true;
  case BinaryOp::Max: run([](T x, T y) { return x > y ? x : y; }); return true;
  case BinaryOp::Min: run([](T x, T y) { return x < y ? x : y; }); return true;
  case BinaryOp::Mod:
  case BinaryOp::FMod: {
    std::atomic<bool> byZero{false};
    const bool floored = op == BinaryOp::Mod;
    run([&byZero, floored](T x, T y) {
      if (y == 0) {
        byZero.store(true, std::memory_order_relaxed);
        return T(0);
      }
      // INT64_MIN % -1 is UB in C++; the remainder is 0.
      const int64_t a = int64_t(x), b = int64_t(y);
      int64_t r = b == -1 ? 0 : a % b; // truncated: the dividend's sign
      if (floored && r != 0 && (r < 0) != (b < 0))
        r += b;
      return T(r);
    });
    return !byZero.load();
  }
  case BinaryOp::Div: {
    std::atomic<bool> byZero{false};
    run([&byZero](T x, T y) {
      if (y == 0) {
        byZero.store(true, std::memory_order_relaxed);
        return T(0);
      }
      // INT64_MIN / -1 is UB in C++; negating in uint64_t wraps instead.
      if (int64_t(y) == -1)
        return wrapTo<T>(uint64_t(0) - uint64_t(int64_t(x)));
      return wrapTo<T>(uint64_t(int64_t(x) / int64_t(y))); // truncates toward zero
    });
    return !byZero.load();
  }
  default: return true;
  }
}

/// float -> integer T: truncate, NaN -> 0, saturate (the cast rule).
template <typename T> T saturatingTruncate(double value) {
  if (value != value)
    return T(0);
  const double truncated = std::trunc(value);
  if (truncated <= double(std::numeric_limits<T>::min()))
    return std::numeric_limits<T>::min();
  // T's max may round up in double (2^63 - 1 -> 2^63): compare with >=.
  if (truncated >= double(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return T(truncated);
}

/// base ** exponent for integers by binary exponentiation, modulo 2^64 and
/// then wrapped. Negative exponents: 1 / base^n truncated toward zero.
template <typename T> bool intPow(T base, int64_t exponent, T &result) {
  if (exponent < 0) {
    if (base == 0)
      return false;
    if (base == 1)
      result = 1;
    else if (int64_t(base) == -1)
      result = exponent % 2 == 0 ? T(1) : T(-1);
    else
      result = 0;
    return true;
  }
  uint64_t value = 1, factor = uint64_t(int64_t(base));
  for (auto e = uint64_t(exponent); e; e >>= 1) {
    if (e & 1)
      value *= factor;
    factor *= factor;
  }
  result = wrapTo<T>(value);
  return true;
}

/// Pow for base type T and exponent type E (any numeric pair). Returns false
/// on an integer 0 ** negative.
template <typename T, typename E>
bool power(const Walk<3> &walk, int64_t count, T *out, const T *a, const E *b) {
  if constexpr (kIsFloat<T>) {
    using C = ComputeT<T>;
    zip(walk, count, 16, out, a, b, [](T x, E y) {
      return store<T>(std::pow(load(x), C(load(y))));
    });
    return true;
  } else if constexpr (kIsFloat<E>) {
    zip(walk, count, 16, out, a, b, [](T x, E y) {
      return saturatingTruncate<T>(std::pow(double(x), double(load(y))));
    });
    return true;
  } else {
    std::atomic<bool> failed{false};
    zip(walk, count, 8, out, a, b, [&failed](T x, E y) {
      T result = 0;
      if (!intPow(x, int64_t(y), result))
        failed.store(true, std::memory_order_relaxed);
      return result;
    });
    return !failed.load();
  }
}

} // namespace

Status binary(BinaryOp op, const TensorView &lhs, const TensorView &rhs,
              const TensorView &out) {
  const char *name = binaryOpName(op);
  SHARDC_KERNEL_TRY(checkBinary(op, lhs, rhs, out));
  const DType type = lhs.dtype;
  Walk<3> walk;
  SHARDC_KERNEL_TRY(broadcastWalk<2>(name, {&lhs, &rhs}, out, walk));
  const int64_t count = out.numel();
  if (count == 0)
    return Status::success();

  if (op == BinaryOp::And || op == BinaryOp::Or) {
    const bool isAnd = op == BinaryOp::And;
    zip(walk, count, 1, out.as<uint8_t>(), lhs.as<const uint8_t>(), rhs.as<const uint8_t>(),
        [isAnd](uint8_t x, uint8_t y) -> uint8_t {
          return isAnd ? (x != 0 && y != 0) : (x != 0 || y != 0);
        });
    return Status::success();
  }
  bool ok = true;
  if (op == BinaryOp::Pow) {
    dispatchNumber(type, [&](auto base) {
      using T = decltype(base);
      dispatchNumber(rhs.dtype, [&](auto exponent) {
        using E = decltype(exponent);
        ok = power(walk, count, out.as<T>(), lhs.as<const T>(), rhs.as<const E>());
      });
    });
    return ok ? Status::success() : fail(name, "integer 0 to a negative power");
  }
  if (!dispatchFloat(type, [&](auto tag) {
        using T = decltype(tag);
        floatArithmetic(op, walk, count, out.as<T>(), lhs.as<const T>(), rhs.as<const T>());
      }))
    dispatchInt(type, [&](auto tag) {
      using T = decltype(tag);
      ok = intArithmetic(op, walk, count, out.as<T>(), lhs.as<const T>(), rhs.as<const T>());
    });
  // Both remainders report as "mod", the graph op's name (the CUDA kernels
  // cannot tell them apart in their device error).
  const bool remainder = op == BinaryOp::Mod || op == BinaryOp::FMod;
  return ok ? Status::success() : fail(remainder ? "mod" : name, "integer division by zero");
}

namespace {

template <typename T>
void compareAs(ComparePredicate predicate, const Walk<3> &walk, int64_t count,
               uint8_t *out, const T *a, const T *b) {
  // Bool compares as its truth value; F16/BF16 as the float they hold.
  auto value = [](T x) {
    if constexpr (std::is_same_v<T, Bool8>)
      return int(x.value != 0);
    else
      return load(x);
  };
  auto run = [&](auto fn) {
    zip(walk, count, 1, out, a, b,
        [&value, fn](T x, T y) -> uint8_t { return fn(value(x), value(y)); });
  };
  switch (predicate) {
  case ComparePredicate::Eq: run([](auto x, auto y) { return x == y; }); break;
  case ComparePredicate::Lt: run([](auto x, auto y) { return x < y; }); break;
  case ComparePredicate::Le: run([](auto x, auto y) { return x <= y; }); break;
  case ComparePredicate::Gt: run([](auto x, auto y) { return x > y; }); break;
  case ComparePredicate::Ge: run([](auto x, auto y) { return x >= y; }); break;
  }
}

} // namespace

Status compare(ComparePredicate predicate, const TensorView &lhs,
               const TensorView &rhs, const TensorView &out) {
  const char *name = "compare";
  SHARDC_KERNEL_TRY(checkCompare(lhs, rhs, out));
  Walk<3> walk;
  SHARDC_KERNEL_TRY(broadcastWalk<2>(name, {&lhs, &rhs}, out, walk));
  const int64_t count = out.numel();
  if (count == 0)
    return Status::success();
  dispatchAll(lhs.dtype, [&](auto tag) {
    using T = decltype(tag);
    compareAs(predicate, walk, count, out.as<uint8_t>(), lhs.as<const T>(),
              rhs.as<const T>());
  });
  return Status::success();
}

Status where(const TensorView &condition, const TensorView &trueValue,
             const TensorView &falseValue, const TensorView &out) {
  const char *name = "where";
  SHARDC_KERNEL_TRY(checkWhere(condition, trueValue, falseValue, out));
  Walk<4> walk;
  SHARDC_KERNEL_TRY(broadcastWalk<3>(name, {&condition, &trueValue, &falseValue}, out, walk));
  const int64_t count = out.numel();
  if (count == 0)
    return Status::success();
  const int64_t sc = walk.innerStride(1), sx = walk.innerStride(2), sy = walk.innerStride(3);
  const auto *cond = condition.as<const uint8_t>();
  // Selecting moves elements without looking at them: only their size matters.
  dispatchBySize(out.dtype, [&](auto tag) {
    using U = decltype(tag);
    U *result = out.as<U>();
    const U *xs = trueValue.as<const U>();
    const U *ys = falseValue.as<const U>();
    parallelFor(count, 1, [&](int64_t begin, int64_t end) {
      walk.run(begin, end, {0, 0, 0, 0}, [&](const std::array<int64_t, 4> &at, int64_t n) {
        for (int64_t i = 0; i < n; ++i)
          result[at[0] + i] = cond[at[1] + i * sc] ? xs[at[2] + i * sx] : ys[at[3] + i * sy];
      });
    });
  });
  return Status::success();
}

} // namespace shardc::rt::cpu
