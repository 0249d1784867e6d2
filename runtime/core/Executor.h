//===- Executor.h - run a rank's program ------------------------*- C++ -*-===//
//
// Prepare once (allocate the arena, resolve every buffer to memory and every
// step to its kernel, decode parameters), then run many times: a run binds
// the caller's inputs, launches the steps in order and copies the outputs.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_EXECUTOR_H
#define SHARDC_RUNTIME_CORE_EXECUTOR_H

#include "runtime/core/Artifact.h"
#include "runtime/core/Kernel.h"

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
  /// Binds `artifact`'s program to `kernels`; the artifact must outlive it.
  static StatusOr<std::unique_ptr<Executor>> prepare(const Artifact &artifact,
                                                     const KernelTable &kernels);
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
    std::vector<uint32_t> inputIds, outputIds;
    std::vector<TensorView> inputs, outputs;
    Params params;
  };
  struct Binding {
    uint32_t buffer;
    int64_t input;    ///< the caller's input it shows, or -1
    uint32_t viewOf;  ///< for views of inputs: the viewed buffer
  };

  Executor() = default;
  void bindInputs(const std::vector<const HostTensor *> &inputs);

  const Artifact *artifact_ = nullptr;
  void *arena_ = nullptr;
  int64_t arenaBytes_ = 0;
  std::vector<TensorView> buffers_;
  /// Buffers whose memory is the caller's input (directly or through views),
  /// in program order so views follow what they view.
  std::vector<Binding> inputBindings_;
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
