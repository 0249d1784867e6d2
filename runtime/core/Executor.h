//===- Executor.h - run a rank's program ------------------------*- C++ -*-===//
//
// Prepare once (allocate the arena and the input buffers on the device,
// resolve every buffer to memory and every step to its kernel, decode
// parameters), then run many times: a run copies the caller's inputs in,
// launches the steps in order on a stream and copies the outputs out (on
// the CPU the steps write most outputs into the caller's tensors instead,
// OutputBinding.h).
//
// A training step's program also has state buffers (Storage::State: the
// parameters and the optimizer's state), which the steps update and the
// runs keep: each executor allocates its own copy of every state, one per
// name, and fills it from the weight file (or with zeros) when it prepares,
// so ranks that share one weight file (data-parallel replicas, as
// threads) each train their own, and a new executor starts afresh. The
// programs of one pipeline rank share their states instead: prepared on
// one StatePool, they bind to its memory (StatePool.h). Kernels see a state
// as an input that is not constant, so none keeps anything derived from its
// contents (PackedLinear packs weights only). Between runs the states can
// be read and overwritten on the host (checkpoints).
//
// A training step compiled with --microbatches runs its loop of steps once
// per micro-batch (each input the program cuts is copied in piece by
// piece), then the rest once (docs/training.md).
//
// A program for a mesh of several devices runs on every rank with the rank's
// world Communicator. Each collective step names the mesh axes it reduces or
// gathers over (`mesh_axes`); prepare() makes one sub-group per distinct list
// with Communicator::split — in the order the lists first appear, so the
// identical programs of all ranks split in the same order — and binds it to
// the steps; the stage executors of a pipeline rank share groups split
// up front instead (CollectiveGroups.h). Collectives are blocking calls in
// program order.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_EXECUTOR_H
#define SHARDC_RUNTIME_CORE_EXECUTOR_H

#include "runtime/core/Artifact.h"
#include "runtime/core/CollectiveGroups.h"
#include "runtime/core/Communicator.h"
#include "runtime/core/Device.h"
#include "runtime/core/HeldWeights.h"
#include "runtime/core/OutputBinding.h"
#include "runtime/core/StatePool.h"
#include "runtime/core/Trace.h"

#include <memory>
#include <vector>

namespace shardc::rt {

/// Seconds spent per step in the runs so far (for --profile), and what its
/// kernel counted (KernelCall::counters), summed over those runs.
struct StepProfile {
  std::string kernel;
  std::string source;
  double seconds = 0;
  StepCounters counters;
  bool collective = false; ///< the step talks to other ranks (it has a group)
};

class Executor {
public:
  /// Binds `artifact`'s program to `device` and, for collective steps, to
  /// groups split from `world` (this rank's communicator over all the
  /// artifact's ranks; collective over it). All must outlive the executor.
  /// Without `world` a program with collectives is refused.
  static StatusOr<std::unique_ptr<Executor>> prepare(const Artifact &artifact, Device &device,
                                                     Communicator *world = nullptr);
  /// As above, the collective steps bound to `groups` (split from `world`),
  /// which must outlive the executor. With `states`, the program's states
  /// are the pool's (bound there by name) and a run leaves its accumulators
  /// alone: it is one micro-batch of a step whose start the pool's owner
  /// knows (StatePool::zeroAccumulators). The pool must outlive the executor.
  static StatusOr<std::unique_ptr<Executor>> prepare(const Artifact &artifact, Device &device,
                                                     Communicator &world,
                                                     CollectiveGroups &groups,
                                                     StatePool *states = nullptr);
  ~Executor();

  /// Runs once. `inputs` follow the artifact's input order and must match
  /// its signature (checked by the caller, see checkInputs); `outputs` are
  /// resized to the artifact's outputs. With `profile`, each step is timed,
  /// and with `steps` also recorded there as a trace event.
  Status run(const std::vector<const HostTensor *> &inputs, std::vector<HostTensor> &outputs,
             bool profile = false, std::vector<TraceEvent> *steps = nullptr);

