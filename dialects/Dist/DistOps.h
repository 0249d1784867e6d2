//===- DistOps.h - operations of the dist dialect ---------------*- C++ -*-===//
//
// Include dialects/Dist/DistDialect.h, which brings this and the attributes.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_DIALECTS_DIST_DISTOPS_H
#define SHARDC_DIALECTS_DIST_DISTOPS_H

#include "dialects/Dist/DistAttrs.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/Dist/DistOps.h.inc"

#endif
