//===- StatePool.h - the state buffers a rank's programs share --*- C++ -*-===//
//
// A training step's state buffers (Storage::State: the parameters, the
// optimizer's state and the micro-batch accumulators) outlive every run. An
// executor prepared alone keeps its own pool; the programs of one pipeline
// rank (a stage's forward, backward and update parts, docs/pipeline.md)
// share one, so that the gradients the backward accumulates are what the
// update reads, and what the update writes is what the next step's forward
// reads. A state is allocated once per pool, by the first program that
// names it, and initialised from that program's weight file (or with
// zeros); a later program naming it binds to the same memory.
//
// Accumulators are zeroed on request only: a pipeline rank runs a program
// once per micro-batch, so only it knows where a step starts. They are no
// state of the model: states() and a checkpoint leave them out.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_STATEPOOL_H
#define SHARDC_RUNTIME_CORE_STATEPOOL_H

#include "runtime/core/Device.h"
#include "runtime/core/Status.h"
#include "runtime/core/Tensor.h"
#include "runtime/io/SafeTensors.h"
#include "runtime/schemas/program_generated.h"

#include <map>
#include <string>
#include <vector>

namespace shardc::rt {

/// A state buffer's memory: the pool's one copy of the tensor `name`.
struct StateTensor {
  std::string name;
  TensorView view; ///< device memory
};

class StatePool {
public:
  /// States in the memory of `device`, which must outlive the pool.
  explicit StatePool(Device &device) : device_(device) {}
  ~StatePool();
  StatePool(const StatePool &) = delete;
  StatePool &operator=(const StatePool &) = delete;

  /// The memory of the state that `buffer` (a State buffer of a checked
  /// program) names: on its first binding allocated and filled from
  /// `weights` (null for a program without weights) or with zeros; later
  /// bindings must agree on its type, shape, initial value and kind.
  StatusOr<void *> bind(const schema::Buffer &buffer, const io::SafeTensorsFile *weights);

  /// Zeros every accumulator, as the start of a step does.
  Status zeroAccumulators();

  /// The model's states (no accumulator), in the order of their first binding.
  const std::vector<StateTensor> &states() const { return states_; }
  /// The state called `name`, or null.
  const StateTensor *findState(const std::string &name) const;
  /// State `name` copied to the host, between runs.
  StatusOr<HostTensor> readState(const std::string &name) const;
  /// Overwrites state `name`, between runs, with `value` (host memory of
  /// the state's type and shape).
  Status writeState(const std::string &name, const TensorView &value);

private:
  /// What the first binding of a name said, which later ones must repeat.
  struct Bound {
    TensorView view;
    bool zeroInit = false, accumulator = false;
  };

  Device &device_;
  std::map<std::string, Bound> bound_;
  std::vector<StateTensor> states_;
  std::vector<TensorView> accumulators_;
  std::vector<void *> allocations_;
};

} // namespace shardc::rt

#endif
