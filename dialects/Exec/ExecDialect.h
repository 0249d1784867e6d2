//===- ExecDialect.h - the exec dialect -------------------------*- C++ -*-===//
#ifndef SHARDC_DIALECTS_EXEC_EXECDIALECT_H
#define SHARDC_DIALECTS_EXEC_EXECDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Exec/ExecDialect.h.inc"

#define GET_OP_CLASSES
#include "dialects/Exec/ExecOps.h.inc"

#endif