  int64_t arenaBytes() const { return arenaBytes_; }
  const std::vector<StepProfile> &profile() const { return profile_; }

  /// The program's states, one per name, in the order of their first
  /// buffer (of a shared pool: all the pool's).
  const std::vector<StateTensor> &states() const { return states_->states(); }
  /// The state called `name`, or null.
  const StateTensor *findState(const std::string &name) const {
    return states_->findState(name);
  }
  /// State `name` copied to the host, between runs.
  StatusOr<HostTensor> readState(const std::string &name) const {
    return states_->readState(name);
  }
  /// Overwrites state `name`, between runs, with `value` (host memory of
  /// the state's type and shape).
  Status writeState(const std::string &name, const TensorView &value) {
    return states_->writeState(name, value);
  }
  /// The pool of the program's states (its own, or the shared one): what a
  /// checkpoint or an export reads, as for a pipeline rank's pool.
  StatePool &statePool() { return *states_; }
  const StatePool &statePool() const { return *states_; }

private:
  struct PreparedStep {
    KernelFunction function;
    std::vector<TensorView> inputs, outputs;
    Params params;
    Communicator *communicator = nullptr;
    std::unique_ptr<KernelState> state; // the kernel's KernelPrepare result
  };

  explicit Executor(Device &device) : device_(device) {}
  /// The caller's inputs into their device buffers: micro-batch
  /// `microbatch`'s piece of those the program cuts.
  Status copyInputs(const std::vector<const HostTensor *> &inputs, int microbatch);
  /// Launches steps [begin, end) in order.
  Status runSteps(size_t begin, size_t end, bool profile, std::vector<TraceEvent> *steps);
  static StatusOr<std::unique_ptr<Executor>> prepare(const Artifact &artifact, Device &device,
                                                     Communicator *world,
                                                     CollectiveGroups *groups,
                                                     StatePool *states);

  Device &device_;
  /// The weights the steps read in place (HeldWeights.h), where they read
  /// the weight file's copy.
  std::unique_ptr<HeldWeights> heldWeights_;
  std::unique_ptr<Stream> stream_;
  /// Device memory: the arena, the inputs and the weights' device copies
  /// (a GPU's); views alias them.
  std::vector<void *> allocations_;
  /// The states: the executor's own pool, whose accumulators each run
  /// zeroes first, or a shared one.
  std::unique_ptr<StatePool> ownStates_;
  StatePool *states_ = nullptr;
  int64_t arenaBytes_ = 0;
  std::vector<TensorView> buffers_;
  /// The device buffer of each of the caller's inputs, in input order, and
  /// the dim each is cut along into micro-batches (-1: given whole).
  std::vector<TensorView> inputs_;
  std::vector<int> inputMicrobatchDims_;
  /// A training step in micro-batches (program.fbs): steps [0, loopSteps_)
  /// run once per micro-batch, the rest once; the accumulators the loop
  /// sums into are zeroed first.
  int microbatches_ = 0;
  size_t loopSteps_ = 0;
  std::vector<PreparedStep> steps_;
  std::vector<std::pair<std::string, uint32_t>> outputs_;
  std::vector<StepProfile> profile_;
  /// On a device that reads host memory: the outputs the steps write
  /// straight into the caller's tensors.
  std::unique_ptr<OutputBinding> binding_;
  /// The groups the collective steps run on: the executor's own, or shared.
  std::unique_ptr<CollectiveGroups> ownGroups_;
  CollectiveGroups *groups_ = nullptr;
};

/// "input 'ids': expected int64 [1, 16], got int32 [1, 16]" for the first
/// input that does not match the artifact's signature; also missing/extra names.
Status checkInputs(const std::vector<TensorSignature> &signature,
                   const std::vector<std::pair<std::string, const HostTensor *>> &given,
                   std::vector<const HostTensor *> &ordered);
inline Status checkInputs(const Artifact &artifact,
                          const std::vector<std::pair<std::string, const HostTensor *>> &given,
                          std::vector<const HostTensor *> &ordered) {
  return checkInputs(artifact.inputs, given, ordered);
}

} // namespace shardc::rt

#endif
