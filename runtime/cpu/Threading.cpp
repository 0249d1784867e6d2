//===- Threading.cpp - The kernels' thread count ---------------------------===//
#include "runtime/cpu/Threading.h"

#include <algorithm>
#include <atomic>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif

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

/// The GEMM library sizes each call by omp_get_max_threads() of the calling
/// thread. A thread the runtime starts (a rank thread) begins with OpenMP's
/// default, one per core, so two rank threads on 2 cores each asked for both:
/// measured with OpenBLAS, two concurrent 64x1152x384 sgemm loops took 2.5x
/// one loop's time instead of 1.0x, and tp=2 as rank threads ran at half the
/// speed of one rank on one thread.
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
  gThreads.store(n > 0 ? n : defaultThreads(), std::memory_order_relaxed);
}

int numThreads() {
  int threads = gThreads.load(std::memory_order_relaxed);
  if (threads <= 0) {
    // Several threads may race to settle the default; they all store the same.
    int unset = 0;
    gThreads.compare_exchange_strong(unset, defaultThreads(), std::memory_order_relaxed);
    threads = gThreads.load(std::memory_order_relaxed);
  }
  applyToCallingThread(threads);
  return threads;
}

SingleThreadScope::SingleThreadScope() { applyToCallingThread(1); }
// numThreads() applies the setting to the calling thread again.
SingleThreadScope::~SingleThreadScope() { (void)numThreads(); }

bool hasOpenMP() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

} // namespace shardc::rt::cpu
