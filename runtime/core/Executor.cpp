//===- Executor.cpp - run a rank's program --------------------------------===//
#include "runtime/core/Executor.h"

#include "runtime/core/ProgramChecks.h"
#include "runtime/io/ByteOrder.h"

#include <algorithm>
#include <chrono>
#include <map>

namespace shardc::rt {
namespace {

Shape shapeOf(const schema::Buffer &buffer) {
  return Shape(buffer.shape()->begin(), buffer.shape()->end());
}

Params decodeParams(const schema::Step &step) {
  Params params;
  if (!step.params())
    return params;
  for (const schema::Param *param : *step.params()) {
    Param value;
    if (param->ints())
      value.ints.assign(param->ints()->begin(), param->ints()->end());
    if (param->floats())
      value.floats.assign(param->floats()->begin(), param->floats()->end());
    if (param->strings())
      for (const flatbuffers::String *text : *param->strings())
        value.strings.push_back(text->str());
    params.set(param->key()->str(), std::move(value));
  }
  return params;
}

/// `total` += `run`, counter by counter (a kernel reports the same names in
/// every run, so the common case is a match at the same position).
void addCounters(StepCounters &total, const StepCounters &run) {
  for (size_t i = 0; i < run.size(); ++i) {
    const auto &[name, value] = run[i];
    if (i < total.size() && total[i].first == name) {
      total[i].second += value;
      continue;
    }
    auto same = std::find_if(total.begin(), total.end(),
                             [&](const auto &counter) { return counter.first == name; });
    if (same == total.end())
      total.emplace_back(name, value);
    else
      same->second += value;
  }
}

} // namespace

Executor::~Executor() {
  if (stream_)
    (void)stream_->synchronize();
  for (void *memory : allocations_)
    device_.release(memory);
}

StatusOr<std::unique_ptr<Executor>> Executor::prepare(const Artifact &artifact, Device &device,
                                                      Communicator *world) {
  if (!world)
    return prepare(artifact, device, world, nullptr, nullptr);
  auto groups = std::make_unique<CollectiveGroups>(artifact.mesh, *world);
  auto executor = prepare(artifact, device, world, groups.get(), nullptr);
  if (executor)
    (*executor)->ownGroups_ = std::move(groups);
  return executor;
}

StatusOr<std::unique_ptr<Executor>> Executor::prepare(const Artifact &artifact, Device &device,
                                                      Communicator &world,
                                                      CollectiveGroups &groups,
                                                      StatePool *states) {
  return prepare(artifact, device, &world, &groups, states);
}

StatusOr<std::unique_ptr<Executor>> Executor::prepare(const Artifact &artifact, Device &device,
                                                      Communicator *world,
                                                      CollectiveGroups *groups,
                                                      StatePool *states) {
  if (world && (world->size() != artifact.ranks || world->rank() != artifact.rank))
    return Status::error("the communicator is rank " + std::to_string(world->rank()) + " of " +
                         std::to_string(world->size()) + "; the program is rank " +
                         std::to_string(artifact.rank) + " of " + std::to_string(artifact.ranks));
  std::unique_ptr<Executor> executor(new Executor(device));
  executor->groups_ = groups;
  if (!states) {
    executor->ownStates_ = std::make_unique<StatePool>(device);
    states = executor->ownStates_.get();
  }
  executor->states_ = states;
  const schema::Program &program = *artifact.program;
  executor->arenaBytes_ = static_cast<int64_t>(program.arena_bytes());
  auto arena = device.allocate(program.arena_bytes());
  if (!arena)
    return arena.status();
  executor->allocations_.push_back(*arena);
  auto stream = device.createStream();
  if (!stream)
    return stream.status();
  executor->stream_ = std::move(*stream);
  auto *arenaBase = static_cast<std::byte *>(*arena);

  // On a device whose kernels read host memory, the steps read the weight
  // file's copy: what they read in place stays held, what they copy is
  // held only while copied (HeldWeights.h).
  const bool readsWeightFile = device.readsHostMemory() && artifact.weights;
  if (readsWeightFile)
    executor->heldWeights_ = std::make_unique<HeldWeights>(artifact.weights);
  // A view reads the buffer it views: the weight a buffer reads, or null.
  const std::vector<uint32_t> root = storageRoots(program);
  auto weightRead = [&](uint32_t id) -> const flatbuffers::String * {
    const schema::Buffer &buffer = *program.buffers()->Get(root[id]);
    return buffer.storage() == schema::Storage::Weight ? buffer.name() : nullptr;
  };

  // Every buffer's memory, fixed for the executor's life.
  executor->inputs_.resize(artifact.inputs.size());
  executor->inputMicrobatchDims_.assign(artifact.inputs.size(), -1);
  std::map<std::string, void *> deviceWeights;
  for (uint32_t id = 0; id < program.buffers()->size(); ++id) {
    const schema::Buffer &buffer = *program.buffers()->Get(id);
    TensorView view{nullptr, static_cast<DType>(buffer.dtype()), shapeOf(buffer)};
    switch (buffer.storage()) {
    case schema::Storage::Arena:
      if (!io::inRange(buffer.offset(), view.bytes(), program.arena_bytes()))
        return Status::error("buffer " + std::to_string(id) + " lies outside the arena");
      view.data = arenaBase + buffer.offset();
      break;
    case schema::Storage::Weight: {
      const TensorView *weight = artifact.weights->find(buffer.name()->str());
      if (weight->dtype != view.dtype || weight->shape != view.shape)
        return Status::error("weight '" + buffer.name()->str() + "' is " +
                             dtypeName(weight->dtype) + " " + formatShape(weight->shape) +
                             " in the weight file; the program expects " +
                             dtypeName(view.dtype) + " " + formatShape(view.shape));
      if (device.readsHostMemory()) {
        view.data = weight->data;
        break;
      }
      // One device copy per weight, however many buffers name it; the
      // stored bytes are held only while copied.
      auto &copy = deviceWeights[buffer.name()->str()];
      if (!copy) {
        auto held = artifact.weights->hold(buffer.name()->str());
        if (!held)
          return held.status();
        auto memory = device.allocate(view.bytes());
        if (!memory)
          return memory.status();
        executor->allocations_.push_back(*memory);
        if (Status status = device.copyToDevice(*memory, weight->data, view.bytes()); !status)
          return status;
        copy = *memory;
      }
      view.data = copy;
      break;
    }
    case schema::Storage::State: {
      // Memory of the pool's, even where kernels could read the weight
      // file: the steps write it, and other ranks share the same file.
      auto memory = states->bind(buffer, artifact.weights.get());
      if (!memory)
        return memory.status();
      view.data = *memory;
      break;
    }
    case schema::Storage::Input: {
      if (buffer.index() >= executor->inputs_.size())
        return Status::error("buffer " + std::to_string(id) + " is input " +
                             std::to_string(buffer.index()) + ", which the manifest lacks");
      auto memory = device.allocate(view.bytes());
      if (!memory)
        return memory.status();
      executor->allocations_.push_back(*memory);
      view.data = *memory;
      executor->inputs_[buffer.index()] = view;
      executor->inputMicrobatchDims_[buffer.index()] = buffer.microbatch_dim();
      break;
    }
    case schema::Storage::View: {
      const TensorView &source = executor->buffers_[buffer.index()];
      if (source.numel() != view.numel())
        return Status::error("view " + std::to_string(id) + " changes the element count");
      view.data = source.data;
      break;
    }
    }
    executor->buffers_.push_back(view);
  }

  // Where a weight is read in place or copied (HeldWeights.h): a weight
  // returned as an output is copied out of the file's copy in every run; a
  // weight that steps copy is let go once its last reader is prepared.
  std::map<std::string, size_t> lastReader;
  if (readsWeightFile) {
    if (program.outputs())
      for (const schema::Output *output : *program.outputs())
        if (const flatbuffers::String *weight = weightRead(output->buffer()))
          if (Status status = executor->heldWeights_->keep(weight->str()); !status)
            return status;
    for (uint32_t s = 0; s < program.steps()->size(); ++s)
      if (const auto *ids = program.steps()->Get(s)->inputs())
        for (uint32_t id : *ids)
          if (const flatbuffers::String *weight = weightRead(id))
            lastReader[weight->str()] = s;
  }
  for (const schema::Step *step : *program.steps()) {
    PreparedStep prepared;
    prepared.function = device.kernels().find(step->kernel()->str());
    if (!prepared.function)
      return Status::error("the " + device.name() + " backend has no kernel '" +
                           step->kernel()->str() + "' (step for " +
                           (step->source() ? step->source()->str() : std::string("?")) + ")");
    if (step->inputs())
      for (uint32_t id : *step->inputs())
        prepared.inputs.push_back(executor->buffers_[id]);
    if (step->outputs())
      for (uint32_t id : *step->outputs())
        prepared.outputs.push_back(executor->buffers_[id]);
    prepared.params = decodeParams(*step);
    // "step 7 (linear for add_19)", for the errors below.
    auto describe = [&] {
      return "step " + std::to_string(executor->steps_.size()) + " (" + step->kernel()->str() +
             " for " + (step->source() ? step->source()->str() : std::string("?")) + ")";
    };
    if (prepared.params.has("mesh_axes")) {
      if (!groups)
        return Status::error(describe() + " is a collective, and no communicator was given");
      auto group = groups->group(prepared.params.strings("mesh_axes"));
      if (!group)
        return Status::error(describe() + ": " + group.status().message());
      prepared.communicator = *group;
    }
    // A weight input is held from here on, but one a prepare function may
    // copy: that one only while the prepare, or its state later, copies it.
    KernelPrepare prepare = device.kernels().findPrepare(step->kernel()->str());
    std::vector<PrepareInput> inputs;
    if (step->inputs())
      for (uint32_t id : *step->inputs()) {
        PrepareInput input;
        // Only a weight is constant: a state changes from run to run.
        input.constant = program.buffers()->Get(id)->storage() == schema::Storage::Weight;
        const flatbuffers::String *weight = readsWeightFile ? weightRead(id) : nullptr;
        if (weight && input.constant && prepare)
          input.hold = executor->heldWeights_->holder(weight->str());
        else if (weight)
          if (Status status = executor->heldWeights_->keep(weight->str()); !status)
            return Status::error(describe() + ": " + status.message());
        inputs.push_back(std::move(input));
      }
    // The backend's own validation of the step, where it has one, so that a
    // bad step fails here rather than asynchronously in the middle of a run.
    if (KernelFunction check = device.kernels().findCheck(step->kernel()->str()))
      if (Status status = check(KernelCall{prepared.inputs, prepared.outputs, prepared.params,
                                           prepared.communicator, nullptr, &device});
          !status)
        return Status::error(describe() + ": " + status.message());
    if (prepare) {
      auto state = prepare(KernelCall{prepared.inputs, prepared.outputs, prepared.params,
                                      prepared.communicator, nullptr, &device},
                           inputs);
      if (!state)
        return Status::error(describe() + ": " + state.status().message());
      prepared.state = std::move(*state);
    }
    // A weight the prepare could have copied but did not is read in place.
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].hold && !(prepared.state && prepared.state->copiesInput(i)))
        if (Status status =
                executor->heldWeights_->keep(weightRead(step->inputs()->Get(i))->str());
            !status)
          return Status::error(describe() + ": " + status.message());
    if (readsWeightFile && step->inputs())
      for (uint32_t id : *step->inputs())
        if (const flatbuffers::String *weight = weightRead(id);
            weight && lastReader[weight->str()] == executor->steps_.size())
          executor->heldWeights_->lastReaderPrepared(weight->str());
    const bool collective = prepared.communicator != nullptr;
    executor->steps_.push_back(std::move(prepared));
    executor->profile_.push_back({step->kernel()->str(),
                                  step->source() ? step->source()->str() : "", 0.0, {},
                                  collective});
  }
  if (program.microbatches() > 1) {
    executor->microbatches_ = static_cast<int>(program.microbatches());
    executor->loopSteps_ = program.microbatch_steps();
  }
  if (program.outputs())
    for (const schema::Output *output : *program.outputs())
      executor->outputs_.emplace_back(output->name()->str(), output->buffer());
  if (device.readsHostMemory()) {
    std::vector<OutputBinding::StepOperands> operands;
    for (PreparedStep &step : executor->steps_)
      operands.push_back({&step.inputs, &step.outputs});
    executor->binding_ = std::make_unique<OutputBinding>(program, executor->buffers_, operands);
  }
  return executor;
}

