//===- Movement.cu - strided copies, gather, scatter_elements, trilu ------===//
#include "runtime/cuda/DeviceSupport.cuh"
#include "runtime/cuda/DispatchUnit.cuh"
#include "runtime/cuda/Movement.h"
#include "runtime/cuda/ScatterCombine.cuh"

namespace shardc::rt::cuda::detail {
namespace {

using namespace device;
using kernels::ScatterReduction;

template <typename U> __global__ void copyKernel(CopyArgs args) {
  U *dst = static_cast<U *>(args.dst);
  const U *src = static_cast<const U *>(args.src);
  if (args.map.rank == 1) {
    const int64_t dstStride = args.map.strides[0][0], srcStride = args.map.strides[1][0];
    for (int64_t i = firstIndex(); i < args.count; i += gridStride())
      dst[i * dstStride] = src[i * srcStride];
    return;
  }
  for (int64_t i = firstIndex(); i < args.count; i += gridStride()) {
    int64_t at[2];
    mapOffsets(args.map, i, at);
    dst[at[0]] = src[at[1]];
  }
}

template <typename U> __global__ void gatherKernel(GatherArgs args) {
  U *out = static_cast<U *>(args.out);
  const U *data = static_cast<const U *>(args.data);
  const int64_t total = args.outer * args.count * args.inner;
  for (int64_t i = firstIndex(); i < total; i += gridStride()) {
    const int64_t e = i % args.inner, rest = i / args.inner;
    const int64_t t = rest % args.count, o = rest / args.count;
    int64_t index = indexAt(args.indices, args.indices64, t);
    if (index < -args.dim || index >= args.dim) {
      reportError(args.errors, DeviceErrorCode::GatherIndex, index, args.dim);
      out[i] = U{};
      continue;
    }
    if (index < 0)
      index += args.dim;
    out[i] = data[(o * args.dim + index) * args.inner + e];
  }
}

/// out[target] = combine(out[target], updates[p]) (ScatterCombine.cuh).
__device__ inline void scatterOne(const ScatterArgs &args, int64_t target, int64_t p) {
  scatterCombine(args.out, target, args.updates, p, args.dtype,
                 static_cast<ScatterReduction>(args.reduction));
}

/// One thread per line, its updates in order.
__global__ void scatterKernel(ScatterArgs args) {
  for (int64_t line = firstIndex(); line < args.lines; line += gridStride()) {
    int64_t at[2];
    mapOffsets(args.map, line, at);
    for (int64_t j = 0; j < args.length; ++j) {
      const int64_t p = at[0] + j * args.indexAxisStride;
      int64_t index = indexAt(args.indices, args.indices64, p);
      if (index < -args.dim || index >= args.dim) {
        reportError(args.errors, DeviceErrorCode::ScatterIndex, index, args.dim);
        continue;
      }
      if (index < 0)
        index += args.dim;
      scatterOne(args, at[1] + index * args.dataAxisStride, p);
    }
  }
}

template <typename U> __global__ void triluKernel(TriluArgs args) {
  U *out = static_cast<U *>(args.out);
  const U *in = static_cast<const U *>(args.in);
  for (int64_t i = firstIndex(); i < args.count; i += gridStride()) {
    const int64_t j = i % args.cols, row = i / args.cols % args.rows;
    // j - row lies in (-rows, cols): comparing it with any k is safe.
    const bool keep = args.upper ? j - row >= args.k : j - row <= args.k;
    out[i] = keep ? in[i] : U(0); // all-zero bits: 0 (+0.0) in every type
  }
}

} // namespace

void launchCopy(const CopyArgs &args, cudaStream_t stream) {
  dispatchUnit(args.unitBytes, [&](auto unit) {
    copyKernel<decltype(unit)><<<blocksFor(args.count), kThreads, 0, stream>>>(args);
  });
}

void launchGather(const GatherArgs &args, cudaStream_t stream) {
  const int64_t total = args.outer * args.count * args.inner;
  dispatchUnit(args.unitBytes, [&](auto unit) {
    gatherKernel<decltype(unit)><<<blocksFor(total), kThreads, 0, stream>>>(args);
  });
}

void launchScatter(const ScatterArgs &args, cudaStream_t stream) {
  scatterKernel<<<blocksFor(args.lines), kThreads, 0, stream>>>(args);
}

void launchTrilu(const TriluArgs &args, cudaStream_t stream) {
  dispatchUnit(args.elementBytes, [&](auto unit) {
    using U = decltype(unit);
    if constexpr (sizeof(U) <= 8)
      triluKernel<U><<<blocksFor(args.count), kThreads, 0, stream>>>(args);
  });
}

} // namespace shardc::rt::cuda::detail
