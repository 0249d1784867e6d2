//===- MatMul.cpp - matmul and linear over oneDNN's sgemm ------------------===//
#include "runtime/cpu/MatMul.h"

#include "runtime/cpu/Checks.h"
#include "runtime/cpu/KernelSupport.h"
#include "runtime/cpu/Parallel.h"

#include <oneapi/dnnl/dnnl.h>

namespace shardc::rt::cpu {
namespace {

using namespace detail;

/// One row-major GEMM, C = op(A) op(B) + beta C, with op(A) [m, k] and op(B)
/// [k, n]; a transposed A is stored [k, m], a transposed B [n, k].
/// Leading dimensions must be >= 1 even for empty matrices.
Status gemm(const char *op, int64_t m, int64_t n, int64_t k, const float *a, bool transA,
            const float *b, bool transB, float beta, float *c) {
  const dnnl_status_t status = dnnl_sgemm(
      transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, 1.0f, a,
      std::max<int64_t>(transA ? m : k, 1), b, std::max<int64_t>(transB ? k : n, 1), beta, c,
      std::max<int64_t>(n, 1));
  if (status != dnnl_success)
    return fail(op, "oneDNN's sgemm refused " + std::to_string(m) + " x " + std::to_string(n) +
                        " x " + std::to_string(k) + " (dnnl status " +
                        std::to_string(int(status)) + ")");
  return Status::success();
}

/// Element (i, p) of op(A) [m, k] and (p, j) of op(B) [k, n], as gemm stores them.
template <typename T>
T elementOfA(const T *a, bool transA, int64_t m, int64_t k, int64_t i, int64_t p) {
  return transA ? a[p * m + i] : a[i * k + p];
}
template <typename T>
T elementOfB(const T *b, bool transB, int64_t k, int64_t n, int64_t p, int64_t j) {
  return transB ? b[j * k + p] : b[p * n + j];
}

/// fp64 has no oneDNN GEMM; it appears in shape and statistics computations,
/// not in a model's hot path, so a plain loop over rows of C serves: each row
/// is a sum of rows of op(B).
Status gemm(const char *, int64_t m, int64_t n, int64_t k, const double *a, bool transA,
            const double *b, bool transB, double beta, double *c) {
  parallelFor(m, n * k, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      double *row = c + i * n;
      for (int64_t j = 0; j < n; ++j)
        row[j] = beta == 0 ? 0.0 : beta * row[j];
      for (int64_t p = 0; p < k; ++p) {
        const double scale = elementOfA(a, transA, m, k, i, p);
        for (int64_t j = 0; j < n; ++j)
          row[j] += scale * elementOfB(b, transB, k, n, p, j);
      }
    }
  });
  return Status::success();
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

/// One GEMM C[m,n] (+)= op(A)[m,k] op(B) in storage type T: BLAS for float and
/// double, widened sgemm for Half/BFloat16. `accumulate` keeps C (beta = 1),
/// used by linear to start from the bias.
template <typename T>
Status gemmAs(const char *op, int64_t m, int64_t n, int64_t k, const T *a, bool transA,
              const T *b, bool transB, bool accumulate, T *c) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return gemm(op, m, n, k, a, transA, b, transB, accumulate ? T(1) : T(0), c);
  } else {
    std::vector<float> wa = widen(a, m * k), wb = widen(b, k * n);
    std::vector<float> wc = accumulate ? widen(c, m * n) : std::vector<float>(size_t(m * n));
    SHARDC_KERNEL_TRY(gemm(op, m, n, k, wa.data(), transA, wb.data(), transB,
                           accumulate ? 1.0f : 0.0f, wc.data()));
    narrow(wc.data(), m * n, c);
    return Status::success();
  }
}