Status Executor::copyInputs(const std::vector<const HostTensor *> &inputs, int microbatch) {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const TensorView &buffer = inputs_[i];
    if (!buffer.data)
      continue;
    const int dim = inputMicrobatchDims_[i];
    if (dim < 0) {
      if (Status status = device_.copyToDevice(buffer.data, inputs[i]->bytes.data(), buffer.bytes());
          !status)
        return status;
      continue;
    }
    // Piece `microbatch` of `dim`: one block per index of the dims before it.
    const HostTensor &whole = *inputs[i];
    const size_t rows = static_cast<size_t>(buffer.shape[static_cast<size_t>(dim)]);
    size_t outer = 1, rowBytes = dtypeSize(whole.dtype);
    for (size_t d = 0; d < whole.shape.size(); ++d) {
      if (d < static_cast<size_t>(dim))
        outer *= static_cast<size_t>(whole.shape[d]);
      else if (d > static_cast<size_t>(dim))
        rowBytes *= static_cast<size_t>(whole.shape[d]);
    }
    const size_t wholeRows = static_cast<size_t>(whole.shape[static_cast<size_t>(dim)]);
    for (size_t block = 0; block < outer; ++block)
      if (Status status = device_.copyToDevice(
              static_cast<std::byte *>(buffer.data) + block * rows * rowBytes,
              whole.bytes.data() +
                  (block * wholeRows + static_cast<size_t>(microbatch) * rows) * rowBytes,
              rows * rowBytes);
          !status)
        return status;
  }
  return {};
}

