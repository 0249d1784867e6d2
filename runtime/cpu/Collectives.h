//===- Collectives.h - collective steps on the CPU --------------*- C++ -*-===//
//
// The kernels of the compiler's collective steps, on host memory through the
// step's Communicator (KernelCall::communicator, the group of the step's
// `mesh_axes`). Each takes one input and one output tensor with their LOCAL
// shapes (the output never aliases the input):
//
//   all_reduce                       output = sum over the group of input
//   all_gather      dim              output.shape[dim] = n * input.shape[dim];
//                                    group rank i's input is block i along dim
//   reduce_scatter  dim              input.shape[dim] = n * output.shape[dim];
//                                    rank i gets the sum of block i along dim
//   all_to_all      split_dim,       input cut into n blocks along split_dim,
//                   concat_dim       block j sent to rank j; output = the blocks
//                                    received, concatenated along concat_dim in
//                                    group-rank order
//   all_slice       dim              output = this rank's block of input along
//                                    dim (no communication)
//   broadcast       root             output = group rank root's input
//   send            peer             input to group rank peer (no output)
//   recv            peer             output from group rank peer (no input)
//
// Sums: float32/64, float16/bfloat16 (accumulated in float), int32/64; the
// data-movement collectives take every element type.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_COLLECTIVES_H
#define SHARDC_RUNTIME_CPU_COLLECTIVES_H

#include "runtime/core/Kernel.h"

namespace shardc::rt::cpu {

/// Adds the kernels above to `table` under their names.
void addCollectiveKernels(KernelTable &table);

} // namespace shardc::rt::cpu

#endif
