//===- GeneratedKernelsTest.cpp - an artifact's fatbin, per device --------===//
#include "CudaTestUtil.h"

#include "runtime/cuda/GeneratedKernels.h"

#include <fstream>
#include <iterator>

namespace shardc::rt::cuda::test {
namespace {

/// test/unit/runtime/cuda/Inputs/fill.cu compiled with VALUE=`value`.
std::shared_ptr<const GeneratedKernels> loadFill(int value) {
  const std::string path = SHARDC_CUDA_TEST_FATBINS "/fill" + std::to_string(value) + ".fatbin";
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file.good()) << path;
  auto loaded = GeneratedKernels::load(
      std::vector<char>(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()),
      path);
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  return loaded.ok() ? std::move(*loaded) : nullptr;
}

/// Runs a fused step naming the generated `kernel` on a device of its own
/// that holds `generated`, as a session's rank does; the four floats out.
std::vector<float> runFused(std::shared_ptr<const GeneratedKernels> generated,
                            const std::string &kernel, Status &status) {
  auto device = CudaDevice::open(0, std::move(generated));
  EXPECT_TRUE(device.ok());
  auto stream = (*device)->createStream();
  auto memory = (*device)->allocate(4 * sizeof(float));
  EXPECT_TRUE(stream.ok() && memory.ok());
  const std::vector<TensorView> inputs, outputs = {TensorView{*memory, DType::F32, {4}}};
  Params params;
  params.set("cuda_kernel", strings({kernel}));
  const KernelCall call{inputs, outputs, params, nullptr, nullptr, device->get()};
  status = (*stream)->launch((*device)->kernels().find("fused"), call);
  if (status)
    status = (*stream)->synchronize();
  std::vector<float> result(4, 0.0f);
  EXPECT_TRUE((*device)->copyToHost(result.data(), *memory, 4 * sizeof(float)));
  (*device)->release(*memory);
  return result;
}

TEST(CudaGeneratedKernels, EachDeviceRunsItsOwnArtifactsKernels) {
  SHARDC_REQUIRE_GPU();
  // Two sessions' fatbins, both loaded at once, with a function of the same name.
  auto one = loadFill(1), two = loadFill(2);
  ASSERT_TRUE(one && two);
  Status status;
  EXPECT_EQ(runFused(one, "shardc_fused_0", status), std::vector<float>(4, 1.0f));
  EXPECT_TRUE(status) << status.message();
  EXPECT_EQ(runFused(two, "shardc_fused_0", status), std::vector<float>(4, 2.0f));
  EXPECT_TRUE(status) << status.message();
}

TEST(CudaGeneratedKernels, AKernelTheFatbinLacksIsOneLine) {
  SHARDC_REQUIRE_GPU();
  Status status;
  runFused(loadFill(1), "shardc_fused_7", status);
  EXPECT_EQ(status.message(), "fused: the step runs the generated kernel 'shardc_fused_7', which "
                              "the artifact's loaded kernels do not hold");
  runFused(nullptr, "shardc_fused_0", status);
  EXPECT_EQ(status.message(), "fused: the step runs the generated kernel 'shardc_fused_0', which "
                              "the artifact's loaded kernels do not hold");
}

TEST(CudaGeneratedKernels, BytesThatAreNoFatbinAreRefused) {
  SHARDC_REQUIRE_GPU();
  std::vector<char> junk(64, 'x');
  junk.back() = '\0'; // the driver may read a PTX text up to its end
  auto loaded = GeneratedKernels::load(std::move(junk), "junk.fatbin");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message().rfind("junk.fatbin: ", 0), 0u) << loaded.status().message();
}

} // namespace
} // namespace shardc::rt::cuda::test