Status Executor::runSteps(size_t begin, size_t end, bool profile,
                          std::vector<TraceEvent> *steps) {
  using Clock = std::chrono::steady_clock;
  for (size_t i = begin; i < end; ++i) {
    PreparedStep &step = steps_[i];
    Clock::time_point start = profile ? Clock::now() : Clock::time_point();
    const int64_t startUs = steps && profile ? traceClockUs() : 0;
    StepCounters counters;
    Status status = stream_->launch(
        step.function, KernelCall{step.inputs, step.outputs, step.params, step.communicator,
                                  nullptr, &device_, profile ? &counters : nullptr,
                                  step.state.get()});
    // Timing a step needs it finished; otherwise steps run back to back.
    if (status && profile)
      status = stream_->synchronize();
    if (!status)
      return Status::error("step " + std::to_string(i) + " (" + profile_[i].kernel + " for " +
                           profile_[i].source + "): " + status.message());
    if (profile) {
      profile_[i].seconds += std::chrono::duration<double>(Clock::now() - start).count();
      addCounters(profile_[i].counters, counters);
    }
    if (steps && profile) {
      StepCounters args{{"step", static_cast<int64_t>(i)}};
      args.insert(args.end(), counters.begin(), counters.end());
      steps->push_back({profile_[i].kernel, "step", startUs, traceClockUs() - startUs,
                        std::move(args)});
    }
  }
  return {};
}

