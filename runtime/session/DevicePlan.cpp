//===- DevicePlan.cpp - the device a rank's program runs on ---------------===//
#include "runtime/session/DevicePlan.h"

#include "runtime/cpu/CpuDevice.h"
#include "runtime/session/Launch.h"

#ifdef SHARDC_WITH_CUDA
#include "runtime/cuda/CudaDevice.h"
#include "runtime/cuda/GeneratedKernels.h"
#endif

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

namespace shardc::rt {

std::optional<CudaArch> parseCudaArch(const std::string &text) {
  if (text.rfind("sm_", 0) != 0 || text.size() < 5)
    return std::nullopt;
  CudaArch arch;
  size_t end = 3;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])))
    arch.number = arch.number * 10 + (text[end++] - '0');
  if (end == 3)
    return std::nullopt;
  if (end < text.size()) {
    if (text.substr(end) != "a")
      return std::nullopt;
    arch.archSpecific = true;
  }
  return arch;
}

#ifdef SHARDC_WITH_CUDA

bool hasCuda() { return true; }

namespace {

/// Whether kernels built for `built` run on a GPU of `device`: the fatbin
/// holds machine code for `built` and its PTX, which a newer GPU compiles
/// when it loads it, but nothing an older GPU runs; "sm_90a" code (and PTX)
/// runs on sm_90 alone.
Status checkArch(const std::string &built, const std::string &device, int ordinal,
                 const std::string &product) {
  auto want = parseCudaArch(built), have = parseCudaArch(device);
  if (!want || !have)
    return {}; // not ours to judge; the driver says it when it loads the kernels
  const std::string gpu =
      "CUDA device " + std::to_string(ordinal) + " (" + product + ") is " + device;
  if (want->number > have->number)
    return Status::error("the artifact was compiled for " + built + " but " + gpu +
                         "; recompile with --cuda-arch=" + device);
  if (want->archSpecific && want->number != have->number)
    return Status::error("the artifact was compiled for " + built + ", whose kernels run on " +
                         built.substr(0, built.size() - 1) + " GPUs only, but " + gpu +
                         "; recompile with --cuda-arch=" + device);
  return {};
}

} // namespace

StatusOr<DevicePlan> planDevice(const ArtifactLayout &layout) {
  if (layout.target != "cuda")
    return DevicePlan{};
  auto local = localRank();
  if (!local)
    return local.status();
  const std::string built = layout.cudaArch.empty() ? "no arch given" : layout.cudaArch;
  const int count = cuda::CudaDevice::count();
  if (count == 0)
    return Status::error("the artifact targets cuda (" + built + ") but no CUDA device is visible");
  if (local->value >= count) {
    const char *visible = std::getenv("CUDA_VISIBLE_DEVICES");
    return Status::error(local->source + " picks CUDA device " + std::to_string(local->value) +
                         " but " + std::to_string(count) +
                         (count == 1 ? " device is" : " devices are") + " visible" +
                         (visible ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")" : ""));
  }
  auto device = cuda::CudaDevice::open(local->value);
  if (!device)
    return device.status();
  if (Status status =
          checkArch(layout.cudaArch, (*device)->arch(), local->value, (*device)->productName());
      !status)
    return status;
  DevicePlan plan{true, local->value,
                  "cuda:" + std::to_string(local->value) + " (" + (*device)->productName() + ", " +
                      (*device)->arch() + ")",
                  nullptr};
  if (!layout.cudaKernels.empty()) {
    std::ifstream file(layout.cudaKernels, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(file)),
                            std::istreambuf_iterator<char>());
    if (!file.good() && !file.eof())
      return Status::error(layout.cudaKernels + ": cannot read");
    auto generated = cuda::GeneratedKernels::load(std::move(bytes), layout.cudaKernels);
    if (!generated)
      return generated.status();
    plan.generatedKernels = std::move(*generated);
  }
  return plan;
}

StatusOr<std::unique_ptr<Device>> openDevice(const DevicePlan &plan) {
  if (!plan.cuda)
    return std::unique_ptr<Device>(std::make_unique<cpu::CpuDevice>());
  auto device = cuda::CudaDevice::open(plan.ordinal, plan.generatedKernels);
  if (!device)
    return device.status();
  return std::unique_ptr<Device>(std::move(*device));
}

#else // no CUDA backend

bool hasCuda() { return false; }

StatusOr<DevicePlan> planDevice(const ArtifactLayout &layout) {
  if (layout.target == "cuda")
    return Status::error("the artifact targets cuda but this shardrun was built without the "
                         "CUDA backend (configure with -DSHARDC_CUDA=ON)");
  return DevicePlan{};
}

StatusOr<std::unique_ptr<Device>> openDevice(const DevicePlan &) {
  return std::unique_ptr<Device>(std::make_unique<cpu::CpuDevice>());
}

#endif

} // namespace shardc::rt
