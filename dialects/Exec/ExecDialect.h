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

namespace shardc::exec {

/// On a program's function: the arena's peak size in bytes (the memory plan).
constexpr llvm::StringLiteral kArenaBytesAttrName = "exec.arena_bytes";
/// On the module (--target=cuda): the CUDA C++ of every fused kernel.
constexpr llvm::StringLiteral kCudaSourceAttrName = "exec.cuda_source";


} // namespace shardc::exec

#endif
