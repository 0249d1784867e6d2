//===- Executor.h - run a rank's program ------------------------*- C++ -*-===//
//
// Prepare once (allocate the arena and the input buffers on the device,
// resolve every buffer to memory and every step to its kernel, decode
// parameters), then run many times: a run copies the caller's inputs in,
// launches the steps in order on a stream and copies the outputs out.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_EXECUTOR_H
#define SHARDC_RUNTIME_CORE_EXECUTOR_H

#include "runtime/core/Artifact.h"
#include "runtime/core/Device.h"

#include <memory>
#include <vector>

namespace shardc::rt {

/// Seconds spent per step in the runs so far (for --profile).
struct StepProfile {
  std::string kernel;
  std::string source;
  double seconds = 0;
};

class Executor {
public:
  /// Binds `artifact`'s program to `device`; both must outlive the executor.
  static StatusOr<std::unique_ptr<Executor>> prepare(const Artifact &artifact, Device &device);
  ~Executor();

  /// Runs once. `inputs` follow the artifact's input order and must match
  /// its signature (checked by the caller, see checkInputs); `outputs` are
  /// resized to the artifact's outputs.
  Status run(const std::vector<const HostTensor *> &inputs, std::vector<HostTensor> &outputs,
             bool profile = false);

  int64_t arenaBytes() const { return arenaBytes_; }
  const std::vector<StepProfile> &profile() const { return profile_; }

private:
  struct PreparedStep {
    KernelFunction function;
    std::vector<TensorView> inputs, outputs;
    Params params;
  };

  explicit Executor(Device &device) : device_(device) {}

  Device &device_;
  std::unique_ptr<Stream> stream_;
  /// Device memory: the arena, then one buffer per input (its views alias it).
  std::vector<void *> allocations_;
  int64_t arenaBytes_ = 0;
  std::vector<TensorView> buffers_;
  /// The device buffer of each of the caller's inputs, in input order.
  std::vector<TensorView> inputs_;
  std::vector<PreparedStep> steps_;
  std::vector<std::pair<std::string, uint32_t>> outputs_;
  std::vector<StepProfile> profile_;
};

/// "input 'ids': expected int64 [1, 16], got int32 [1, 16]" for the first
/// input that does not match the artifact's signature; also missing/extra names.
Status checkInputs(const Artifact &artifact,
                   const std::vector<std::pair<std::string, const HostTensor *>> &given,
                   std::vector<const HostTensor *> &ordered);

} // namespace shardc::rt

#endif
