//===- MicroBatch.h - cut caller tensors into micro-batches -----*- C++ -*-===//
//
// A pipeline runs the batch as M micro-batches one after another: micro-batch
// m of a tensor is the contiguous slice [m*B/M, (m+1)*B/M) of its dimension
// `dim` (docs/pipeline.md), and the output rank joins the pieces back in
// micro-batch order. Both are copies of row-major blocks.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_SESSION_MICROBATCH_H
#define SHARDC_RUNTIME_SESSION_MICROBATCH_H

#include "runtime/core/Tensor.h"

#include <vector>

namespace shardc::rt {

/// Piece `index` of `pieces` of `whole` along `dim` (a micro-batch), whose
/// size the pieces divide (the manifest was checked for it).
HostTensor sliceAlong(const HostTensor &whole, int dim, int index, int pieces);

/// The pieces, of one type and equal shapes, joined along `dim` in order.
HostTensor joinAlong(const std::vector<HostTensor> &pieces, int dim);

} // namespace shardc::rt

#endif
