//===- WeightReader.h - load the bytes a graph.weight refers to -*- C++ -*-===//
#ifndef SHARDC_COMPILER_IMPORT_WEIGHTREADER_H
#define SHARDC_COMPILER_IMPORT_WEIGHTREADER_H

#include "dialects/Graph/GraphOps.h"

namespace shardc::import {

/// Reads the weight's bytes from its file; errors at the weight's location
/// name the file and what is wrong with it.
mlir::FailureOr<mlir::DenseElementsAttr> readWeight(graph::WeightOp weight);

} // namespace shardc::import

#endif
