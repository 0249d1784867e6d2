//===- Collectives.h - collective steps on a GPU ----------------*- C++ -*-===//
//
// The same kernels, operands and parameters as runtime/cpu/Collectives.h, on
// device memory and in the step's stream (KernelCall::stream), with the
// checks of runtime/core/CollectivePlan (also registered as prepare-time
// checks). Interleaved blocks (a cut along a dim other than the first) are
// rearranged with strided device copies (cudaMemcpy2DAsync) through scratch
// memory kept per stream (StreamScratch.h). The group is reached through a
// StreamGroup (StreamGroup.h): straight from device memory with NCCL, staged
// through pinned host memory with a host communicator.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_COLLECTIVES_H
#define SHARDC_RUNTIME_CUDA_COLLECTIVES_H

#include "runtime/core/Kernel.h"

namespace shardc::rt::cuda {

/// Adds all_reduce, all_gather, reduce_scatter, all_to_all, all_slice,
/// broadcast, send and recv to `table`, each with its prepare-time check.
void addCollectiveKernels(KernelTable &table);

} // namespace shardc::rt::cuda

#endif
