//===- CudaTestUtil.cpp - CUDA kernels checked against the CPU kernels ----===//
#include "CudaTestUtil.h"

#include "runtime/cpu/CpuBackend.h"
#include "runtime/cuda/CudaBackend.h"
#include "test/unit/runtime/ElementValues.h"

#include <cmath>
#include <memory>
#include <sstream>

namespace shardc::rt::cuda::test {

CudaDevice &gpu() {
  static std::unique_ptr<CudaDevice> device = [] {
    auto opened = CudaDevice::open(0);
    if (!opened) {
      ADD_FAILURE() << opened.status().message();
      std::abort();
    }
    return std::move(*opened);
  }();
  return *device;
}

Stream &gpuStream() {
  static std::unique_ptr<Stream> stream = [] {
    auto created = gpu().createStream();
    if (!created) {
      ADD_FAILURE() << created.status().message();
      std::abort();
    }
    return std::move(*created);
  }();
  return *stream;
}

double get(const HostTensor &tensor, int64_t i) { return rt::test::elementValue(tensor, i); }

void set(HostTensor &tensor, int64_t i, double value) {
  rt::test::setElementValue(tensor, i, value);
}

namespace {
bool isFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 || dtype == DType::BF16;
}
} // namespace

HostTensor random(DType dtype, Shape shape, Rng &rng, double low, double high) {
  HostTensor tensor(dtype, std::move(shape));
  std::uniform_real_distribution<double> real(low, high);
  std::uniform_int_distribution<int64_t> whole(dtype == DType::Bool ? 0 : int64_t(low),
                                               dtype == DType::Bool ? 1 : int64_t(high));
  for (int64_t i = 0; i < tensor.numel(); ++i)
    set(tensor, i, isFloat(dtype) ? real(rng) : double(whole(rng)));
  return tensor;
}

HostTensor values(DType dtype, Shape shape, const std::vector<double> &values) {
  HostTensor tensor(dtype, std::move(shape));
  for (int64_t i = 0; i < tensor.numel(); ++i)
    set(tensor, i, values[size_t(i) % values.size()]);
  return tensor;
}

Param ints(std::vector<int64_t> values) { return Param{std::move(values), {}, {}}; }
Param number(double value) { return Param{{}, {value}, {}}; }
Param strings(std::vector<std::string> values) { return Param{{}, {}, std::move(values)}; }

std::vector<HostTensor> runOnCpu(const std::string &kernel, const std::vector<HostTensor> &inputs,
                                 const std::vector<Output> &outputs, const Params &params) {
  std::vector<HostTensor> in = inputs, out;
  std::vector<TensorView> inViews, outViews;
  for (HostTensor &tensor : in)
    inViews.push_back(tensor.view());
  for (const Output &output : outputs)
    out.emplace_back(output.dtype, output.shape);
  for (HostTensor &tensor : out)
    outViews.push_back(tensor.view());
  KernelFunction function = cpu::kernelTable().find(kernel);
  EXPECT_NE(function, nullptr) << kernel;
  if (function) {
    Status status = function(KernelCall{inViews, outViews, params});
    EXPECT_TRUE(status.ok()) << kernel << " on the CPU: " << status.message();
  }
  return out;
}

Status runOnGpu(const std::string &kernel, const std::vector<HostTensor> &inputs,
                const std::vector<Output> &outputs, const Params &params,
                std::vector<HostTensor> &results) {
  KernelFunction function = kernelTable().find(kernel);
  if (!function)
    return Status::error("the CUDA table has no kernel '" + kernel + "'");
  std::vector<void *> memory;
  auto releaseAll = [&] {
    for (void *pointer : memory)
      gpu().release(pointer);
  };
  std::vector<TensorView> inViews, outViews;
  for (const HostTensor &tensor : inputs) {
    auto allocated = gpu().allocate(tensor.bytes.size());
    if (!allocated) {
      releaseAll();
      return allocated.status();
    }
    memory.push_back(*allocated);
    if (Status status = gpu().copyToDevice(*allocated, tensor.bytes.data(), tensor.bytes.size());
        !status) {
      releaseAll();
      return status;
    }
    inViews.push_back({*allocated, tensor.dtype, tensor.shape});
  }
  results.clear();
  for (const Output &output : outputs) {
    results.emplace_back(output.dtype, output.shape);
    auto allocated = gpu().allocate(results.back().bytes.size());
    if (!allocated) {
      releaseAll();
      return allocated.status();
    }
    memory.push_back(*allocated);
    outViews.push_back({*allocated, output.dtype, output.shape});
  }
  Status status = gpuStream().launch(function, KernelCall{inViews, outViews, params});
  Status synchronized = gpuStream().synchronize();
  if (status)
    status = synchronized;
  for (size_t i = 0; status && i < results.size(); ++i)
    status = gpu().copyToHost(results[i].bytes.data(), outViews[i].data, results[i].bytes.size());
  releaseAll();
  return status;
}

double tolerance(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return 1e-5;
  case DType::F16:
    return 2e-3; // 2^-10 per unit of the last place
  case DType::BF16:
    return 1.6e-2; // 2^-7
  case DType::F64:
    return 1e-12;
  default:
    return 0;
  }
}

void expectMatch(const HostTensor &expected, const HostTensor &got, const std::string &what,
                 bool exact, double scale) {
  ASSERT_EQ(expected.dtype, got.dtype) << what;
  ASSERT_EQ(expected.shape, got.shape) << what;
  const bool compareExactly = exact || !isFloat(expected.dtype);
  double magnitude = 0;
  for (int64_t i = 0; i < expected.numel(); ++i)
    if (std::isfinite(get(expected, i)))
      magnitude = std::max(magnitude, std::fabs(get(expected, i)));
  const double relative = tolerance(expected.dtype) * scale;
  int reported = 0;
  for (int64_t i = 0; i < expected.numel() && reported < 5; ++i) {
    const double want = get(expected, i), have = get(got, i);
    bool same;
    if (std::isnan(want) || std::isnan(have))
      same = std::isnan(want) && std::isnan(have);
    else if (compareExactly || std::isinf(want) || std::isinf(have))
      same = want == have;
    else
      same = std::fabs(want - have) <= relative * (magnitude + std::fabs(want));
    if (!same) {
      ++reported;
      ADD_FAILURE() << what << ": element " << i << " of " << formatShape(expected.shape) << " is "
                    << have << " on the GPU, " << want << " on the CPU";
    }
  }
}

void expectSameAsCpu(const std::string &kernel, const std::vector<HostTensor> &inputs,
                     const std::vector<Output> &outputs, const Params &params,
                     const std::string &what, bool exact, double scale) {
  const std::vector<HostTensor> expected = runOnCpu(kernel, inputs, outputs, params);
  std::vector<HostTensor> got;
  Status status = runOnGpu(kernel, inputs, outputs, params, got);
  ASSERT_TRUE(status.ok()) << what << ": " << status.message();
  for (size_t i = 0; i < expected.size(); ++i)
    expectMatch(expected[i], got[i], what + " (output " + std::to_string(i) + ")", exact, scale);
}

} // namespace shardc::rt::cuda::test
