//===- GatherChain.h - rewriting the gathers that return a value -*- C++ -*-===//
//
// A value the program returns is made whole by a chain of all_gathers, one
// per dim (and the minor axes of a dim before its major ones). Passes that
// leave part of that gathering to the runtime (over micro-batches:
// shardc-split-microbatches; over the batch axes:
// shardc-defer-result-gathers) take axes out of one gather of the chain and
// rebuild the gathers after it on the smaller value.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_DIALECTS_DIST_GATHERCHAIN_H
#define SHARDC_DIALECTS_DIST_GATHERCHAIN_H

#include "dialects/Dist/DistOps.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace shardc::dist {

/// `target` gathers over `keptAxes` alone (none: it goes); `later` are the
/// gathers between it and `result` (nearest the result first), rebuilt on
/// its smaller result, which `result` then takes. Every gather replaced is
/// erased.
void narrowGatherInChain(mlir::OpOperand &result, llvm::ArrayRef<AllGatherOp> later,
                         AllGatherOp target, llvm::ArrayRef<llvm::StringRef> keptAxes,
                         MeshOp mesh);

} // namespace shardc::dist

#endif
