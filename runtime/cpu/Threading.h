//===- Threading.h - How many threads the CPU kernels use -------*- C++ -*-===//
//
// The kernels split their outer loops over OpenMP threads, and matmul/linear
// hand their GEMMs to OpenBLAS, which has a thread pool of its own. Both pools
// are sized from one process-wide setting so that the kernels never ask for
// more cores than the executor granted: setNumThreads(n) sets our count and
// calls openblas_set_num_threads(n).
//
// The two pools never run at once: no kernel calls BLAS from inside one of its
// own parallel regions (that would multiply the threads, n x n).
//
// The setting is global, and numThreads() also applies it to the calling
// thread's OpenMP setting, which is per thread and is what OpenBLAS's OpenMP
// build reads: without that, a kernel run on another thread than the one that
// configured the count (a rank thread) would use OpenMP's default. A process
// that runs several ranks as threads should give each a share:
// setNumThreads(cores / ranks).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_THREADING_H
#define SHARDC_RUNTIME_CPU_THREADING_H

namespace shardc::rt::cpu {

/// Sets the threads every later kernel call may use, ours and OpenBLAS's.
/// n <= 0 restores the default: OpenMP's (OMP_NUM_THREADS, else one per core).
/// Call it while no kernel runs (at startup, between steps): OpenBLAS resizes
/// its pool here. Without a call, the default is applied at first use.
void setNumThreads(int n);

/// The current setting (>= 1).
int numThreads();

/// Whether the library was built with OpenMP; without it every kernel runs on
/// the calling thread (OpenBLAS still uses numThreads()).
bool hasOpenMP();

} // namespace shardc::rt::cpu

#endif // SHARDC_RUNTIME_CPU_THREADING_H
