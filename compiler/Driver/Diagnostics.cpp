//===- Diagnostics.cpp - one-line errors for the shardc driver ------------===//
#include "compiler/Driver/Diagnostics.h"

#include "dialects/Graph/NodeLocation.h"
#include "runtime/core/PrintableText.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>

using namespace mlir;

namespace shardc::driver {

namespace {
/// The stream a DiagnosticsTo set, null for stderr. Atomic: MLIR may report
/// from its worker threads while the main thread compiles.
std::atomic<llvm::raw_ostream *> redirected{nullptr};
} // namespace

llvm::raw_ostream &diagnosticStream() {
  llvm::raw_ostream *stream = redirected.load();
  return stream ? *stream : llvm::errs();
}

DiagnosticsTo::DiagnosticsTo(llvm::raw_ostream &stream) : previous_(redirected.exchange(&stream)) {}

DiagnosticsTo::~DiagnosticsTo() { redirected.store(previous_); }

std::string describeLocation(Location location) {
  if (std::optional<graph::OnnxNode> node = graph::onnxNodeOf(location)) {
    std::string where = node->file.empty() ? "" : node->file.str() + ": ";
    if (node->opType.empty())
      return where + "tensor '" + node->name.str() + "'";
    std::string text = where + "node '" + node->name.str() + "' (" + node->opType.str() + ")";
    // The TorchScript exporter's names are module paths already; the
    // dynamo exporter's (node_linear_3) need the module beside them.
    if (!node->module.empty() && !node->name.starts_with("/"))
      text += " in module '" + node->module.str() + "'";
    return text;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto fileLoc = dyn_cast<FileLineColLoc>(location)) {
    os << fileLoc.getFilename().getValue();
    if (fileLoc.getLine() != 0)
      os << ":" << fileLoc.getLine() << ":" << fileLoc.getColumn();
    return os.str();
  }
  location.print(os);
  return os.str();
}

OneLineDiagnostics::OneLineDiagnostics(MLIRContext &context, StringRef tool) : context_(context) {
  std::string prefix = tool.str();
  handler_ = context.getDiagEngine().registerHandler([prefix](Diagnostic &diagnostic) {
    const char *severity = "error";
    switch (diagnostic.getSeverity()) {
    case DiagnosticSeverity::Error:
      break;
    case DiagnosticSeverity::Warning:
      severity = "warning";
      break;
    case DiagnosticSeverity::Remark:
      severity = "remark";
      break;
    case DiagnosticSeverity::Note:
      return success(); // one line per diagnostic: notes dropped
    }
    // MLIR's own multi-line messages join into one line.
    std::string message = diagnostic.str();
    std::replace(message.begin(), message.end(), '\n', ' ');
    diagnosticStream() << rt::printableMessage(prefix + ": " + severity + ": " +
                                         describeLocation(diagnostic.getLocation()) + ": " +
                                         message)
                 << "\n";
    return success();
  });
}

OneLineDiagnostics::~OneLineDiagnostics() { context_.getDiagEngine().eraseHandler(handler_); }

void printError(StringRef tool, const llvm::Twine &message) {
  diagnosticStream() << rt::printableMessage((tool + ": error: " + message).str()) << "\n";
}

} // namespace shardc::driver