/// Integer matmul: exact modulo 2^64, then wrapped to T (the same as wrapping
/// after every step, since truncation to the low bits respects + and *).
template <typename T>
void intMatMul(int64_t m, int64_t n, int64_t k, const T *a, bool transA, const T *b,
               bool transB, T *c) {
  parallelFor(m, n * k, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      for (int64_t j = 0; j < n; ++j) {
        uint64_t sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += uint64_t(int64_t(elementOfA(a, transA, m, k, i, p))) *
                 uint64_t(int64_t(elementOfB(b, transB, k, n, p, j)));
        c[i * n + j] = wrapTo<T>(sum);
      }
  });
}

/// Whether the batches of a batched matmul should be shared out among the
/// threads, each multiplying whole matrices on one thread, rather than each
/// matrix threaded in turn: attention's [b, h, s, s] x [b, h, s, d] products
/// are small GEMMs that waking the team for every one wastes. Only when the
/// batches divide evenly enough that no thread idles long.
bool splitBatches(int64_t batches, int threads) {
  return threads > 1 && batches >= threads && (batches % threads == 0 || batches >= 4 * threads);
}

} // namespace

Status matmul(const TensorView &lhs, const TensorView &rhs, const TensorView &out,
              bool transposeLhs, bool transposeRhs) {
  const char *name = "matmul";
  MatMulDims dims;
  SHARDC_KERNEL_TRY(checkMatMul(lhs, rhs, out, dims, transposeLhs, transposeRhs));
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
        intMatMul(m, n, k, lhs.as<const T>() + ao, transposeLhs, rhs.as<const T>() + bo,
                  transposeRhs, out.as<T>() + i * m * n);
      }
    });
    return Status::success();
  }

  // rhs shared by all batches and lhs dense across them (and stored as rows
  // of op(A)): one tall GEMM.
  bool rhsShared = true;
  for (int64_t stride : bStrides)
    rhsShared &= stride == 0;
  const bool fold = rhsShared && numElements(aBatch) == batches && !transposeLhs;
  // Applies the thread count to this thread, whose OpenMP setting sizes the GEMM.
  const int threads = numThreads();

  Status status = Status::success();
  dispatchFloat(lhs.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *aData = lhs.as<const T>();
    const T *bData = rhs.as<const T>();
    T *cData = out.as<T>();
    if (k == 0) { // nothing to sum: zeros (a GEMM with beta = 0 over K = 0 is not asked for)
      std::fill(cData, cData + out.numel(), store<T>(0));
      return;
    }
    if (fold) {
      status = gemmAs<T>(name, batches * m, n, k, aData, false, bData, transposeRhs, false, cData);
      return;
    }
    auto multiply = [&](int64_t i) {
      int64_t ao, bo;
      offsets(i, ao, bo);
      return gemmAs<T>(name, m, n, k, aData + ao, transposeLhs, bData + bo, transposeRhs, false,
                       cData + i * m * n);
    };
    if (!splitBatches(batches, threads)) {
      for (int64_t i = 0; i < batches && status; ++i)
        status = multiply(i);
      return;
    }
    // Each thread its own batches, its GEMMs single-threaded; the first
    // failure (there is none but a refused shape) is kept.
    std::vector<Status> failures(size_t(batches), Status::success());
    parallelFor(batches, m * n * k, [&](int64_t begin, int64_t end) {
      SingleThreadScope single;
      for (int64_t i = begin; i < end; ++i)
        failures[size_t(i)] = multiply(i);
    });
    for (Status &failure : failures)
      if (!failure && status)
        status = std::move(failure);
  });
  return status;
}

Status linear(const TensorView &input, const TensorView &weight,
              const TensorView *bias, bool transposeWeight, const TensorView &out) {
  const char *name = "linear";
  LinearDims dims;
  SHARDC_KERNEL_TRY(checkLinear(input, weight, bias, transposeWeight, out, dims));
  const int64_t m = dims.m, k = dims.k, n = dims.n;
  if (m == 0 || n == 0)
    return Status::success();
  (void)numThreads(); // as in matmul

  Status status = Status::success();
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
      status = gemmAs<T>(name, m, n, k, input.as<const T>(), false, weight.as<const T>(),
                         transposeWeight, start, c);
  });
  return status;
}

} // namespace shardc::rt::cpu
