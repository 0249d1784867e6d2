//===- Indexing.h - gather_elements, gather_nd, scatter_nd, cumsum on a GPU -*- C++ -*-===//
//
// The CUDA forms of the CPU kernels of the same names (runtime/cpu/Indexing.h,
// runtime/cpu/Reduction.h), with their checks and messages. Every element
// type is taken, float64 included: the gathers move elements, scatter_nd
// combines them as scatter_elements does, cumsum sums floats in double.
//
// Indices are read on the device: one outside its dim is skipped (the
// gathers write zeros there) and reported by the stream's synchronize().
//
// scatter_nd applies repeated tuples in the CPU's order. With reduction none
// the last tuple naming a slice wins: a first pass records, per slice of
// data, the highest tuple that names it (atomicMax in stream-ordered scratch
// memory), and a second copies only the winners, so tuples and elements are
// all parallel. The reductions combine in order: each thread owns one
// element of the slices and applies every tuple to it in turn.
//
// cumsum gives each line along the axis to one thread (adjacent threads take
// adjacent lines, so their loads coalesce).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_INDEXING_H
#define SHARDC_RUNTIME_CUDA_INDEXING_H

#include "runtime/cuda/HostSupport.h"
#include "runtime/kernels/Ops.h"

namespace shardc::rt::cuda {

Status gatherElements(const TensorView &data, const TensorView &indices, int64_t axis,
                      const TensorView &out, const LaunchContext &context);
Status gatherND(const TensorView &data, const TensorView &indices, int64_t batchDims,
                const TensorView &out, const LaunchContext &context);
Status scatterND(const TensorView &data, const TensorView &indices, const TensorView &updates,
                 kernels::ScatterReduction reduction, const TensorView &out,
                 const LaunchContext &context);
Status cumSum(const TensorView &input, int64_t axis, bool exclusive, bool reverse,
              const TensorView &out, const LaunchContext &context);

namespace detail {

/// out[p] = data[offset 1 + indices[p] * axisStride] over the map (operand
/// 0 the position in indices and out, operand 1 data's offset without the
/// axis term), in units of `unitBytes`.
struct GatherElementsArgs {
  void *out = nullptr;
  const void *data = nullptr;
  const void *indices = nullptr;
  bool indices64 = true;
  int unitBytes = 1;
  int64_t count = 0, dim = 0, axisStride = 0;
  IndexMap<2> map;
  DeviceError *errors = nullptr;
};

/// gather_nd and scatter_nd: kernels::IndexTupleDims as plain data.
struct TupleArgs {
  void *out = nullptr;
  const void *source = nullptr; // gather_nd: data; scatter_nd: updates
  const void *indices = nullptr;
  bool indices64 = true;
  DType dtype = DType::F32;
  int reduction = 0; // kernels::ScatterReduction
  int k = 0;
  int64_t dims[kMaxRank] = {}, strides[kMaxRank] = {};
  int64_t batches = 1, tuples = 0, slice = 1, batchStride = 0;
  unsigned long long *winners = nullptr; // scatter_nd none: per slice of data
  DeviceError *errors = nullptr;
};

/// One thread per line of [outer, dim, inner].
struct ScanArgs {
  void *out = nullptr;
  const void *in = nullptr;
  DType dtype = DType::F32;
  int64_t outer = 0, dim = 0, inner = 0;
  bool exclusive = false, reverse = false;
};

// Launches (Indexing.cu).
void launchGatherElements(const GatherElementsArgs &args, cudaStream_t stream);
void launchGatherND(const TupleArgs &args, cudaStream_t stream);
/// Reduction none: `winners` holds one zeroed slot per slice of data.
void launchScatterNDLastWins(const TupleArgs &args, cudaStream_t stream);
void launchScatterNDInOrder(const TupleArgs &args, cudaStream_t stream);
void launchCumSum(const ScanArgs &args, cudaStream_t stream);

} // namespace detail
} // namespace shardc::rt::cuda

#endif
