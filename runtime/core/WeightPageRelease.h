//===- WeightPageRelease.h - drop a weight's file pages once it is copied -*- C++ -*-===//
//
// A kernel may keep its own copy of a weight (the CPU linear packs its
// weight for oneDNN, KernelState::copiesInput). When every step that reads a
// weight has done so, the weight file's pages of it serve nobody, and on the
// CPU, where steps read the mapped file directly, they would hold the
// weight's memory twice. The executor tells this class each step it has
// prepared, in program order; after a weight's last reader it releases the
// weight (the executor's callback: SafeTensorsFile::releasePages) if all its
// readers copied it. Releasing as the steps go, not at the end, keeps the peak at about one
// copy of the weights rather than two.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_WEIGHTPAGERELEASE_H
#define SHARDC_RUNTIME_CORE_WEIGHTPAGERELEASE_H

#include "runtime/core/Kernel.h"
#include "runtime/schemas/program_generated.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace shardc::rt {

class WeightPageRelease {
public:
  /// `release(name)` lets the pages of the weight `name` go.
  WeightPageRelease(const schema::Program &program,
                    std::function<void(const std::string &)> release);

  /// Step `index` is prepared with `state` (null when it has none).
  void stepPrepared(size_t index, const KernelState *state);

private:
  struct Read {
    uint32_t input; // the step's input position
    std::string weight;
  };
  struct Weight {
    size_t lastReader = 0;
    bool allCopied = true;
  };
  std::function<void(const std::string &)> release_;
  std::vector<std::vector<Read>> reads_; // per step
  std::map<std::string, Weight> byName_;
};

} // namespace shardc::rt

#endif // SHARDC_RUNTIME_CORE_WEIGHTPAGERELEASE_H
