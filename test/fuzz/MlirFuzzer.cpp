//===- MlirFuzzer.cpp - libFuzzer target over an MLIR input's bytes -------===//
//
// Feeds arbitrary bytes through what `shardc MODULE.mlir --emit=graph` does
// with them: the nesting scan, the parser, the ops' verifiers and the rules
// an MLIR input is held to (compiler/Driver/InputModule.h: names, the mesh,
// weight files inside the module's folder), then prints the module. Any
// input must end in success or a diagnostic: never a crash, an assertion,
// a sanitizer report or a hang.
//
//===----------------------------------------------------------------------===//
#include "compiler/Driver/InputModule.h"
#include "passes/Registration.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::DialectRegistry registry;
  shardc::registerShardcDialects(registry);
  // A fresh, single-threaded context per input: nothing leaks across inputs.
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler silence(&context,
                                        [](mlir::Diagnostic &) { return mlir::success(); });
  // In a folder that does not exist: no weight file is inside it, and none
  // is read either way.
  const char *path = "fuzz-mlir-input/module.mlir";
  auto module = shardc::driver::parseMlirInput(
      context,
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size), path),
      path, shardc::driver::MlirInputRules());
  if (succeeded(module)) {
    std::string text;
    llvm::raw_string_ostream os(text);
    (*module)->print(os);
  }
  return 0;
}
