//===- Collectives.h - collective steps on a GPU ----------------*- C++ -*-===//
//
// The same kernels, operands and parameters as runtime/cpu/Collectives.h, on
// device memory and in the step's stream (KernelCall::stream), with the
// checks of runtime/core/CollectivePlan (also registered as prepare-time
// checks). Interleaved blocks (a cut along a dim other than the first) are
// rearranged with strided device copies (cudaMemcpy2DAsync) through scratch
// memory kept per stream.
//
// Through a device communicator (NCCL) the blocks go straight from device
// memory, enqueued on the stream. Through a host communicator (the in-process
// world of `shardrun --np N` on one GPU, or MPI) they are staged: copied to
// pinned host memory, the stream waited for, the host collective run, and
// the result copied back in stream order. Staging costs two PCIe copies and
// a stream synchronization per collective, which is fine for what it serves
// (checking sharded programs on one GPU; CUDA-unaware MPI) and keeps the sums
// those of the host communicators (F16/BF16 in float, rounded once).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_COLLECTIVES_H
#define SHARDC_RUNTIME_CUDA_COLLECTIVES_H

#include "runtime/core/Kernel.h"

namespace shardc::rt::cuda {

/// Adds all_reduce, all_gather, reduce_scatter, all_to_all, all_slice,
/// broadcast, send and recv to `table`, each with its prepare-time check.
void addCollectiveKernels(KernelTable &table);

/// Frees the scratch memory the collectives keep for `stream` (a
/// cudaStream_t); for the stream's owner, before it destroys the stream.
void releaseCollectiveScratch(void *stream);

} // namespace shardc::rt::cuda

#endif
