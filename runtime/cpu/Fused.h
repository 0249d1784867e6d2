//===- Fused.h - the "fused" elementwise kernel -----------------*- C++ -*-===//
#ifndef SHARDC_RUNTIME_CPU_FUSED_H
#define SHARDC_RUNTIME_CPU_FUSED_H

#include "runtime/core/Tensor.h"
#include "runtime/cpu/Movement.h"
#include "runtime/cpu/Status.h"

#include <string>
#include <vector>

namespace shardc::rt::cpu {

/// Evaluates a fused elementwise expression (passes/Lowering/FuseElementwise):
/// `ops` in order, each reading its arguments from `args` (an index below
/// inputs.size() names an input, above it the result of an earlier op), per
/// element of `out`, whose shape every input broadcasts to. Float32 tensors;
/// the last op's result is written to `out`, which may be the storage of an
/// input of its shape (each element is read before it is written). Inputs
/// are read once per element, those of `out`'s shape where they lie; no
/// intermediate tensor is materialized (blocks of elements stay in cache).
Status fused(ViewList inputs, const std::vector<std::string> &ops,
             const std::vector<int64_t> &args, const TensorView &out);

} // namespace shardc::rt::cpu

#endif
