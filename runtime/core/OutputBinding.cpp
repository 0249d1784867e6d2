//===- OutputBinding.cpp - steps write the outputs into the caller's tensors -===//
#include "runtime/core/OutputBinding.h"

#include "runtime/core/ProgramChecks.h"

#include <algorithm>
#include <set>

namespace shardc::rt {

OutputBinding::OutputBinding(const schema::Program &program, std::vector<TensorView> &buffers,
                             const std::vector<StepOperands> &steps)
    : buffers_(buffers) {
  if (!program.outputs())
    return;
  const std::vector<uint32_t> storage = storageRoots(program);
  std::set<uint32_t> taken;
  for (uint32_t i = 0; i < program.outputs()->size(); ++i) {
    const uint32_t buffer = program.outputs()->Get(i)->buffer();
    const uint32_t root = storage[buffer];
    if (program.buffers()->Get(root)->storage() != schema::Storage::Arena ||
        !taken.insert(root).second)
      continue;
    Bound bound{i, buffer, {}};
    for (uint32_t id = 0; id < storage.size(); ++id)
      if (storage[id] == root)
        bound.slots.push_back(&buffers_[id].data);
    for (size_t s = 0; s < steps.size(); ++s) {
      const schema::Step &step = *program.steps()->Get(static_cast<uint32_t>(s));
      auto collect = [&](const flatbuffers::Vector<uint32_t> *ids, std::vector<TensorView> &views) {
        for (uint32_t k = 0; ids && k < ids->size(); ++k)
          if (storage[ids->Get(k)] == root)
            bound.slots.push_back(&views[k].data);
      };
      collect(step.inputs(), *steps[s].inputs);
      collect(step.outputs(), *steps[s].outputs);
    }
    bound_.push_back(std::move(bound));
  }
}

void OutputBinding::bind(std::vector<HostTensor> &outputs) {
  for (const Bound &bound : bound_) {
    const TensorView &buffer = buffers_[bound.buffer];
    HostTensor &tensor = outputs[bound.output];
    if (tensor.dtype != buffer.dtype || tensor.shape != buffer.shape ||
        tensor.bytes.size() != buffer.bytes())
      tensor = HostTensor(buffer.dtype, buffer.shape);
    for (void **slot : bound.slots)
      *slot = tensor.bytes.data();
  }
}

bool OutputBinding::bound(size_t index) const {
  return std::any_of(bound_.begin(), bound_.end(),
                     [&](const Bound &bound) { return bound.output == index; });
}

} // namespace shardc::rt
