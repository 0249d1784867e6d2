//===- GraphOps.cpp - generated op definitions of the graph dialect -------===//
//
// Only the generated code lives here; shape inference, verifiers and folders
// each have their own file.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace shardc::graph;

#include "dialects/Graph/GraphEnums.cpp.inc"

#define GET_OP_CLASSES
#include "dialects/Graph/GraphOps.cpp.inc"
