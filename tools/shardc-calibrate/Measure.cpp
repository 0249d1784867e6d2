//===- Measure.cpp - what one rank of this machine achieves ---------------===//
#include "tools/shardc-calibrate/Measure.h"

#include "runtime/cpu/PackedLinear.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <vector>

namespace shardc::calibrate {
namespace {

using rt::Status;

/// Median seconds of `run` over `repeats` calls after one warm-up; every
/// rank starts each call together (a barrier before it).
rt::StatusOr<double> timed(rt::Communicator &world, int repeats,
                           const std::function<Status()> &run) {
  std::vector<double> samples;
  for (int i = 0; i <= repeats; ++i) {
    float token = 0;
    if (Status status = world.allReduceSum(&token, 1, rt::DType::F32); !status)
      return status;
    auto start = std::chrono::steady_clock::now();
    if (Status status = run(); !status)
      return status;
    if (i > 0)
      samples.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

rt::StatusOr<double> gemmFlops(rt::Communicator &world, int repeats) {
  const int64_t m = 128, k = 768, n = 3072;
  rt::HostTensor input(rt::DType::F32, {m, k}), weight(rt::DType::F32, {k, n}),
      out(rt::DType::F32, {m, n});
  std::fill_n(reinterpret_cast<float *>(input.bytes.data()), m * k, 0.5f);
  std::fill_n(reinterpret_cast<float *>(weight.bytes.data()), k * n, 0.25f);
  auto packed = rt::cpu::PackedLinear::prepare(input.view(), weight.view(), nullptr, false,
                                               out.view(), /*constantWeight=*/true);
  if (!packed)
    return packed.status();
  auto seconds = timed(world, repeats, [&] { return (*packed)->run(input.view(), nullptr, out.view()); });
  if (!seconds)
    return seconds.status();
  return 2.0 * m * k * n / *seconds;
}

rt::StatusOr<double> memoryBandwidth(rt::Communicator &world, int repeats) {
  const size_t bytes = size_t(64) << 20;
  std::vector<char> from(bytes, 1), to(bytes, 0);
  auto seconds = timed(world, repeats, [&] {
    std::memcpy(to.data(), from.data(), bytes);
    return Status();
  });
  if (!seconds)
    return seconds.status();
  return 2.0 * bytes / *seconds;
}

rt::StatusOr<Timed> allReduce(rt::Communicator &world, size_t bytes, int repeats) {
  std::vector<float> data(bytes / sizeof(float), 1.0f);
  auto seconds = timed(world, repeats, [&] {
    // Back to ones, so that repeated sums stay finite.
    Status status = world.allReduceSum(data.data(), data.size(), rt::DType::F32);
    std::fill(data.begin(), data.end(), 1.0f);
    return status;
  });
  if (!seconds)
    return seconds.status();
  return Timed{double(data.size() * sizeof(float)), *seconds};
}

rt::StatusOr<Timed> allGather(rt::Communicator &world, size_t bytes, int repeats) {
  const size_t piece = bytes / size_t(world.size());
  std::vector<char> in(piece, 1), out(piece * size_t(world.size()));
  auto seconds = timed(world, repeats,
                       [&] { return world.allGather(in.data(), out.data(), piece); });
  if (!seconds)
    return seconds.status();
  return Timed{double(out.size()), *seconds};
}

} // namespace

rt::StatusOr<RankFigures> measureRank(rt::Communicator &world, size_t largeBytes, int repeats) {
  RankFigures figures;
  auto flops = gemmFlops(world, repeats);
  if (!flops)
    return flops.status();
  figures.gemmFlops = *flops;
  auto bandwidth = memoryBandwidth(world, repeats);
  if (!bandwidth)
    return bandwidth.status();
  figures.memoryBandwidth = *bandwidth;
  const size_t small = 4096;
  auto smallReduce = allReduce(world, small, repeats);
  if (!smallReduce)
    return smallReduce.status();
  auto largeReduce = allReduce(world, largeBytes, repeats);
  if (!largeReduce)
    return largeReduce.status();
  auto gather = allGather(world, small, repeats);
  if (!gather)
    return gather.status();
  figures.smallAllReduce = *smallReduce;
  figures.largeAllReduce = *largeReduce;
  figures.smallAllGather = *gather;
  return figures;
}

} // namespace shardc::calibrate
