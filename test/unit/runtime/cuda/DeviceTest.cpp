//===- DeviceTest.cpp - the CUDA device, streams and events ---------------===//
#include "CudaTestUtil.h"

#include "runtime/cuda/CudaBackend.h"

#include <cstring>

namespace shardc::rt::cuda::test {
namespace {

TEST(CudaDevice, CountIsNeverNegative) {
  // Runs everywhere: without a driver or a GPU the count is 0, not a crash.
  EXPECT_GE(CudaDevice::count(), 0);
}

TEST(CudaDevice, OpenNamesWhatIsMissing) {
  const int count = CudaDevice::count();
  auto opened = CudaDevice::open(count);
  ASSERT_FALSE(opened.ok());
  if (count == 0)
    EXPECT_NE(opened.status().message().find("no CUDA device is visible"), std::string::npos)
        << opened.status().message();
  else
    EXPECT_EQ(opened.status().message(), "device " + std::to_string(count) + " does not exist (" +
                                             std::to_string(count) + " visible)");
}

TEST(CudaDevice, OpenReportsTheArchitecture) {
  SHARDC_REQUIRE_GPU();
  EXPECT_EQ(gpu().name(), "cuda");
  EXPECT_EQ(gpu().arch().rfind("sm_", 0), 0u) << gpu().arch();
  EXPECT_FALSE(gpu().readsHostMemory());
  EXPECT_FALSE(gpu().productName().empty());
}

TEST(CudaDevice, AllocateCopyRoundTrip) {
  SHARDC_REQUIRE_GPU();
  std::vector<uint8_t> bytes(1000003);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = uint8_t(i * 7 + 3);
  auto memory = gpu().allocate(bytes.size());
  ASSERT_TRUE(memory.ok()) << memory.status().message();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*memory) % 256, 0u);
  ASSERT_TRUE(gpu().copyToDevice(*memory, bytes.data(), bytes.size()).ok());
  std::vector<uint8_t> back(bytes.size());
  ASSERT_TRUE(gpu().copyToHost(back.data(), *memory, back.size()).ok());
  EXPECT_EQ(back, bytes);
  gpu().release(*memory);
  // Zero bytes still give memory, and copying nothing is fine.
  auto empty = gpu().allocate(0);
  ASSERT_TRUE(empty.ok());
  EXPECT_NE(*empty, nullptr);
  EXPECT_TRUE(gpu().copyToDevice(*empty, nullptr, 0).ok());
  gpu().release(*empty);
}

TEST(CudaDevice, AllocationFailureIsAStatus) {
  SHARDC_REQUIRE_GPU();
  auto memory = gpu().allocate(size_t(1) << 60);
  ASSERT_FALSE(memory.ok());
  EXPECT_EQ(memory.status().message().rfind("cudaMalloc: ", 0), 0u) << memory.status().message();
  // The device still works afterwards.
  auto small = gpu().allocate(16);
  ASSERT_TRUE(small.ok()) << small.status().message();
  gpu().release(*small);
}

TEST(CudaDevice, StreamsOrderedByEvents) {
  SHARDC_REQUIRE_GPU();
  // a -> neg on stream 1 -> event -> stream 2 waits -> neg again: a.
  auto first = gpu().createStream(), second = gpu().createStream();
  ASSERT_TRUE(first.ok() && second.ok());
  const int64_t n = 1 << 20;
  std::vector<float> host(n);
  for (int64_t i = 0; i < n; ++i)
    host[size_t(i)] = float(i % 1000) - 500.0f;
  auto a = gpu().allocate(n * 4), b = gpu().allocate(n * 4), c = gpu().allocate(n * 4);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  ASSERT_TRUE(gpu().copyToDevice(*a, host.data(), n * 4).ok());
  KernelFunction neg = kernelTable().find("neg");
  ASSERT_NE(neg, nullptr);
  const Params params;
  std::vector<TensorView> in1{{*a, DType::F32, {n}}}, out1{{*b, DType::F32, {n}}};
  std::vector<TensorView> in2{{*b, DType::F32, {n}}}, out2{{*c, DType::F32, {n}}};
  ASSERT_TRUE((*first)->launch(neg, KernelCall{in1, out1, params}).ok());
  auto event = (*first)->record();
  ASSERT_TRUE(event.ok()) << event.status().message();
  ASSERT_TRUE((*second)->waitFor(**event).ok());
  ASSERT_TRUE((*second)->launch(neg, KernelCall{in2, out2, params}).ok());
  ASSERT_TRUE((*second)->synchronize().ok());
  ASSERT_TRUE((*event)->wait().ok());
  std::vector<float> back(n);
  ASSERT_TRUE(gpu().copyToHost(back.data(), *c, n * 4).ok());
  EXPECT_EQ(back, host);
  for (void *memory : {*a, *b, *c})
    gpu().release(memory);
}

TEST(CudaDevice, KernelsNeedAStream) {
  SHARDC_REQUIRE_GPU();
  const std::vector<TensorView> none;
  const Params params;
  // Called directly, not through a stream's launch: refused, not run on the
  // legacy default stream.
  Status status = kernelTable().find("neg")(KernelCall{none, none, params});
  EXPECT_FALSE(status.ok());
}

TEST(CudaDevice, DeviceErrorsSurfaceAtSynchronize) {
  SHARDC_REQUIRE_GPU();
  std::vector<HostTensor> results;
  Rng rng(1);
  Params params;
  params.set("axis", ints({0}));
  Status status =
      runOnGpu("gather", {random(DType::F32, {4, 3}, rng), values(DType::I64, {2}, {1, 7})},
               {{DType::F32, {2, 3}}}, params, results);
  EXPECT_EQ(status.message(), "gather: index 7 is out of range for an axis of size 4");
  // Reported once: the stream is clean again.
  EXPECT_TRUE(gpuStream().synchronize().ok());
  status = runOnGpu("div", {values(DType::I32, {3}, {1, 2, 3}), values(DType::I32, {3}, {1, 0, 1})},
                    {{DType::I32, {3}}}, Params(), results);
  EXPECT_EQ(status.message(), "div: integer division by zero");
}

TEST(CudaDevice, DeviceErrorPairsIndexAndLimitOfOneThread) {
  SHARDC_REQUIRE_GPU();
  // Thousands of threads fail at once, half with index 9 of a dim of 4, half
  // with index 5000 of a dim of 1000: the report is one thread's pair.
  constexpr int64_t kTuples = 1 << 14;
  std::vector<double> tuples;
  for (int64_t t = 0; t < kTuples; ++t)
    tuples.insert(tuples.end(), t % 2 ? std::initializer_list<double>{9, 0}
                                      : std::initializer_list<double>{0, 5000});
  Rng rng(2);
  std::vector<HostTensor> results;
  Status status = runOnGpu(
      "gather_nd", {random(DType::F32, {4, 1000}, rng), values(DType::I64, {kTuples, 2}, tuples)},
      {{DType::F32, {kTuples}}}, Params(), results);
  EXPECT_TRUE(status.message() == "gather_nd: index 9 is out of range for a dim of size 4" ||
              status.message() == "gather_nd: index 5000 is out of range for a dim of size 1000")
      << status.message();
}

} // namespace
} // namespace shardc::rt::cuda::test
