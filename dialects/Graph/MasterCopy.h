//===- MasterCopy.h - a mixed-precision master and its copy ------*- C++ -*-===//
//
// shardc-compute-copies gives each fp32 master of a mixed-precision step a
// copy in the compute type (graph.train = "copy") and refreshes it after the
// master's write: assign(copy, cast(value)) beside assign(master, value).
// That pair of writes is the link between them (names are not: the parts of
// a fused projection share theirs).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_DIALECTS_GRAPH_MASTERCOPY_H
#define SHARDC_DIALECTS_GRAPH_MASTERCOPY_H

#include "dialects/Graph/GraphDialect.h"
#include "dialects/Graph/GraphOps.h"

namespace shardc::graph {

/// The master whose copy `copy` is, or null when `copy` is no copy or its
/// refresh is not the shape above.
inline WeightOp masterOf(WeightOp copy) {
  if (trainRole(copy) != kTrainCopy)
    return nullptr;
  for (mlir::Operation *user : copy->getUsers()) {
    auto refresh = mlir::dyn_cast<AssignOp>(user);
    auto cast = refresh ? refresh.getValue().getDefiningOp<CastOp>() : CastOp();
    if (!cast)
      continue;
    for (mlir::Operation *reader : cast.getInput().getUsers())
      if (auto write = mlir::dyn_cast<AssignOp>(reader))
        if (auto master = write.getTarget().getDefiningOp<WeightOp>();
            master && trainRole(master) == kTrainParam)
          return master;
  }
  return nullptr;
}

} // namespace shardc::graph

#endif
