//===- Movement.h - transpose, slice, concat, split, expand, gather, ... -*- C++ -*-===//
//
// The CUDA forms of runtime/cpu/Movement.h and runtime/cpu/Indexing.h, with
// their semantics, checks and messages. Everything here moves elements
// without computing on them (scatter_elements' reductions aside), so every
// element type is taken, float64 included.
//
// All but gather and scatter are one strided copy: the destination's index
// space with each side's element strides (0 to repeat, permuted to
// transpose, stepped to slice, offset into a block to concat or split), its
// dims merged on the host; where each side's innermost run is contiguous and
// aligned, elements are moved in 16-, 8- or 4-byte units instead.
//
// gather and scatter_elements read their indices on the device: an index
// outside [-dim, dim) is skipped (gather writes zeros there) and reported by
// the stream's synchronize(). scatter_elements gives each line of positions
// that differ only along `axis` to one thread, which applies its updates in
// order: the CPU kernel's order, so "last update wins" and the reductions
// round alike.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_MOVEMENT_H
#define SHARDC_RUNTIME_CUDA_MOVEMENT_H

#include "runtime/cuda/HostSupport.h"
#include "runtime/kernels/Ops.h"
#include "runtime/kernels/ViewList.h"

#include <vector>

namespace shardc::rt::cuda {

Status transpose(const TensorView &input, const std::vector<int64_t> &perm, const TensorView &out,
                 const LaunchContext &context);
Status slice(const TensorView &input, const std::vector<int64_t> &starts,
             const std::vector<int64_t> &ends, const std::vector<int64_t> &steps,
             const TensorView &out, const LaunchContext &context);
Status concat(kernels::ViewList inputs, int64_t axis, const TensorView &out,
              const LaunchContext &context);
Status split(const TensorView &input, int64_t axis, kernels::ViewList outs,
             const LaunchContext &context);
Status expand(const TensorView &input, const TensorView &out, const LaunchContext &context);
/// The `copy` kernel (a state's write): one device-to-device copy.
Status copy(const TensorView &input, const TensorView &out, const LaunchContext &context);
Status gather(const TensorView &data, const TensorView &indices, int64_t axis,
              const TensorView &out, const LaunchContext &context);
Status scatterElements(const TensorView &data, const TensorView &indices, const TensorView &updates,
                       int64_t axis, kernels::ScatterReduction reduction, const TensorView &out,
                       const LaunchContext &context);
Status trilu(const TensorView &input, int64_t k, bool upper, const TensorView &out,
             const LaunchContext &context);

namespace detail {

/// dst[base + offsets 0] = src[base + offsets 1] over the map, in units of
/// `unitBytes` (1, 2, 4, 8 or 16); offsets and bases in units.
struct CopyArgs {
  void *dst = nullptr;
  const void *src = nullptr;
  int64_t count = 0;
  int unitBytes = 1;
  IndexMap<2> map;
};

/// out[o, t, i] = data[o, indices[t], i] in units; data viewed as [outer,
/// dim, inner], out as [outer, count, inner].
struct GatherArgs {
  void *out = nullptr;
  const void *data = nullptr;
  const void *indices = nullptr;
  bool indices64 = true;
  int unitBytes = 1;
  int64_t outer = 0, dim = 0, count = 0, inner = 0;
  DeviceError *errors = nullptr;
};

/// One thread per line: map operand 0 is the line's first position in
/// indices/updates, operand 1 its data offset without the axis term.
struct ScatterArgs {
  void *out = nullptr;
  const void *indices = nullptr;
  const void *updates = nullptr;
  bool indices64 = true;
  DType dtype = DType::F32;
  int reduction = 0; // kernels::ScatterReduction
  int64_t lines = 0, length = 0, dim = 0;
  int64_t indexAxisStride = 0, dataAxisStride = 0;
  IndexMap<2> map;
  DeviceError *errors = nullptr;
};

struct TriluArgs {
  void *out = nullptr;
  const void *in = nullptr;
  int elementBytes = 1;
  int64_t count = 0, rows = 0, cols = 0, k = 0;
  bool upper = true;
};

// Launches (Movement.cu).
void launchCopy(const CopyArgs &args, cudaStream_t stream);
void launchGather(const GatherArgs &args, cudaStream_t stream);
void launchScatter(const ScatterArgs &args, cudaStream_t stream);
void launchTrilu(const TriluArgs &args, cudaStream_t stream);

} // namespace detail
} // namespace shardc::rt::cuda

#endif
