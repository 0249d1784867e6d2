//===- Registration.h - every shardc dialect and pass, registered -*- C++ -*-===//
//
// The one place that lists what the tools know: shardc's driver loads these
// dialects, shardc-opt also makes every pass and pipeline available by flag.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_REGISTRATION_H
#define SHARDC_PASSES_REGISTRATION_H

#include "mlir/IR/DialectRegistry.h"

namespace shardc {

/// Adds the graph, dist and exec dialects and func, which holds the programs.
void registerShardcDialects(mlir::DialectRegistry &registry);

/// Registers every shardc pass and pipeline, and MLIR's generic transforms
/// (canonicalize, cse) that the pipelines use.
void registerShardcPasses();

} // namespace shardc

#endif
