//===- MatMul.cpp - matmul and linear over OpenBLAS ------------------------===//
#include "runtime/cpu/MatMul.h"

#include "runtime/cpu/Checks.h"
#include "runtime/cpu/KernelSupport.h"
#include "runtime/cpu/Parallel.h"

#include <cblas.h>

#include <cctype>
#include <climits>
#include <cstring>
#include <initializer_list>

// Declared here as well as in OpenBLAS's cblas.h: Debian's plain cblas.h may
// be netlib's, which lacks it, while the library linked is always OpenBLAS.
extern "C" char *openblas_get_corename(void);

namespace shardc::rt::cpu {
namespace {

using namespace detail;

/// One row-major GEMM, C = A op(B) + beta C, with A [m, k], op(B) [k, n].
/// BLAS wants leading dimensions >= 1 even for empty matrices.
void gemm(int m, int n, int k, const float *a, const float *b, bool transB,
          float beta, float *c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, transB ? CblasTrans : CblasNoTrans, m, n,
              k, 1.0f, a, std::max(k, 1), b, std::max(transB ? k : n, 1), beta, c,
              std::max(n, 1));
}
void gemm(int m, int n, int k, const double *a, const double *b, bool transB,
          double beta, double *c) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, transB ? CblasTrans : CblasNoTrans, m, n,
              k, 1.0, a, std::max(k, 1), b, std::max(transB ? k : n, 1), beta, c,
              std::max(n, 1));
}

/// Half-precision operands widened to fp32 (and the result narrowed back).
template <typename T> std::vector<float> widen(const T *data, int64_t count) {
  std::vector<float> wide(size_t(std::max<int64_t>(count, 0)));
  parallelFor(count, 2, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      wide[size_t(i)] = load(data[i]);
  });
  return wide;
}
template <typename T> void narrow(const float *wide, int64_t count, T *data) {
  parallelFor(count, 2, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      data[i] = store<T>(wide[i]);
  });
}

/// One GEMM C[m,n] (+)= A[m,k] op(B) in storage type T: BLAS for float and
/// double, widened sgemm for Half/BFloat16. `accumulate` keeps C (beta = 1),
/// used by linear to start from the bias.
template <typename T>
void gemmAs(int m, int n, int k, const T *a, const T *b, bool transB,
            bool accumulate, T *c) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    gemm(m, n, k, a, b, transB, accumulate ? T(1) : T(0), c);
  } else {
    std::vector<float> wa = widen(a, int64_t(m) * k), wb = widen(b, int64_t(k) * n);
    std::vector<float> wc = accumulate ? widen(c, int64_t(m) * n)
                                       : std::vector<float>(size_t(int64_t(m) * n));
    gemm(m, n, k, wa.data(), wb.data(), transB, accumulate ? 1.0f : 0.0f, wc.data());
    narrow(wc.data(), int64_t(m) * n, c);
  }
}

/// Integer matmul: exact modulo 2^64, then wrapped to T (the same as wrapping
/// after every step, since truncation to the low bits respects + and *).
template <typename T>
void intMatMul(int64_t m, int64_t n, int64_t k, const T *a, const T *b, T *c) {
  parallelFor(m, n * k, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      for (int64_t j = 0; j < n; ++j) {
        uint64_t sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += uint64_t(int64_t(a[i * k + p])) * uint64_t(int64_t(b[p * n + j]));
        c[i * n + j] = wrapTo<T>(sum);
      }
  });
}

Status checkBlasDims(const char *op, int64_t m, int64_t n, int64_t k) {
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
    return fail(op, "GEMM dims " + std::to_string(m) + " x " + std::to_string(n) +
                        " x " + std::to_string(k) + " exceed BLAS's 32-bit sizes");
  return Status::success();
}

} // namespace

const char *blasCoreName() { return openblas_get_corename(); }

std::string betterBlasCore() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  const std::string core = blasCoreName();
  auto isOneOf = [&](std::initializer_list<const char *> names) {
    for (const char *name : names)
      if (core.size() == std::strlen(name) &&
          std::equal(core.begin(), core.end(), name, [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) ==
                   std::tolower(static_cast<unsigned char>(b));
          }))
        return true;
    return false;
  };
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx512 && !isOneOf({"SkylakeX", "CooperLake", "SapphireRapids"}))
    return "SkylakeX";
  if (!avx512 && avx2 &&
      !isOneOf({"Haswell", "Zen", "SkylakeX", "CooperLake", "SapphireRapids"}))
    return "Haswell";
