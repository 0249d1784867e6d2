//===- DevicePlan.h - the device a rank's program runs on -------*- C++ -*-===//
//
// A cpu artifact runs on the host's cores. A cuda artifact runs on the GPU
// the launcher's local rank picks (Launch.h; GPU 0 without one), which must
// exist and be at least as new as the architecture the artifact's kernels
// were built for. The ranks of `--np N` all run on that one GPU, each with
// its own device object (own streams, allocations and copies), and share the
// artifact's generated kernels, which the plan loads and owns.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_SESSION_DEVICEPLAN_H
#define SHARDC_RUNTIME_SESSION_DEVICEPLAN_H

#include "runtime/core/Artifact.h"
#include "runtime/core/Device.h"

#include <memory>
#include <optional>
#include <string>

namespace shardc::rt {

namespace cuda {
class GeneratedKernels;
} // namespace cuda

struct DevicePlan {
  bool cuda = false;
  int ordinal = 0;
  /// "cuda:0 (NVIDIA H200, sm_90)"; empty for the CPU.
  std::string description;
  /// The artifact's kernels.fatbin, loaded; null when it has none. Shared with
  /// every device opened from the plan, so it outlives their launches.
  std::shared_ptr<const cuda::GeneratedKernels> generatedKernels;
};

/// Whether the runtime was built with the CUDA backend (SHARDC_CUDA).
bool hasCuda();

/// Where this process runs `layout`'s ranks, with the artifact's generated
/// kernels loaded; the error is the one line
/// the runtime reports ("the artifact targets cuda (sm_90) but no CUDA device
/// is visible", an artifact built for a newer GPU, a local rank past the
/// visible GPUs).
StatusOr<DevicePlan> planDevice(const ArtifactLayout &layout);

/// A device for one rank.
StatusOr<std::unique_ptr<Device>> openDevice(const DevicePlan &plan);

/// "sm_90a" as (90, true); none for text that is not an sm_ architecture.
struct CudaArch {
  int number = 0;
  bool archSpecific = false; // the "a" suffix: runs on that exact architecture only
};
std::optional<CudaArch> parseCudaArch(const std::string &text);

} // namespace shardc::rt

#endif
