//===- PipelineRank.cpp - one rank of a pipeline artifact -----------------===//
#include "runtime/session/PipelineRank.h"

#include "runtime/session/MicroBatch.h"

namespace shardc::rt {
namespace {

/// "forward stage 1, micro-batch 0", for messages and the trace.
std::string describe(const PipelineAction &action) {
  std::string what = action.op == PipelineAction::Op::Forward
                         ? "forward stage " + std::to_string(action.stage)
                         : std::string(action.op == PipelineAction::Op::Send ? "send" : "recv") +
                               " transfer " + std::to_string(action.transfer);
  return what + ", micro-batch " + std::to_string(action.microbatch);
}

} // namespace

StatusOr<std::unique_ptr<PipelineRank>> PipelineRank::prepare(const PipelinePlan &plan,
                                                              const std::vector<Artifact> &stages,
                                                              Device &device, Communicator &world) {
  if (world.onDevice())
    return Status::error("pipeline artifacts pass values between stages over a host "
                         "communicator; run them with --comm mpi or --np, not over NCCL");
  const MeshShape &mesh = stages.front().mesh;
  std::unique_ptr<PipelineRank> rank(new PipelineRank(plan, device, world, mesh));
  rank->coordinate_ = static_cast<int>(mesh.coordinates(world.rank())[plan.ppAxis]);
  if (Status status = rank->groups_.splitAll(kPipelineAxis); !status)
    return status;
  for (const Artifact &stage : stages) {
    auto executor = Executor::prepare(stage, device, world, rank->groups_);
    if (!executor)
      return Status::error("stage " + std::to_string(stage.stage) + ": " +
                           executor.status().message());
    rank->executors_.push_back(std::move(*executor));
    rank->stages_.push_back(stage.stage);
  }
  return rank;
}

int PipelineRank::peerOf(int stage) const {
  std::vector<int64_t> coordinates = mesh_.coordinates(world_.rank());
  coordinates[plan_.ppAxis] = plan_.coordinateOf(stage);
  return static_cast<int>(mesh_.rankOf(coordinates));
}

Status PipelineRank::forward(const PipelineAction &action,
                             const std::vector<const HostTensor *> &inputs, bool profile,
                             std::vector<TraceEvent> *trace) {
  const StageSignature &signature = plan_.programs[action.stage];
  const int m = action.microbatch;
  // The slices live until the forward ends; the executor copies them in.
  std::vector<HostTensor> slices;
  slices.reserve(signature.inputs.size());
  std::vector<const HostTensor *> given;
  HostTensor index(DType::I64, {1});
  *reinterpret_cast<int64_t *>(index.bytes.data()) = m;
  for (const StageTensor &input : signature.inputs) {
    if (input.microbatchIndex) {
      given.push_back(&index);
      continue;
    }
    if (input.transfer >= 0) {
      const std::optional<HostTensor> &value = held_[input.transfer][m];
      if (!value)
        return Status::error("transfer " + std::to_string(input.transfer) +
                             " was not received for this micro-batch");
      given.push_back(&*value);
      continue;
    }
    const size_t index = static_cast<size_t>(input.caller);
    const std::optional<int> dim = plan_.inputDims[index];
    if (!dim) {
      given.push_back(inputs[index]);
      continue;
    }
    slices.push_back(sliceAlong(*inputs[index], *dim, m, plan_.microbatches));
    given.push_back(&slices.back());
  }
  const size_t position = static_cast<size_t>(action.stage / plan_.ppSize);
  std::vector<HostTensor> produced;
  if (Status status =
          executors_[position]->run(given, produced, profile, profile ? trace : nullptr);
      !status)
    return status;
  for (const StageTensor &input : signature.inputs)
    if (input.transfer >= 0)
      held_[input.transfer][m].reset(); // used: its micro-batch is done with it
  for (size_t i = 0; i < signature.outputs.size(); ++i) {
    const StageTensor &output = signature.outputs[i];
    if (output.transfer >= 0) {
      held_[output.transfer][m] = std::move(produced[i]);
      continue;
    }
    pieces_[output.caller][m] = std::move(produced[i]);
  }
  return {};
}

Status PipelineRank::perform(const PipelineAction &action,
                             const std::vector<const HostTensor *> &inputs, bool profile,
                             std::vector<TraceEvent> *trace) {
  if (action.op == PipelineAction::Op::Forward)
    return forward(action, inputs, profile, trace);
  const PipelineTransfer &transfer = plan_.transfers[action.transfer];
  std::optional<HostTensor> &value = held_[action.transfer][action.microbatch];
  if (action.op == PipelineAction::Op::Recv) {
    if (value)
      return Status::error("the transfer was already received for this micro-batch");
    value = HostTensor(transfer.dtype, transfer.shape);
    return world_.recv(value->bytes.data(), value->bytes.size(), peerOf(transfer.from));
  }
  if (!value)
    return Status::error("no forward on this rank produced it yet");
  Status status = world_.send(value->bytes.data(), value->bytes.size(), peerOf(transfer.to));
  value.reset(); // a send is buffered: the bytes are the communicator's now
  return status;
}

Status PipelineRank::run(const std::vector<const HostTensor *> &inputs,
                         const OutputGather &gather, std::vector<HostTensor> &outputs,
                         bool profile, std::vector<TraceEvent> *trace) {
  held_.assign(plan_.transfers.size(), std::vector<std::optional<HostTensor>>(plan_.microbatches));
  pieces_.assign(plan_.outputDims.size(),
                 std::vector<std::optional<HostTensor>>(plan_.microbatches));
  const std::vector<PipelineAction> &actions = plan_.actions[coordinate_];
  for (size_t i = 0; i < actions.size(); ++i) {
    const int64_t start = trace ? traceClockUs() : 0;
    if (Status status = perform(actions[i], inputs, profile, trace); !status)
      return Status::error("pp " + std::to_string(coordinate_) + ", action " + std::to_string(i) +
                           " (" + describe(actions[i]) + "): " + status.message());
    if (trace) {
      const PipelineAction &action = actions[i];
      TraceEvent event{describe(action),
                       "pipeline",
                       start,
                       traceClockUs() - start,
                       {{"action", static_cast<int64_t>(i)}, {"microbatch", action.microbatch}}};
      if (action.op == PipelineAction::Op::Forward)
        event.args.emplace_back("stage", action.stage);
      else
        event.args.emplace_back("transfer", action.transfer);
      trace->push_back(std::move(event));
    }
  }
  outputs.clear();
  const bool outputRank = world_.rank() == plan_.outputRank;
  for (size_t i = 0; i < pieces_.size(); ++i) {
    // Micro-batch by micro-batch: the dp pieces of micro-batch m are one
    // contiguous slice of the whole (docs/pipeline.md).
    for (int m = 0; m < plan_.microbatches; ++m)
      if (pieces_[i][m] && gather.gathers(i)) {
        HostTensor whole;
        if (Status status = gather.gather(i, *pieces_[i][m], whole, device_); !status)
          return status;
        if (outputRank)
          pieces_[i][m] = std::move(whole);
      }
    if (!outputRank)
      continue;
    std::vector<HostTensor> produced;
    for (int m = 0; m < plan_.microbatches; ++m)
      if (pieces_[i][m])
        produced.push_back(std::move(*pieces_[i][m]));
    const std::optional<int> dim = plan_.outputDims[i];
    // Without a micro-batch dimension the output is the same on every
    // micro-batch (docs/pipeline.md): the last one's is kept.
    if (dim ? produced.size() != static_cast<size_t>(plan_.microbatches) : produced.empty())
      return Status::error("the output rank's actions produced output " + std::to_string(i) +
                           " for " + std::to_string(produced.size()) + " of " +
                           std::to_string(plan_.microbatches) + " micro-batches");
    outputs.push_back(dim ? joinAlong(produced, *dim) : std::move(produced.back()));
  }
  return {};
}

int64_t PipelineRank::arenaBytes() const {
  int64_t total = 0;
  for (const std::unique_ptr<Executor> &executor : executors_)
    total += executor->arenaBytes();
  return total;
}

std::vector<StepProfile> PipelineRank::profile() const {
  std::vector<StepProfile> steps;
  for (size_t i = 0; i < executors_.size(); ++i)
    for (StepProfile step : executors_[i]->profile()) {
      step.source = "stage " + std::to_string(stages_[i]) + ": " + step.source;
      steps.push_back(std::move(step));
    }
  return steps;
}

} // namespace shardc::rt
