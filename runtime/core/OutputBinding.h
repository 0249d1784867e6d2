//===- OutputBinding.h - steps write the outputs into the caller's tensors -*- C++ -*-===//
//
// On a device whose kernels address host memory (the CPU), a program output
// held in the arena need not be copied out after the run: its storage is
// pointed at the caller's tensor for the run, so the step that makes it
// writes it there. GPT-2's 25.7 MB logits were a 1.7-2.5 ms copy a step.
//
// An output is bound when its storage (the arena buffer it is, or that it is
// a view of) is an arena buffer that no earlier output already took; inputs
// and weights returned as outputs, and a second output of the same storage,
// are still copied. The arena planner keeps outputs live to the end of the
// program, so no other buffer shares that storage while it holds the output.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_OUTPUTBINDING_H
#define SHARDC_RUNTIME_CORE_OUTPUTBINDING_H

#include "runtime/core/Tensor.h"
#include "runtime/schemas/program_generated.h"

#include <vector>

namespace shardc::rt {

class OutputBinding {
public:
  /// One step's operand views, as the executor hands them to its kernel.
  struct StepOperands {
    std::vector<TensorView> *inputs, *outputs;
  };

  /// `buffers` are the program's buffers resolved to memory and `steps` the
  /// views each step was bound to (program order); both must outlive this.
  OutputBinding(const schema::Program &program, std::vector<TensorView> &buffers,
                const std::vector<StepOperands> &steps);

  /// Points every view of each bound output's storage at `outputs[i]`,
  /// which is (re)made with the output's type and shape unless it has them.
  /// `outputs` has one tensor per program output.
  void bind(std::vector<HostTensor> &outputs);

  /// Whether output `index` is written in place (and must not be copied).
  bool bound(size_t index) const;

private:
  struct Bound {
    size_t output;
    uint32_t buffer;            // the output's buffer (its type and shape)
    std::vector<void **> slots; // every view of its storage
  };
  std::vector<TensorView> &buffers_;
  std::vector<Bound> bound_;
};

} // namespace shardc::rt

#endif // SHARDC_RUNTIME_CORE_OUTPUTBINDING_H
