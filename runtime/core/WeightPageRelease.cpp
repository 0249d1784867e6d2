//===- WeightPageRelease.cpp - drop a weight's file pages once it is copied -===//
#include "runtime/core/WeightPageRelease.h"

#include "runtime/core/ProgramChecks.h"

namespace shardc::rt {

WeightPageRelease::WeightPageRelease(const schema::Program &program,
                                     std::function<void(const std::string &)> release)
    : release_(std::move(release)) {
  // A view reads the buffer it views.
  const std::vector<uint32_t> root = storageRoots(program);
  reads_.resize(program.steps()->size());
  for (uint32_t s = 0; s < program.steps()->size(); ++s) {
    const schema::Step &step = *program.steps()->Get(s);
    if (!step.inputs())
      continue;
    for (uint32_t i = 0; i < step.inputs()->size(); ++i) {
      const schema::Buffer &buffer = *program.buffers()->Get(root[step.inputs()->Get(i)]);
      if (buffer.storage() != schema::Storage::Weight)
        continue;
      reads_[s].push_back({i, buffer.name()->str()});
      byName_[buffer.name()->str()].lastReader = s;
    }
  }
}

void WeightPageRelease::stepPrepared(size_t index, const KernelState *state) {
  if (index >= reads_.size())
    return;
  for (const Read &read : reads_[index]) {
    Weight &weight = byName_[read.weight];
    weight.allCopied = weight.allCopied && state && state->copiesInput(read.input);
    if (weight.lastReader == index && weight.allCopied)
      release_(read.weight);
  }
}

} // namespace shardc::rt
