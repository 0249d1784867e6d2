//===- Gemm.cpp - one cuBLASLt GEMM, its algorithm cached -----------------===//
#include "runtime/cuda/Gemm.h"

#include "runtime/cuda/CudaStatus.h"
#include "runtime/cuda/HostSupport.h"
#include "runtime/cuda/StreamResources.h"

#include <cublasLt.h>

#include <array>
#include <climits>
#include <map>
#include <mutex>
#include <string>

namespace shardc::rt::cuda::detail {
namespace {

Status cublasStatus(cublasStatus_t status, const char *api) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return {};
  return Status::error(std::string(api) + ": " + cublasLtGetStatusString(status));
}

#define SHARDC_CUBLAS_TRY(call, api)                                                               \
  do {                                                                                             \
    ::shardc::rt::Status status_ = cublasStatus((call), api);                                      \
    if (!status_.ok())                                                                             \
      return status_;                                                                              \
  } while (false)

/// The largest power of two (up to 256) dividing `value`; 256 for 0.
int64_t alignmentOf(uint64_t value) {
  int64_t alignment = 1;
  while (alignment < 256 && value % uint64_t(alignment * 2) == 0)
    alignment *= 2;
  return alignment;
}

StatusOr<cublasLtHandle_t> handleFor(int device) {
  static std::mutex mutex;
  static std::map<int, cublasLtHandle_t> handles;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = handles.find(device);
  if (found != handles.end())
    return found->second;
  cublasLtHandle_t handle;
  SHARDC_CUBLAS_TRY(cublasLtCreate(&handle), "cublasLtCreate");
  handles[device] = handle;
  return handle;
}

/// Everything the heuristic's answer depends on.
using ProblemKey = std::array<int64_t, 20>;

struct CachedAlgorithm {
  bool found = false;
  cublasLtMatmulAlgo_t algorithm;
};

std::mutex cacheMutex;
std::map<ProblemKey, CachedAlgorithm> cache;

/// The cuBLASLt descriptors of one call, destroyed with it.
struct Descriptors {
  cublasLtMatmulDesc_t operation = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  ~Descriptors() {
    if (preference)
      cublasLtMatmulPreferenceDestroy(preference);
    if (d)
      cublasLtMatrixLayoutDestroy(d);
    if (b)
      cublasLtMatrixLayoutDestroy(b);
    if (a)
      cublasLtMatrixLayoutDestroy(a);
    if (operation)
      cublasLtMatmulDescDestroy(operation);
  }
};

template <typename T>
Status setLayout(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attribute,
                 T value) {
  return cublasStatus(cublasLtMatrixLayoutSetAttribute(layout, attribute, &value, sizeof(value)),
                      "cublasLtMatrixLayoutSetAttribute");
}

Status makeLayout(cublasLtMatrixLayout_t &layout, cudaDataType type, int64_t rows, int64_t cols,
                  int64_t ld, int64_t batch, int64_t stride) {
  SHARDC_CUBLAS_TRY(cublasLtMatrixLayoutCreate(&layout, type, uint64_t(rows), uint64_t(cols), ld),
                    "cublasLtMatrixLayoutCreate");
  if (batch == 1)
    return {};
  SHARDC_KERNEL_TRY(setLayout(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t(batch)));
  return setLayout(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, stride);
}

} // namespace

