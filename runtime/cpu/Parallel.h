//===- Parallel.h - Splitting kernel loops over threads (internal) -*- C++ -*-===//
//
// Internal to the CPU kernels. Two shapes of parallel loop cover them all:
//  - parallelFor: a range of equally expensive items cut into one contiguous
//    piece per thread (elementwise ops, copies, row-wise norms);
//  - parallelChunks: a range of unequal items (causal attention rows) cut into
//    several pieces per thread, handed out dynamically.
// Both take the body as fn(begin, end) so that a piece can set up scratch once.
//
// Small loops stay on the calling thread: waking a team costs a few
// microseconds, more than an op on a few thousand elements. A loop that is
// already inside a parallel region (a caller's own OpenMP code) also runs
// serially rather than nesting teams.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_PARALLEL_H
#define SHARDC_RUNTIME_CPU_PARALLEL_H

#include "runtime/cpu/Threading.h"

#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace shardc::rt::cpu::detail {

/// Work (about one simple element operation each) below which a thread is not
/// worth waking.
inline constexpr int64_t kMinWorkPerThread = 32 * 1024;

/// How many threads a loop of `count` items costing `cost` each should use.
inline int threadsFor(int64_t count, int64_t cost) {
#ifdef _OPENMP
  if (omp_in_parallel())
    return 1;
#endif
  int64_t byWork = std::max<int64_t>(count, 0) * std::max<int64_t>(cost, 1) /
                   kMinWorkPerThread;
  int64_t threads = std::min<int64_t>({int64_t(numThreads()), byWork, count});
  return int(std::max<int64_t>(threads, 1));
}

/// How many threads split a loop of `count` items costing `cost` each, or 0
/// once fn(0, count) has run on the calling thread: no items, too little
/// work to split, or no OpenMP.
template <typename Fn> int threadsOrRunHere(int64_t count, int64_t cost, Fn &fn) {
  if (count <= 0)
    return 0;
#ifdef _OPENMP
  const int threads = threadsFor(count, cost);
#else
  const int threads = 1;
#endif
  if (threads > 1)
    return threads;
  fn(int64_t(0), count);
  return 0;
}

/// fn(begin, end) over [0, count), one contiguous piece per thread.
template <typename Fn> void parallelFor(int64_t count, int64_t costPerItem, Fn &&fn) {
  const int threads = threadsOrRunHere(count, costPerItem, fn);
  if (threads == 0)
    return;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
    const int64_t begin = count * t / n, end = count * (t + 1) / n;
    if (begin < end)
      fn(begin, end);
  }
#endif
}

/// fn(begin, end) over [0, count) in about `piecesPerThread` pieces per thread,
/// taken dynamically, for items whose cost varies.
template <typename Fn>
void parallelChunks(int64_t count, int64_t costPerItem, [[maybe_unused]] int piecesPerThread,
                    Fn &&fn) {
  const int threads = threadsOrRunHere(count, costPerItem, fn);
  if (threads == 0)
    return;
#ifdef _OPENMP
  const int64_t pieces =
      std::min<int64_t>(count, int64_t(threads) * std::max(piecesPerThread, 1));
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int64_t p = 0; p < pieces; ++p)
    fn(count * p / pieces, count * (p + 1) / pieces);
#endif
}

} // namespace shardc::rt::cpu::detail

#endif // SHARDC_RUNTIME_CPU_PARALLEL_H