Status Executor::run(const std::vector<const HostTensor *> &inputs,
                     std::vector<HostTensor> &outputs, bool profile,
                     std::vector<TraceEvent> *steps) {
  outputs.resize(outputs_.size());
  if (binding_)
    binding_->bind(outputs);
  // A program without a micro-batch loop is one piece whose loop is all.
  const int pieces = std::max(microbatches_, 1);
  const size_t loopEnd = microbatches_ > 1 ? loopSteps_ : steps_.size();
  // A shared pool's accumulators sum over the runs of one step: its owner
  // zeroes them.
  if (ownStates_)
    if (Status status = ownStates_->zeroAccumulators(); !status)
      return status;
  for (int piece = 0; piece < pieces; ++piece) {
    // The previous piece's steps read the input buffers until they finish.
    if (piece > 0)
      if (Status status = stream_->synchronize(); !status)
        return status;
    if (Status status = copyInputs(inputs, piece); !status)
      return status;
    if (Status status = runSteps(0, loopEnd, profile, steps); !status)
      return status;
  }
  if (Status status = runSteps(loopEnd, steps_.size(), profile, steps); !status)
    return status;
  // Deferred sends (NCCL) go out before the stream is waited for.
  if (groups_)
    if (Status status = groups_->flush(); !status)
      return status;
  if (Status status = stream_->synchronize(); !status)
    return status;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (binding_ && binding_->bound(i))
      continue; // written in place
    const TensorView &buffer = buffers_[outputs_[i].second];
    // Reuse the caller's tensor across runs when it already fits.
    if (outputs[i].dtype != buffer.dtype || outputs[i].shape != buffer.shape ||
        outputs[i].bytes.size() != buffer.bytes())
      outputs[i] = HostTensor(buffer.dtype, buffer.shape);
    if (Status status = device_.copyToHost(outputs[i].bytes.data(), buffer.data, buffer.bytes());
        !status)
      return status;
  }
  return {};
}

Status checkInputs(const std::vector<TensorSignature> &signature,
                   const std::vector<std::pair<std::string, const HostTensor *>> &given,
                   std::vector<const HostTensor *> &ordered) {
  ordered.assign(signature.size(), nullptr);
  for (const auto &[name, tensor] : given) {
    auto expected = std::find_if(signature.begin(), signature.end(),
                                 [&](const TensorSignature &s) { return s.name == name; });
    if (expected == signature.end()) {
      std::string names;
      for (const TensorSignature &s : signature)
        names += (names.empty() ? "'" : ", '") + s.name + "'";
      return Status::error("input '" + name + "' is not an input of the model; expected " +
                           names);
    }
    if (tensor->dtype != expected->dtype || tensor->shape != expected->shape)
      return Status::error("input '" + name + "': expected " + dtypeName(expected->dtype) + " " +
                           formatShape(expected->shape) + ", got " + dtypeName(tensor->dtype) +
                           " " + formatShape(tensor->shape));
    ordered[expected - signature.begin()] = tensor;
  }
  for (size_t i = 0; i < ordered.size(); ++i)
    if (!ordered[i])
      return Status::error("input '" + signature[i].name + "' is missing");
  return {};
}

} // namespace shardc::rt