StatusOr<bool> runGemm(const Gemm &gemm, cudaStream_t stream) {
  if (gemm.batch > INT32_MAX)
    return Status::error("a GEMM of " + std::to_string(gemm.batch) +
                         " batches exceeds cuBLASLt's 32-bit batch count");
  cudaDataType type = CUDA_R_32F, scaleType = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F; // not ..._FAST_TF32: full fp32
  switch (gemm.dtype) {
  case DType::F32:
    break;
  case DType::F16:
    type = CUDA_R_16F;
    break;
  case DType::BF16:
    type = CUDA_R_16BF;
    break;
  case DType::F64:
    type = scaleType = CUDA_R_64F;
    compute = CUBLAS_COMPUTE_64F;
    break;
  default:
    return Status::error(std::string("no cuBLASLt GEMM for ") + dtypeName(gemm.dtype));
  }
  int device = 0;
  SHARDC_CUDA_TRY(cudaGetDevice(&device));
  auto handle = handleFor(device);
  if (!handle)
    return handle.status();
  const StreamResources resources = resourcesOf(stream);

  // Alignment of every matrix any batch touches: the base pointer's and
  // that of the batch stride in bytes.
  const uint64_t size = dtypeSize(gemm.dtype);
  auto alignment = [&](const void *pointer, int64_t stride) {
    const int64_t base = alignmentOf(reinterpret_cast<uintptr_t>(pointer));
    const int64_t step = gemm.batch > 1 ? alignmentOf(uint64_t(stride) * size) : 256;
    return base < step ? base : step;
  };
  const int64_t alignA = alignment(gemm.a, gemm.strideA);
  const int64_t alignB = alignment(gemm.b, gemm.strideB);
  const int64_t alignD = alignment(gemm.d, gemm.strideD);
  const int64_t alignBias = gemm.bias ? alignment(gemm.bias, 0) : 0;

  Descriptors descriptors;
  SHARDC_CUBLAS_TRY(cublasLtMatmulDescCreate(&descriptors.operation, compute, scaleType),
                    "cublasLtMatmulDescCreate");
  const cublasOperation_t transA = gemm.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  SHARDC_CUBLAS_TRY(cublasLtMatmulDescSetAttribute(descriptors.operation,
                                                   CUBLASLT_MATMUL_DESC_TRANSA, &transA,
                                                   sizeof(transA)),
                    "cublasLtMatmulDescSetAttribute");
  if (gemm.bias) {
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    SHARDC_CUBLAS_TRY(cublasLtMatmulDescSetAttribute(descriptors.operation,
                                                     CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                                     sizeof(epilogue)),
                      "cublasLtMatmulDescSetAttribute");
    SHARDC_CUBLAS_TRY(cublasLtMatmulDescSetAttribute(descriptors.operation,
                                                     CUBLASLT_MATMUL_DESC_BIAS_POINTER, &gemm.bias,
                                                     sizeof(gemm.bias)),
                      "cublasLtMatmulDescSetAttribute");
  }
  SHARDC_KERNEL_TRY(makeLayout(descriptors.a, type, gemm.transA ? gemm.k : gemm.m,
                               gemm.transA ? gemm.m : gemm.k, gemm.lda, gemm.batch, gemm.strideA));
  SHARDC_KERNEL_TRY(
      makeLayout(descriptors.b, type, gemm.k, gemm.n, gemm.ldb, gemm.batch, gemm.strideB));
  SHARDC_KERNEL_TRY(
      makeLayout(descriptors.d, type, gemm.m, gemm.n, gemm.ldd, gemm.batch, gemm.strideD));

  const ProblemKey key = {device,          int64_t(gemm.dtype),
                          gemm.m,          gemm.n,
                          gemm.k,          gemm.transA,
                          gemm.lda,        gemm.ldb,
                          gemm.ldd,        gemm.batch,
                          gemm.strideA,    gemm.strideB,
                          gemm.strideD,    gemm.bias != nullptr,
                          gemm.accumulate, alignA,
                          alignB,          alignD,
                          alignBias,       int64_t(resources.workspaceBytes)};
  CachedAlgorithm cached;
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    auto found = cache.find(key);
    if (found != cache.end()) {
      cached = found->second;
      known = true;
    }
  }
  if (!known) {
    SHARDC_CUBLAS_TRY(cublasLtMatmulPreferenceCreate(&descriptors.preference),
                      "cublasLtMatmulPreferenceCreate");
    auto prefer = [&](cublasLtMatmulPreferenceAttributes_t attribute, auto value) {
      return cublasStatus(cublasLtMatmulPreferenceSetAttribute(descriptors.preference, attribute,
                                                               &value, sizeof(value)),
                          "cublasLtMatmulPreferenceSetAttribute");
    };
    SHARDC_KERNEL_TRY(
        prefer(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(resources.workspaceBytes)));
    SHARDC_KERNEL_TRY(prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, uint32_t(alignA)));
    SHARDC_KERNEL_TRY(prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, uint32_t(alignB)));
    SHARDC_KERNEL_TRY(prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, uint32_t(alignD)));
    SHARDC_KERNEL_TRY(prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, uint32_t(alignD)));
    cublasLtMatmulHeuristicResult_t result = {};
    int results = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
        *handle, descriptors.operation, descriptors.a, descriptors.b, descriptors.d, descriptors.d,
        descriptors.preference, 1, &result, &results);
    // NOT_SUPPORTED: no algorithm for this problem, an answer like 0 results.
    if (status != CUBLAS_STATUS_NOT_SUPPORTED)
      SHARDC_CUBLAS_TRY(status, "cublasLtMatmulAlgoGetHeuristic");
    cached.found =
        status == CUBLAS_STATUS_SUCCESS && results > 0 && result.state == CUBLAS_STATUS_SUCCESS;
    if (cached.found)
      cached.algorithm = result.algo;
    std::lock_guard<std::mutex> lock(cacheMutex);
    cache[key] = cached;
  }
  if (!cached.found)
    return false;

  const float alpha32 = 1.0f, beta32 = gemm.accumulate ? 1.0f : 0.0f;
  const double alpha64 = 1.0, beta64 = gemm.accumulate ? 1.0 : 0.0;
  const bool wide = scaleType == CUDA_R_64F;
  SHARDC_CUBLAS_TRY(cublasLtMatmul(*handle, descriptors.operation,
                                   wide ? static_cast<const void *>(&alpha64) : &alpha32, gemm.a,
                                   descriptors.a, gemm.b, descriptors.b,
                                   wide ? static_cast<const void *>(&beta64) : &beta32, gemm.d,
                                   descriptors.d, gemm.d, descriptors.d, &cached.algorithm,
                                   resources.workspace, resources.workspaceBytes, stream),
                    "cublasLtMatmul");
  return true;
}

} // namespace shardc::rt::cuda::detail
