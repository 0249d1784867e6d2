//===- Indexing.cu - gather_elements, gather_nd, scatter_nd, cumsum kernels ===//
#include "runtime/cuda/DeviceSupport.cuh"
#include "runtime/cuda/DispatchUnit.cuh"
#include "runtime/cuda/Indexing.h"
#include "runtime/cuda/ScatterCombine.cuh"

namespace shardc::rt::cuda::detail {
namespace {

using namespace device;
using kernels::ScatterReduction;

template <typename U> __global__ void gatherElementsKernel(GatherElementsArgs args) {
  U *out = static_cast<U *>(args.out);
  const U *data = static_cast<const U *>(args.data);
  for (int64_t i = firstIndex(); i < args.count; i += gridStride()) {
    int64_t at[2];
    mapOffsets(args.map, i, at);
    int64_t index = indexAt(args.indices, args.indices64, at[0]);
    if (index < -args.dim || index >= args.dim) {
      reportError(args.errors, DeviceErrorCode::GatherElementsIndex, index, args.dim);
      out[at[0]] = U{};
      continue;
    }
    if (index < 0)
      index += args.dim;
    out[at[0]] = data[at[1] + index * args.axisStride];
  }
}

/// The element offset (within its batch) of the slice tuple t names, or -1
/// after reporting an index outside its dim.
__device__ inline int64_t tupleOffset(const TupleArgs &args, int64_t t, DeviceErrorCode code) {
  int64_t offset = 0;
  for (int j = 0; j < args.k; ++j) {
    const int64_t dim = args.dims[j];
    int64_t index = indexAt(args.indices, args.indices64, t * args.k + j);
    if (index < -dim || index >= dim) {
      reportError(args.errors, code, index, dim);
      return -1;
    }
    offset += (index < 0 ? index + dim : index) * args.strides[j];
  }
  return offset;
}

template <typename U> __global__ void gatherNDKernel(TupleArgs args) {
  U *out = static_cast<U *>(args.out);
  const U *data = static_cast<const U *>(args.source);
  const int64_t total = args.batches * args.tuples * args.slice;
  for (int64_t i = firstIndex(); i < total; i += gridStride()) {
    const int64_t t = i / args.slice, e = i - t * args.slice;
    const int64_t offset = tupleOffset(args, t, DeviceErrorCode::GatherNdIndex);
    out[i] = offset < 0 ? U{} : data[t / args.tuples * args.batchStride + offset + e];
  }
}

/// Reduction none, first pass: each tuple claims its slice; the highest
/// tuple (stored + 1, so that 0 means unclaimed) wins.
__global__ void claimSlicesKernel(TupleArgs args) {
  for (int64_t t = firstIndex(); t < args.tuples; t += gridStride()) {
    const int64_t offset = tupleOffset(args, t, DeviceErrorCode::ScatterNdIndex);
    if (offset >= 0)
      atomicMax(&args.winners[offset / args.slice], static_cast<unsigned long long>(t + 1));
  }
}

/// Second pass: the winners' elements, all in parallel.
__global__ void copyWinnersKernel(TupleArgs args) {
  const int64_t total = args.tuples * args.slice;
  for (int64_t i = firstIndex(); i < total; i += gridStride()) {
    const int64_t t = i / args.slice, e = i - t * args.slice;
    const int64_t offset = tupleOffset(args, t, DeviceErrorCode::ScatterNdIndex);
    if (offset >= 0 && args.winners[offset / args.slice] == static_cast<unsigned long long>(t + 1))
      scatterCombine(args.out, offset + e, args.source, i, args.dtype, ScatterReduction::None);
  }
}

/// The reductions: thread e owns element e of every slice and applies the
/// tuples in order.
__global__ void scatterInOrderKernel(TupleArgs args) {
  const auto reduction = static_cast<ScatterReduction>(args.reduction);
  for (int64_t e = firstIndex(); e < args.slice; e += gridStride())
    for (int64_t t = 0; t < args.tuples; ++t) {
      const int64_t offset = tupleOffset(args, t, DeviceErrorCode::ScatterNdIndex);
      if (offset >= 0)
        scatterCombine(args.out, offset + e, args.source, t * args.slice + e, args.dtype,
                       reduction);
    }
}

/// Floats sum in double (as the CPU kernel), integers in 64 bits, wrapping
/// when stored.
__global__ void cumSumKernel(ScanArgs args) {
  const int64_t lines = args.outer * args.inner;
  const bool real = isRealType(args.dtype);
  for (int64_t line = firstIndex(); line < lines; line += gridStride()) {
    const int64_t o = line / args.inner, i = line - o * args.inner;
    double realSum = 0.0;
    uint64_t integerSum = 0;
    for (int64_t step = 0; step < args.dim; ++step) {
      const int64_t j = args.reverse ? args.dim - 1 - step : step;
      const int64_t at = (o * args.dim + j) * args.inner + i;
      // Read before writing: out may be the input itself.
      const double x = real ? loadReal(args.in, args.dtype, at) : 0.0;
      const uint64_t n = real ? 0 : uint64_t(loadInteger(args.in, args.dtype, at));
      if (!args.exclusive) {
        realSum += x;
        integerSum += n;
      }
      if (real)
        storeReal(args.out, args.dtype, at, realSum);
      else
        storeInteger(args.out, args.dtype, at, integerSum);
      if (args.exclusive) {
        realSum += x;
        integerSum += n;
      }
    }
  }
}

} // namespace

void launchGatherElements(const GatherElementsArgs &args, cudaStream_t stream) {
  // Units are whole elements here (dtypeSize: at most 8 bytes).
  dispatchUnit(args.unitBytes, [&](auto unit) {
    using U = decltype(unit);
    if constexpr (sizeof(U) <= 8)
      gatherElementsKernel<U><<<blocksFor(args.count), kThreads, 0, stream>>>(args);
  });
}

void launchGatherND(const TupleArgs &args, cudaStream_t stream) {
  const int64_t total = args.batches * args.tuples * args.slice;
  dispatchUnit(int(dtypeSize(args.dtype)), [&](auto unit) {
    using U = decltype(unit);
    if constexpr (sizeof(U) <= 8)
      gatherNDKernel<U><<<blocksFor(total), kThreads, 0, stream>>>(args);
  });
}

void launchScatterNDLastWins(const TupleArgs &args, cudaStream_t stream) {
  claimSlicesKernel<<<blocksFor(args.tuples), kThreads, 0, stream>>>(args);
  copyWinnersKernel<<<blocksFor(args.tuples * args.slice), kThreads, 0, stream>>>(args);
}

void launchScatterNDInOrder(const TupleArgs &args, cudaStream_t stream) {
  scatterInOrderKernel<<<blocksFor(args.slice), kThreads, 0, stream>>>(args);
}

void launchCumSum(const ScanArgs &args, cudaStream_t stream) {
  cumSumKernel<<<blocksFor(args.outer * args.inner), kThreads, 0, stream>>>(args);
}

} // namespace shardc::rt::cuda::detail