#endif
  return "";
}

std::string blasKernelWarning() {
  const std::string better = betterBlasCore();
  if (better.empty())
    return "";
  return "OpenBLAS runs its generic '" + std::string(blasCoreName()) +
         "' kernels on this CPU; set OPENBLAS_CORETYPE=" + better +
         " in the environment before starting the process for several times faster GEMMs";
}

Status matmul(const TensorView &lhs, const TensorView &rhs, const TensorView &out) {
  const char *name = "matmul";
  MatMulDims dims;
  SHARDC_CPU_TRY(checkMatMul(lhs, rhs, out, dims));
  const Shape &aBatch = dims.aBatch, &bBatch = dims.bBatch, &batch = dims.batch;
  const int64_t m = dims.m, k = dims.k, n = dims.n;
  if (out.numel() == 0)
    return Status::success();

  const int64_t batches = numElements(batch);
  const Shape aStrides = broadcastStrides(aBatch, batch); // in matrices
  const Shape bStrides = broadcastStrides(bBatch, batch);
  // The matrices (in elements) that batch `index` multiplies.
  auto offsets = [&](int64_t index, int64_t &aOffset, int64_t &bOffset) {
    aOffset = bOffset = 0;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t i = index % batch[d];
      index /= batch[d];
      aOffset += i * aStrides[d];
      bOffset += i * bStrides[d];
    }
    aOffset *= m * k;
    bOffset *= k * n;
  };

  if (isIntType(lhs.dtype)) {
    dispatchInt(lhs.dtype, [&](auto tag) {
      using T = decltype(tag);
      for (int64_t i = 0; i < batches; ++i) {
        int64_t ao, bo;
        offsets(i, ao, bo);
        intMatMul(m, n, k, lhs.as<const T>() + ao, rhs.as<const T>() + bo,
                  out.as<T>() + i * m * n);
      }
    });
    return Status::success();
  }

  // rhs shared by all batches and lhs dense across them: one tall GEMM.
  bool rhsShared = true;
  for (int64_t stride : bStrides)
    rhsShared &= stride == 0;
  const bool fold = rhsShared && numElements(aBatch) == batches;
  SHARDC_CPU_TRY(checkBlasDims(name, fold ? batches * m : m, n, k));
  (void)numThreads(); // settles OpenBLAS's thread count before its first use

  dispatchFloat(lhs.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *aData = lhs.as<const T>();
    const T *bData = rhs.as<const T>();
    T *cData = out.as<T>();
    if (k == 0) { // nothing to sum: zeros (BLAS would not touch C)
      std::fill(cData, cData + out.numel(), store<T>(0));
      return;
    }
    if (fold) {
      gemmAs<T>(int(batches * m), int(n), int(k), aData, bData, false, false, cData);
      return;
    }
    for (int64_t i = 0; i < batches; ++i) {
      int64_t ao, bo;
      offsets(i, ao, bo);
      gemmAs<T>(int(m), int(n), int(k), aData + ao, bData + bo, false, false,
                cData + i * m * n);
    }
  });
  return Status::success();
}

Status linear(const TensorView &input, const TensorView &weight,
              const TensorView *bias, bool transposeWeight, const TensorView &out) {
  const char *name = "linear";
  LinearDims dims;
  SHARDC_CPU_TRY(checkLinear(input, weight, bias, transposeWeight, out, dims));
  const int64_t m = dims.m, k = dims.k, n = dims.n;
  if (m == 0 || n == 0)
    return Status::success();
  SHARDC_CPU_TRY(checkBlasDims(name, m, n, k));
  (void)numThreads();

  dispatchFloat(input.dtype, [&](auto tag) {
    using T = decltype(tag);
    T *c = out.as<T>();
    // Start from the bias (or zeros when K = 0) and let the GEMM accumulate
    // onto it: one pass over out instead of a GEMM pass plus a bias pass.
    const bool start = bias || k == 0;
    if (start) {
      const T *b = bias ? bias->as<const T>() : nullptr;
      parallelFor(m, n, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          for (int64_t j = 0; j < n; ++j)
            c[i * n + j] = b ? b[j] : store<T>(0);
      });
    }
    if (k > 0)
      gemmAs<T>(int(m), int(n), int(k), input.as<const T>(), weight.as<const T>(),
                transposeWeight, start, c);
  });
  return Status::success();
}

} // namespace shardc::rt::cpu
