//===- Threading.cpp - The kernels' thread count ---------------------------===//
#include "runtime/cpu/Threading.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif

// OpenBLAS's own setter. Declared here rather than taken from <cblas.h>:
// Debian's cblas.h is an alternative that may be netlib's, which lacks it,
// while the library we link is always OpenBLAS.
extern "C" void openblas_set_num_threads(int numThreads);

namespace shardc::rt::cpu {
namespace {

int defaultThreads() {
#ifdef _OPENMP
  // Honours OMP_NUM_THREADS, like any OpenMP program.
  return std::max(omp_get_max_threads(), 1);
#else
  return std::max(int(std::thread::hardware_concurrency()), 1);
#endif
}

// 0 until first use or setNumThreads: the default is read lazily so that a
// static initializer never has to run OpenMP's.
std::atomic<int> gThreads{0};
// Kernels on several threads may all be the first to ask; OpenBLAS's setter
// must not run concurrently with itself, so the default is settled once.
std::once_flag gDefaultOnce;

/// OpenBLAS's OpenMP build sizes each GEMM by omp_get_max_threads() of the
/// thread that calls it, an OpenMP setting held per thread. A thread the
/// runtime starts (a rank thread) begins with OpenMP's default, one per core,
/// so two rank threads each asked OpenBLAS for both cores: measured on 2
/// cores, two concurrent 64x1152x384 sgemm loops took 2.5x one loop's time
/// instead of 1.0x. So every thread that asks for the count also adopts it.
void applyToCallingThread(int threads) {
#ifdef _OPENMP
  thread_local int applied = 0;
  if (applied != threads) {
    omp_set_num_threads(threads);
    applied = threads;
  }
#else
  (void)threads;
#endif
}

} // namespace

void setNumThreads(int n) {
  const int threads = n > 0 ? n : defaultThreads();
  gThreads.store(threads, std::memory_order_relaxed);
  openblas_set_num_threads(threads);
}

int numThreads() {
  int threads = gThreads.load(std::memory_order_relaxed);
  if (threads <= 0) {
    std::call_once(gDefaultOnce, [] {
      if (gThreads.load(std::memory_order_relaxed) == 0)
        setNumThreads(0);
    });
    threads = gThreads.load(std::memory_order_relaxed);
  }
  applyToCallingThread(threads);
  return threads;
}

bool hasOpenMP() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

} // namespace shardc::rt::cpu
