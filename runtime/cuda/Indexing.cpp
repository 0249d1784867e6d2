//===- Indexing.cpp - gather_elements, gather_nd, scatter_nd, cumsum: host side ===//
#include "runtime/cuda/Indexing.h"

#include "runtime/cuda/CudaStatus.h"

namespace shardc::rt::cuda {

using namespace detail;
using kernels::ScatterReduction;

namespace {

/// The tuple layout as kernel parameters; fails past kMaxRank indexed dims.
Status toTupleArgs(const char *op, const IndexTupleDims &dims, TupleArgs &args) {
  if (dims.dims.size() > size_t(kMaxRank))
    return fail(op, "index tuples have " + std::to_string(dims.dims.size()) +
                        " entries; the CUDA kernels take at most " + std::to_string(kMaxRank));
  args.k = int(dims.dims.size());
  for (size_t j = 0; j < dims.dims.size(); ++j) {
    args.dims[j] = dims.dims[j];
    args.strides[j] = dims.strides[j];
  }
  args.batches = dims.batches;
  args.tuples = dims.tuples;
  args.slice = dims.slice;
  args.batchStride = dims.batchStride;
  return Status::success();
}

} // namespace

Status gatherElements(const TensorView &data, const TensorView &indices, int64_t axis,
                      const TensorView &out, const LaunchContext &context) {
  const char *name = "gather_elements";
  SHARDC_KERNEL_TRY(checkGatherElements(data, indices, axis, out));
  Shape dataStrides = rowMajorStrides(data.shape);
  GatherElementsArgs args;
  args.axisStride = dataStrides[size_t(axis)];
  dataStrides[size_t(axis)] = 0;
  SHARDC_KERNEL_TRY(toIndexMap(
      name, Walk<2>::make(indices.shape, {rowMajorStrides(indices.shape), dataStrides}), args.map));
  if (context.checkOnly || out.numel() == 0)
    return Status::success();
  args.out = out.data;
  args.data = data.data;
  args.indices = indices.data;
  args.indices64 = indices.dtype == DType::I64;
  args.unitBytes = int(dtypeSize(data.dtype));
  args.count = out.numel();
  args.dim = data.shape[size_t(axis)];
  args.errors = deviceErrors(context.stream);
  launchGatherElements(args, context.stream);
  return launchStatus(name);
}

Status gatherND(const TensorView &data, const TensorView &indices, int64_t batchDims,
                const TensorView &out, const LaunchContext &context) {
  const char *name = "gather_nd";
  IndexTupleDims dims;
  SHARDC_KERNEL_TRY(checkGatherND(data, indices, batchDims, out, dims));
  TupleArgs args;
  SHARDC_KERNEL_TRY(toTupleArgs(name, dims, args));
  if (context.checkOnly || out.numel() == 0)
    return Status::success();
  args.out = out.data;
  args.source = data.data;
  args.indices = indices.data;
  args.indices64 = indices.dtype == DType::I64;
  args.dtype = data.dtype;
  args.errors = deviceErrors(context.stream);
  launchGatherND(args, context.stream);
  return launchStatus(name);
}

Status scatterND(const TensorView &data, const TensorView &indices, const TensorView &updates,
                 ScatterReduction reduction, const TensorView &out, const LaunchContext &context) {
  const char *name = "scatter_nd";
  IndexTupleDims dims;
  SHARDC_KERNEL_TRY(checkScatterND(data, indices, updates, reduction, out, dims));
  TupleArgs args;
  SHARDC_KERNEL_TRY(toTupleArgs(name, dims, args));
  if (context.checkOnly)
    return Status::success();
  SHARDC_KERNEL_TRY(copyDataToResult(data, out, context.stream));
  if (dims.tuples == 0 || dims.slice == 0 || data.numel() == 0)
    return Status::success();
  args.out = out.data;
  args.source = updates.data;
  args.indices = indices.data;
  args.indices64 = indices.dtype == DType::I64;
  args.dtype = data.dtype;
  args.reduction = int(reduction);
  args.errors = deviceErrors(context.stream);
  if (reduction != ScatterReduction::None) {
    launchScatterNDInOrder(args, context.stream);
    return launchStatus(name);
  }
  // One winner slot per slice of data, stream-ordered like the kernels.
  const int64_t slots = data.numel() / dims.slice;
  void *winners = nullptr;
  const size_t bytes = size_t(slots) * sizeof(unsigned long long);
  SHARDC_CUDA_TRY(cudaMallocAsync(&winners, bytes, context.stream));
  args.winners = static_cast<unsigned long long *>(winners);
  Status status = cudaStatus(cudaMemsetAsync(winners, 0, bytes, context.stream), "cudaMemsetAsync");
  if (status.ok()) {
    launchScatterNDLastWins(args, context.stream);
    status = launchStatus(name);
  }
  Status freed = cudaStatus(cudaFreeAsync(winners, context.stream), "cudaFreeAsync");
  return status.ok() ? freed : status;
}

Status cumSum(const TensorView &input, int64_t axis, bool exclusive, bool reverse,
              const TensorView &out, const LaunchContext &context) {
  const char *name = "cumsum";
  ScanDims dims;
  SHARDC_KERNEL_TRY(checkCumSum(input, axis, out, dims));
  if (context.checkOnly || input.numel() == 0)
    return Status::success();
  ScanArgs args;
  args.out = out.data;
  args.in = input.data;
  args.dtype = input.dtype;
  args.outer = dims.outer;
  args.dim = dims.dim;
  args.inner = dims.inner;
  args.exclusive = exclusive;
  args.reverse = reverse;
  launchCumSum(args, context.stream);
  return launchStatus(name);
}

} // namespace shardc::rt::cuda
