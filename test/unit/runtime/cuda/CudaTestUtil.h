//===- CudaTestUtil.h - CUDA kernels checked against the CPU kernels -*- C++ -*-===//
//
// The CUDA kernels have the CPU kernels' semantics, and the CPU kernels are
// tested against references of their own (test/unit/runtime/cpu), so every
// CUDA kernel test runs one kernel call through both kernel tables, by name
// and with the same parameters, and compares the outputs: integer, bool and
// pure data movement exactly, floats to a tolerance per type relative to the
// tensor's largest magnitude.
//
// Every test that needs a GPU starts with SHARDC_REQUIRE_GPU(), so the binary
// passes (all skipped) where there is none.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TEST_UNIT_CUDA_CUDATESTUTIL_H
#define SHARDC_TEST_UNIT_CUDA_CUDATESTUTIL_H

#include "runtime/core/Kernel.h"
#include "runtime/cuda/CudaDevice.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace shardc::rt::cuda::test {

#define SHARDC_REQUIRE_GPU()                                                                       \
  do {                                                                                             \
    if (::shardc::rt::cuda::CudaDevice::count() == 0)                                              \
      GTEST_SKIP() << "no GPU";                                                                    \
  } while (false)

using Rng = std::mt19937_64;

/// GPU 0 and a stream on it, opened once for the whole binary.
CudaDevice &gpu();
Stream &gpuStream();

// Elements of a host tensor of any type, as doubles (set rounds to nearest
// for the float types and truncates for the integers).
double get(const HostTensor &tensor, int64_t i);
void set(HostTensor &tensor, int64_t i, double value);

/// Uniform values in [low, high] (integers: whole numbers; bool: 0/1).
HostTensor random(DType dtype, Shape shape, Rng &rng, double low = -1, double high = 1);
HostTensor values(DType dtype, Shape shape, const std::vector<double> &values);

// Parameters as the compiler serializes them.
Param ints(std::vector<int64_t> values);
Param number(double value);
Param strings(std::vector<std::string> values);

/// An output to allocate: its type and shape.
struct Output {
  DType dtype;
  Shape shape;
};

/// Runs `kernel` of `table` on host memory (the CPU table).
std::vector<HostTensor> runOnCpu(const std::string &kernel, const std::vector<HostTensor> &inputs,
                                 const std::vector<Output> &outputs, const Params &params);

/// Runs `kernel` of the CUDA table on the GPU; the status is the launch's or
/// the synchronization's. Inputs are copied in, outputs copied out.
Status runOnGpu(const std::string &kernel, const std::vector<HostTensor> &inputs,
                const std::vector<Output> &outputs, const Params &params,
                std::vector<HostTensor> &results);

/// The tolerance of a float type relative to the tensor's magnitude: fp32
/// 1e-5; fp16/bf16 about two units of their last place.
double tolerance(DType dtype);

/// Expects `got` to equal `expected`: exactly for integers and bools (and
/// when `exact`), else within `scale` x tolerance of the type, relative to
/// max(|expected|) + |expected[i]|. NaN matches NaN.
void expectMatch(const HostTensor &expected, const HostTensor &got, const std::string &what,
                 bool exact = false, double scale = 1);

/// Runs `kernel` on both backends and expects every output to match.
void expectSameAsCpu(const std::string &kernel, const std::vector<HostTensor> &inputs,
                     const std::vector<Output> &outputs, const Params &params,
                     const std::string &what, bool exact = false, double scale = 1);

} // namespace shardc::rt::cuda::test

#endif
