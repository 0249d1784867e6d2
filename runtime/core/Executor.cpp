//===- Executor.cpp - run a rank's program --------------------------------===//
#include "runtime/core/Executor.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace shardc::rt {
namespace {

constexpr size_t kArenaAlignment = 64;

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

} // namespace

Executor::~Executor() { std::free(arena_); }

StatusOr<std::unique_ptr<Executor>> Executor::prepare(const Artifact &artifact,
                                                      const KernelTable &kernels) {
  std::unique_ptr<Executor> executor(new Executor());
  executor->artifact_ = &artifact;
  const schema::Program &program = *artifact.program;
  executor->arenaBytes_ = static_cast<int64_t>(program.arena_bytes());
  size_t arenaSize = (program.arena_bytes() + kArenaAlignment - 1) / kArenaAlignment *
                     kArenaAlignment;
  executor->arena_ = std::aligned_alloc(kArenaAlignment, std::max(arenaSize, kArenaAlignment));
  if (!executor->arena_)
    return Status::error("cannot allocate the " + std::to_string(arenaSize) + "-byte arena");
  auto *arena = static_cast<std::byte *>(executor->arena_);

  // Every buffer's memory, except inputs, which each run binds.
  for (uint32_t id = 0; id < program.buffers()->size(); ++id) {
    const schema::Buffer &buffer = *program.buffers()->Get(id);
    TensorView view{nullptr, static_cast<DType>(buffer.dtype()), shapeOf(buffer)};
    switch (buffer.storage()) {
    case schema::Storage::Arena:
      if (buffer.offset() + view.bytes() > arenaSize)
        return Status::error("buffer " + std::to_string(id) + " lies outside the arena");
      view.data = arena + buffer.offset();
      break;
    case schema::Storage::Weight: {
      const TensorView *weight = artifact.weights->find(buffer.name()->str());
      if (weight->dtype != view.dtype || weight->shape != view.shape)
        return Status::error("weight '" + buffer.name()->str() + "' is " +
                             dtypeName(weight->dtype) + " " + formatShape(weight->shape) +
                             " in the weight file; the program expects " +
                             dtypeName(view.dtype) + " " + formatShape(view.shape));
      view.data = weight->data;
      break;
    }
    case schema::Storage::Input:
      executor->inputBindings_.push_back({id, static_cast<int64_t>(buffer.index()), 0});
      break;
    case schema::Storage::View: {
      const TensorView &source = executor->buffers_[buffer.index()];
      if (static_cast<size_t>(source.numel()) != static_cast<size_t>(view.numel()))
        return Status::error("view " + std::to_string(id) + " changes the element count");
      view.data = source.data;
      bool ofInput = std::any_of(executor->inputBindings_.begin(),
                                 executor->inputBindings_.end(),
                                 [&](const Binding &b) { return b.buffer == buffer.index(); });
      if (ofInput)
        executor->inputBindings_.push_back({id, -1, buffer.index()});
      break;
    }
    }
    executor->buffers_.push_back(view);
  }

  for (const schema::Step *step : *program.steps()) {
    PreparedStep prepared;
    prepared.function = kernels.find(step->kernel()->str());
    if (!prepared.function)
      return Status::error("the " + artifact.target + " backend has no kernel '" +
                           step->kernel()->str() + "' (step for " +
                           (step->source() ? step->source()->str() : std::string("?")) + ")");
    if (step->inputs())
      prepared.inputIds.assign(step->inputs()->begin(), step->inputs()->end());
    if (step->outputs())
      prepared.outputIds.assign(step->outputs()->begin(), step->outputs()->end());
    prepared.params = decodeParams(*step);
    executor->steps_.push_back(std::move(prepared));
    executor->profile_.push_back(
        {step->kernel()->str(), step->source() ? step->source()->str() : "", 0.0});
  }
  if (program.outputs())
    for (const schema::Output *output : *program.outputs())
      executor->outputs_.emplace_back(output->name()->str(), output->buffer());
  return executor;
}

void Executor::bindInputs(const std::vector<const HostTensor *> &inputs) {
  for (const Binding &binding : inputBindings_) {
    void *data = binding.input >= 0
                     ? const_cast<std::byte *>(inputs[binding.input]->bytes.data())
                     : buffers_[binding.viewOf].data;
    buffers_[binding.buffer].data = data;
  }
  // Steps keep copies of their views: refresh them (a few pointers per step).
  for (PreparedStep &step : steps_) {
    step.inputs.clear();
    for (uint32_t id : step.inputIds)
      step.inputs.push_back(buffers_[id]);
    step.outputs.clear();
    for (uint32_t id : step.outputIds)
      step.outputs.push_back(buffers_[id]);
  }
}

Status Executor::run(const std::vector<const HostTensor *> &inputs,
                     std::vector<HostTensor> &outputs, bool profile) {
  bindInputs(inputs);
  using Clock = std::chrono::steady_clock;
  for (size_t i = 0; i < steps_.size(); ++i) {
    PreparedStep &step = steps_[i];
    Clock::time_point start = profile ? Clock::now() : Clock::time_point();
    Status status = step.function(KernelCall{step.inputs, step.outputs, step.params});
    if (!status)
      return Status::error("step " + std::to_string(i) + " (" + profile_[i].kernel + " for " +
                           profile_[i].source + "): " + status.message());
    if (profile)
      profile_[i].seconds += std::chrono::duration<double>(Clock::now() - start).count();
  }
  outputs.resize(outputs_.size());
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const TensorView &buffer = buffers_[outputs_[i].second];
    // Reuse the caller's tensor across runs when it already fits.
    if (outputs[i].dtype != buffer.dtype || outputs[i].shape != buffer.shape ||
        outputs[i].bytes.size() != buffer.bytes())
      outputs[i] = HostTensor(buffer.dtype, buffer.shape);
    std::memcpy(outputs[i].bytes.data(), buffer.data, buffer.bytes());
  }
  return {};
}

Status checkInputs(const Artifact &artifact,
                   const std::vector<std::pair<std::string, const HostTensor *>> &given,
                   std::vector<const HostTensor *> &ordered) {
  ordered.assign(artifact.inputs.size(), nullptr);
  for (const auto &[name, tensor] : given) {
    auto expected = std::find_if(artifact.inputs.begin(), artifact.inputs.end(),
                                 [&](const TensorSignature &s) { return s.name == name; });
    if (expected == artifact.inputs.end()) {
      std::string names;
      for (const TensorSignature &s : artifact.inputs)
        names += (names.empty() ? "'" : ", '") + s.name + "'";
      return Status::error("input '" + name + "' is not an input of the model; expected " +
                           names);
    }
    if (tensor->dtype != expected->dtype || tensor->shape != expected->shape)
      return Status::error("input '" + name + "': expected " + dtypeName(expected->dtype) + " " +
                           formatShape(expected->shape) + ", got " + dtypeName(tensor->dtype) +
                           " " + formatShape(tensor->shape));
    ordered[expected - artifact.inputs.begin()] = tensor;
  }
  for (size_t i = 0; i < ordered.size(); ++i)
    if (!ordered[i])
      return Status::error("input '" + artifact.inputs[i].name + "' is missing");
  return {};
}

} // namespace shardc::rt
