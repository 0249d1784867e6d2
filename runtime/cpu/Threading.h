//===- Threading.h - How many threads the CPU kernels use -------*- C++ -*-===//
//
// The kernels split their outer loops over OpenMP threads, and matmul/linear
// hand their GEMMs to oneDNN, which threads with OpenMP too. Both are sized
// from one process-wide setting so that the kernels never ask for more cores
// than the executor granted.
//
// OpenMP's own setting (omp_set_num_threads) is per thread, and oneDNN reads
// the calling thread's: a kernel run on another thread than the one that
// configured the count (a rank thread) would use OpenMP's default, one thread
// per core. So the setting here is global, and numThreads() also applies it to
// the thread that asks. A process that runs several ranks as threads should
// give each a share: setNumThreads(cores / ranks).
//
// The kernels never call a GEMM from inside one of their own parallel regions
// (that would multiply the threads, n x n).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_THREADING_H
#define SHARDC_RUNTIME_CPU_THREADING_H

namespace shardc::rt::cpu {

/// Sets the threads every later kernel call may use, ours and oneDNN's.
/// n <= 0 restores the default: OpenMP's (OMP_NUM_THREADS, else one per core).
void setNumThreads(int n);

/// The current setting (>= 1), applied to the calling thread's OpenMP setting.
int numThreads();

/// While alive, the calling thread's OpenMP setting is one thread (numThreads()
/// is unchanged): oneDNN sizes a primitive for the threads the calling thread
/// may use when it is made, and PackedLinear makes single-threaded ones that
/// its own threads run side by side.
class SingleThreadScope {
public:
  SingleThreadScope();
  ~SingleThreadScope();
  SingleThreadScope(const SingleThreadScope &) = delete;
  SingleThreadScope &operator=(const SingleThreadScope &) = delete;
};

/// Whether the library was built with OpenMP; without it every kernel but the
/// GEMMs runs on the calling thread.
bool hasOpenMP();

} // namespace shardc::rt::cpu

#endif // SHARDC_RUNTIME_CPU_THREADING_H
