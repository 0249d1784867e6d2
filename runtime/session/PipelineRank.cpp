//===- PipelineRank.cpp - one rank of a pipeline artifact -----------------===//
#include "runtime/session/PipelineRank.h"

#include "runtime/session/MicroBatch.h"

namespace shardc::rt {
namespace {

/// "forward stage 1, micro-batch 0", "update stage 0 level 0", "send
/// transfer 2, micro-batch 1", for messages and the trace.
std::string describe(const PipelineAction &action) {
  if (action.op == PipelineAction::Op::Update)
    return "update stage " + std::to_string(action.stage) + " level " +
           std::to_string(action.level);
  std::string what =
      action.runs()
          ? std::string(programPartName(action.part())) + " stage " + std::to_string(action.stage)
          : std::string(action.op == PipelineAction::Op::Send ? "send" : "recv") + " transfer " +
                std::to_string(action.transfer);
  return what + ", micro-batch " + std::to_string(action.microbatch);
}

/// What a transfer carries on the wire: its (transfer, micro-batch), which
/// the receiver checks (Communicator::recvTagged). The transfer names both
/// stages.
uint64_t tagOf(const PipelineAction &action) {
  return static_cast<uint64_t>(action.transfer) << 32 | static_cast<uint32_t>(action.microbatch);
}

/// "transfer 0 (stage 0 to 1), micro-batch 1": a tag, for errors.
std::string nameOfTag(const PipelinePlan &plan, uint64_t tag) {
  const uint64_t transfer = tag >> 32;
  std::string name = "transfer " + std::to_string(transfer);
  if (transfer < plan.transfers.size()) // the peer's tag may be garbage
    name += " (stage " + std::to_string(plan.transfers[transfer].from) + " to " +
            std::to_string(plan.transfers[transfer].to) + ")";
  return name + ", micro-batch " + std::to_string(tag & 0xffffffffu);
}

} // namespace

StatusOr<std::unique_ptr<PipelineRank>> PipelineRank::prepare(const PipelinePlan &plan,
                                                              const std::vector<Artifact> &programs,
                                                              Device &device, Communicator &world) {
  if (world.onDevice())
    return Status::error("pipeline artifacts pass values between stages over a host "
                         "communicator; run them with --comm mpi or --np, not over NCCL");
  const MeshShape &mesh = programs.front().mesh;
  std::unique_ptr<PipelineRank> rank(new PipelineRank(plan, device, world, mesh));
  rank->coordinate_ = static_cast<int>(mesh.coordinates(world.rank())[plan.ppAxis]);
  const std::vector<int> held = plan.programsAt(rank->coordinate_);
  if (held.size() != programs.size())
    return Status::error("pp " + std::to_string(rank->coordinate_) + " runs " +
                         std::to_string(held.size()) + " program(s); " +
                         std::to_string(programs.size()) + " were given");
  if (Status status = rank->groups_.splitAll(kPipelineAxis); !status)
    return status;
  rank->executors_.resize(plan.programs.size());
  for (size_t i = 0; i < held.size(); ++i) {
    auto executor = Executor::prepare(programs[i], device, world, rank->groups_, &rank->states_);
    if (!executor)
      return Status::error(plan.programName(held[i]) + ": " + executor.status().message());
    rank->executors_[held[i]] = std::move(*executor);
  }
  return rank;
}

int PipelineRank::peerOf(int stage) const {
  std::vector<int64_t> coordinates = mesh_.coordinates(world_.rank());
  coordinates[plan_.ppAxis] = plan_.coordinateOf(stage);
  return static_cast<int>(mesh_.rankOf(coordinates));
}

Status PipelineRank::runProgram(const PipelineAction &action,
                                const std::vector<const HostTensor *> &inputs, bool profile,
                                std::vector<TraceEvent> *trace) {
  const PipelineProgram &program = plan_.programs[action.program];
  const int m = action.microbatch;
  // The slices live until the program ends; the executor copies them in.
  std::vector<HostTensor> slices;
  slices.reserve(program.inputs.size());
  std::vector<const HostTensor *> given;
  HostTensor index(DType::I64, {1});
  *reinterpret_cast<int64_t *>(index.bytes.data()) = m;
  for (const StageTensor &input : program.inputs) {
    if (input.microbatchIndex) {
      given.push_back(&index);
      continue;
    }
    if (input.transfer >= 0) {
      const std::optional<HostTensor> &value = held_[input.transfer][m];
      if (!value)
        return Status::error("transfer " + std::to_string(input.transfer) +
                             " is not here for this micro-batch");
      given.push_back(&*value);
      continue;
    }
    const size_t caller = static_cast<size_t>(input.caller);
    // An update runs once per step, on the whole input (PipelinePlan.h).
    const std::optional<int> dim = program.perStep() ? std::nullopt : plan_.inputDims[caller];
    if (!dim) {
      given.push_back(inputs[caller]);
      continue;
    }
    slices.push_back(sliceAlong(*inputs[caller], *dim, m, plan_.microbatches));
    given.push_back(&slices.back());
  }
  std::vector<HostTensor> produced;
  if (Status status = executors_[action.program]->run(given, produced, profile,
                                                      profile ? trace : nullptr);
      !status)
    return status;
  for (const StageTensor &input : program.inputs)
    if (input.transfer >= 0)
      held_[input.transfer][m].reset(); // its one consumer is done with it
  for (size_t i = 0; i < program.outputs.size(); ++i) {
    const StageTensor &output = program.outputs[i];
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
  if (action.runs())
    return runProgram(action, inputs, profile, trace);
  const PipelineTransfer &transfer = plan_.transfers[action.transfer];
  std::optional<HostTensor> &value = held_[action.transfer][action.microbatch];
  if (action.op == PipelineAction::Op::Recv) {
    if (value)
      return Status::error("the transfer was already received for this micro-batch");
    value = HostTensor(transfer.dtype, transfer.shape);
    return world_.recvTagged(value->bytes.data(), value->bytes.size(), peerOf(transfer.from),
                             tagOf(action), [&](uint64_t tag) { return nameOfTag(plan_, tag); });
  }
  if (!value)
    return Status::error("no program on this rank produced it yet");
  Status status = world_.sendTagged(value->bytes.data(), value->bytes.size(), peerOf(transfer.to),
                                    tagOf(action));
  value.reset(); // a send is buffered: the bytes are the communicator's now
  return status;
}

Status PipelineRank::run(const std::vector<const HostTensor *> &inputs,
                         const OutputGather &gather, std::vector<HostTensor> &outputs,
                         bool profile, std::vector<TraceEvent> *trace) {
  held_.assign(plan_.transfers.size(), std::vector<std::optional<HostTensor>>(plan_.microbatches));
  pieces_.assign(plan_.outputDims.size(),
                 std::vector<std::optional<HostTensor>>(plan_.microbatches));
  // The gradients of this step sum from zero over its micro-batches.
  if (Status status = states_.zeroAccumulators(); !status)
    return status;
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
      if (!action.runs())
        event.args.emplace_back("transfer", action.transfer);
      else
        event.args.emplace_back("stage", action.stage);
      if (action.op == PipelineAction::Op::Update)
        event.args.emplace_back("level", action.level);
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
    if (executor)
      total += executor->arenaBytes();
  return total;
}

std::vector<StepProfile> PipelineRank::profile() const {
  std::vector<StepProfile> steps;
  for (size_t i = 0; i < executors_.size(); ++i) {
    if (!executors_[i])
      continue;
    const std::string name = plan_.programName(static_cast<int>(i)) + ": ";
    for (StepProfile step : executors_[i]->profile()) {
      step.source = name + step.source;
      steps.push_back(std::move(step));
    }
  }
  return steps;
}

} // namespace shardc::rt
