//===- GraphOps.h - operations of the graph dialect -------------*- C++ -*-===//
#ifndef SHARDC_DIALECTS_GRAPH_GRAPHOPS_H
#define SHARDC_DIALECTS_GRAPH_GRAPHOPS_H

#include "dialects/Graph/GraphDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Graph/GraphEnums.h.inc"

#define GET_OP_CLASSES
#include "dialects/Graph/GraphOps.h.inc"

#endif
