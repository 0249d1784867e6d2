//===- StatePool.cpp - the state buffers a rank's programs share ----------===//
#include "runtime/core/StatePool.h"

#include "runtime/core/Kernel.h"

#include <algorithm>

namespace shardc::rt {
namespace {

/// Zeros `bytes` of device memory at `memory`. Devices copy but do not
/// fill, so zeros go from the host a chunk at a time.
Status zeroFill(Device &device, void *memory, size_t bytes) {
  static const std::vector<std::byte> zeros(size_t(1) << 20);
  for (size_t done = 0; done < bytes; done += zeros.size())
    if (Status status = device.copyToDevice(static_cast<std::byte *>(memory) + done, zeros.data(),
                                            std::min(zeros.size(), bytes - done));
        !status)
      return status;
  return {};
}

/// "float32 [4] (an accumulator)", for the message of a disagreement.
std::string describe(const TensorView &view, bool zeroInit, bool accumulator) {
  return std::string(dtypeName(view.dtype)) + " " + formatShape(view.shape) +
         (accumulator ? " (an accumulator)"
          : zeroInit  ? " (starting as zeros)"
                      : " (starting from the weight file)");
}

} // namespace

StatePool::~StatePool() {
  for (void *memory : allocations_)
    device_.release(memory);
}

StatusOr<void *> StatePool::bind(const schema::Buffer &buffer, const io::SafeTensorsFile *weights) {
  const std::string name = buffer.name()->str();
  TensorView view{nullptr, static_cast<DType>(buffer.dtype()),
                  Shape(buffer.shape()->begin(), buffer.shape()->end())};
  const bool zeroInit = buffer.zero_init(), accumulator = buffer.accumulator();
  if (auto found = bound_.find(name); found != bound_.end()) {
    // One memory for every program that names it: they must mean one tensor
    // (an accumulator taken for a parameter would be zeroed every step).
    const Bound &first = found->second;
    if (first.view.dtype != view.dtype || first.view.shape != view.shape ||
        first.zeroInit != zeroInit || first.accumulator != accumulator)
      return Status::error("state '" + name + "' is " + describe(view, zeroInit, accumulator) +
                           " here but " + describe(first.view, first.zeroInit, first.accumulator) +
                           " in an earlier program of the rank");
    return first.view.data;
  }
  const TensorView *initial = zeroInit || !weights ? nullptr : weights->find(name);
  if (!zeroInit && (!initial || initial->dtype != view.dtype || initial->shape != view.shape))
    return Status::error("state '" + name +
                         "' is not in the weight file as the program expects it");
  // The file's bytes of the first value are held only while copied: the
  // steps read the copy (SafeTensorsFile::hold).
  WeightHold held;
  if (initial) {
    auto hold = weights->hold(name);
    if (!hold)
      return hold.status();
    held = std::move(*hold);
  }
  auto memory = device_.allocate(view.bytes());
  if (!memory)
    return memory.status();
  allocations_.push_back(*memory);
  if (Status status = initial ? device_.copyToDevice(*memory, initial->data, view.bytes())
                              : zeroFill(device_, *memory, view.bytes());
      !status)
    return status;
  view.data = *memory;
  bound_.emplace(name, Bound{view, zeroInit, accumulator});
  if (accumulator)
    accumulators_.push_back(view);
  else
    states_.push_back({name, view});
  return view.data;
}

Status StatePool::zeroAccumulators() {
  for (const TensorView &sum : accumulators_)
    if (Status status = zeroFill(device_, sum.data, sum.bytes()); !status)
      return status;
  return {};
}

const StateTensor *StatePool::findState(const std::string &name) const {
  auto found = std::find_if(states_.begin(), states_.end(),
                            [&](const StateTensor &state) { return state.name == name; });
  return found == states_.end() ? nullptr : &*found;
}

StatusOr<HostTensor> StatePool::readState(const std::string &name) const {
  const StateTensor *state = findState(name);
  if (!state)
    return Status::error("the program has no state '" + name + "'");
  HostTensor value(state->view.dtype, state->view.shape);
  if (Status status = device_.copyToHost(value.bytes.data(), state->view.data, value.bytes.size());
      !status)
    return status;
  return value;
}

Status StatePool::writeState(const std::string &name, const TensorView &value) {
  const StateTensor *state = findState(name);
  if (!state)
    return Status::error("the program has no state '" + name + "'");
  if (value.dtype != state->view.dtype || value.shape != state->view.shape)
    return Status::error("state '" + name + "' is " + dtypeName(state->view.dtype) + " " +
                         formatShape(state->view.shape) + "; the value given is " +
                         dtypeName(value.dtype) + " " + formatShape(value.shape));
  return device_.copyToDevice(state->view.data, value.data, value.bytes());
}

} // namespace shardc::rt
