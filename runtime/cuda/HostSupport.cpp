//===- HostSupport.cpp - the host side of every CUDA kernel ---------------===//
#include "runtime/cuda/HostSupport.h"

#include "runtime/cuda/CudaStatus.h"
#include "runtime/cuda/StreamResources.h"

namespace shardc::rt::cuda::detail {

Status float64Unsupported(const char *op) {
  return fail(op, "float64 is not supported by the CUDA backend");
}

Status rejectFloat64(const char *op, const TensorView &tensor) {
  return tensor.dtype == DType::F64 ? float64Unsupported(op) : Status::success();
}

Status checkCudaFloat(const char *op, const char *role, const TensorView &tensor) {
  if (isCudaFloat(tensor.dtype))
    return Status::success();
  if (tensor.dtype == DType::F64)
    return float64Unsupported(op);
  return fail(op, std::string("needs a float ") + role + " but got " + dtypeName(tensor.dtype));
}

DeviceError *deviceErrors(cudaStream_t stream) { return resourcesOf(stream).errors; }

Status copyDataToResult(const TensorView &data, const TensorView &out, cudaStream_t stream) {
  if (out.data != data.data && data.numel() > 0)
    SHARDC_CUDA_TRY(
        cudaMemcpyAsync(out.data, data.data, data.bytes(), cudaMemcpyDeviceToDevice, stream));
  return Status::success();
}

} // namespace shardc::rt::cuda::detail
