//===- InputModule.h - the module shardc starts from -------------*- C++ -*-===//
//
// shardc reads an ONNX model (imported) or an MLIR module as `--emit=graph`
// prints it (parsed, then compiled from the graph phase on): either way the
// driver gets a module, and from the path the phase it is at. An MLIR module
// is held to the rules the importer and the flags hold an ONNX model to
// before anything reads a weight's bytes (docs/design.md, "MLIR input and
// user annotations").
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_DRIVER_INPUTMODULE_H
#define SHARDC_COMPILER_DRIVER_INPUTMODULE_H

#include "compiler/Driver/Limits.h"
#include "compiler/Driver/Pipeline.h"
#include "compiler/Import/ImportOptions.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/MemoryBuffer.h"

namespace shardc::driver {

/// Brackets, regions and aliases an MLIR input may nest: MLIR's parser and
/// printer recurse once per level, and 10,000 levels overflow the stack;
/// `--emit=graph` prints fewer than 10.
constexpr unsigned kMaxMlirNesting = 256;
/// Attributes, types and locations an MLIR input may hold, each alias
/// counted where it is used: 40 aliases each using the last twice stand for
/// 2^40, which printing the module or a diagnostic would never finish; a
/// model's graph holds a few per op.
constexpr uint64_t kMaxMlirExpansion = uint64_t(1) << 24;

/// What an MLIR input is checked against beyond its ops' verifiers.
struct MlirInputRules {
  /// Folders besides the module's own that its weight files may lie in
  /// (--weights-dir).
  std::vector<std::string> weightDirs;
  /// The most ranks its dist.mesh may have (--max-ranks).
  int64_t maxRanks = kDefaultMaxRanks;
};

/// Whether `path` names an MLIR module rather than an ONNX model.
bool isMlirInput(llvm::StringRef path);

/// The phase the module read from `path` is at: graph for an MLIR module,
/// none (just imported) for an ONNX model.
std::optional<Phase> inputPhase(llvm::StringRef path);

/// Parses `buffer` (the MLIR file at `path`) and checks it: nesting, then
/// the size of its attributes, types and locations, its ops' verifiers,
/// then the rules: names without control characters,
/// each input and output named once (an output may share an input's name
/// only by returning that input, as in ONNX), the mesh's axes as --mesh
/// takes them and its ranks within `rules.maxRanks`, and every weight file
/// inside the module's folder or a --weights-dir (a relative one taken from
/// the module's folder, made absolute). Errors are diagnostics at their
/// location, one line each.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
parseMlirInput(mlir::MLIRContext &context, std::unique_ptr<llvm::MemoryBuffer> buffer,
               llvm::StringRef path, const MlirInputRules &rules);

/// Imports the ONNX model or parses the MLIR module at `path`; errors are
/// emitted as diagnostics (or printed by `tool` when they have no location).
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
loadInput(mlir::MLIRContext &context, llvm::StringRef path, const import::ImportOptions &options,
          const MlirInputRules &rules, llvm::StringRef tool);

} // namespace shardc::driver

#endif
