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

} // namespace

void setNumThreads(int n) {
  const int threads = n > 0 ? n : defaultThreads();
  gThreads.store(threads, std::memory_order_relaxed);
  openblas_set_num_threads(threads);
}

int numThreads() {
  int threads = gThreads.load(std::memory_order_relaxed);
  if (threads > 0)
    return threads;
  std::call_once(gDefaultOnce, [] {
    if (gThreads.load(std::memory_order_relaxed) == 0)
      setNumThreads(0);
  });
  return gThreads.load(std::memory_order_relaxed);
}

bool hasOpenMP() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

} // namespace shardc::rt::cpu
