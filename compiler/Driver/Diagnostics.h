//===- Diagnostics.h - one-line errors for the shardc driver ----*- C++ -*-===//
#ifndef SHARDC_COMPILER_DRIVER_DIAGNOSTICS_H
#define SHARDC_COMPILER_DRIVER_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"

#include <string>

namespace shardc::driver {

/// "FILE: node 'NAME' (OpType)" for an imported node's location, "FILE" for a
/// file-level one, MLIR's own rendering otherwise.
std::string describeLocation(mlir::Location location);

/// Prints every diagnostic as `TOOL: error: WHERE: MESSAGE` (or warning/remark)
/// on one line of stderr while in scope, names escaped and cut
/// (rt::printableMessage); notes are dropped.
class OneLineDiagnostics {
public:
  OneLineDiagnostics(mlir::MLIRContext &context, llvm::StringRef tool);
  ~OneLineDiagnostics();

private:
  mlir::MLIRContext &context_;
  mlir::DiagnosticEngine::HandlerID handler_;
};

/// Prints `TOOL: error: MESSAGE` for errors that have no location (the
/// same escaping).
void printError(llvm::StringRef tool, const llvm::Twine &message);

/// Where the driver's lines go (printError, OneLineDiagnostics, compile()'s
/// warnings and --verbose summary): stderr, or while a DiagnosticsTo is in
/// scope, its stream. The Python binding (python/) raises the errors it
/// collects and hands the rest to sys.stderr. One at a time in a process:
/// whoever redirects holds a lock around the compile.
llvm::raw_ostream &diagnosticStream();

class DiagnosticsTo {
public:
  explicit DiagnosticsTo(llvm::raw_ostream &stream);
  ~DiagnosticsTo();
  DiagnosticsTo(const DiagnosticsTo &) = delete;
  DiagnosticsTo &operator=(const DiagnosticsTo &) = delete;

private:
  llvm::raw_ostream *previous_;
};

} // namespace shardc::driver

#endif
