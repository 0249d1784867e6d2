//===- CoreScalingBench.cpp - the machine's own ceiling for scaling -------===//
//
// `shardc-bench-cores THREADS [ITERATIONS]`: THREADS threads each run the
// same register-only FMA loop (AVX2, no memory traffic) at once; prints the
// slowest thread's milliseconds. One thread's time over two threads' time,
// times two, is how far two cores of this machine scale on compute alone:
// the ceiling for dp=2 and tp=2 against one rank on one thread. On a VM it
// is not 2.0 when the host shares the vCPUs' cores or lowers their clock
// with load (on the 2-vCPU Zen 3 CI machine two copies of the loop sometimes
// both took 1.7x their time alone).
//
//===----------------------------------------------------------------------===//
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

/// Eight independent FMA chains: enough in flight to keep both FMA pipes of
/// a Zen 3 or Skylake core busy, all in registers.
__attribute__((target("avx2,fma"))) float fmaLoop(long iterations) {
  __m256 chains[8];
  for (int i = 0; i < 8; ++i)
    chains[i] = _mm256_set1_ps(1.0f + float(i) * 1e-7f);
  const __m256 scale = _mm256_set1_ps(0.999999f), shift = _mm256_set1_ps(1e-7f);
  for (long it = 0; it < iterations; ++it)
    for (__m256 &chain : chains)
      chain = _mm256_fmadd_ps(chain, scale, shift);
  float sum = 0;
  for (const __m256 &chain : chains)
    sum += _mm256_cvtss_f32(chain);
  return sum; // returned so that the loop is not optimized away
}

} // namespace

int main(int argc, char **argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  const long iterations = argc > 2 ? std::atol(argv[2]) : 150000000L;
  if (argc > 3 || threads < 1 || threads > 1024 || iterations < 1) {
    std::fprintf(stderr, "usage: shardc-bench-cores THREADS [ITERATIONS]\n");
    return 1;
  }
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    std::fprintf(stderr, "shardc-bench-cores: error: this CPU lacks AVX2 or FMA\n");
    return 1;
  }
  std::atomic<bool> go{false};
  std::vector<double> seconds(size_t(threads), 0.0);
  std::vector<float> sums(size_t(threads), 0.0f);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      while (!go.load(std::memory_order_acquire))
        std::this_thread::yield();
      Clock::time_point start = Clock::now();
      sums[size_t(t)] = fmaLoop(iterations);
      seconds[size_t(t)] = std::chrono::duration<double>(Clock::now() - start).count();
    });
  go.store(true, std::memory_order_release);
  for (std::thread &worker : workers)
    worker.join();
  std::printf("%.3f ms (slowest of %d thread(s); checksum %g)\n",
              1e3 * *std::max_element(seconds.begin(), seconds.end()), threads,
              double(sums.front()));
  return 0;
}
