//===- InputModule.cpp - the module shardc starts from --------------------===//
#include "compiler/Driver/InputModule.h"

#include "compiler/Driver/Diagnostics.h"
#include "compiler/Import/Importer.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/Path.h"

using namespace mlir;

namespace shardc::driver {

bool isMlirInput(StringRef path) { return llvm::sys::path::extension(path) == ".mlir"; }

std::optional<Phase> inputPhase(StringRef path) {
  return isMlirInput(path) ? std::optional<Phase>(Phase::Graph) : std::nullopt;
}

FailureOr<OwningOpRef<ModuleOp>> loadInput(MLIRContext &context, StringRef path,
                                           const import::ImportOptions &options, StringRef tool) {
  if (isMlirInput(path)) {
    // Parse errors are diagnostics at the file's line and column: one line each.
    OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(path, &context);
    if (!module)
      return failure();
    return module;
  }
  auto model = import::loadModel(path.str());
  if (!model) {
    printError(tool, llvm::toString(model.takeError()));
    return failure();
  }
  auto imported = import::importModel(context, *model, options);
  if (failed(imported))
    return failure();
  return std::move(*imported);
}

} // namespace shardc::driver
