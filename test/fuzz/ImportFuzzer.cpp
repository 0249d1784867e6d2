//===- ImportFuzzer.cpp - libFuzzer target over the importer's input bytes ===//
//
// Feeds arbitrary bytes through what `shardc MODEL --emit=graph` does to a
// file: parse as binary protobuf and as ONNX text, import, fold and raise.
// Any input must end in success or a diagnostic: never a crash, an assertion,
// a sanitizer report or a hang.
//
//===----------------------------------------------------------------------===//
#include "compiler/Driver/Pipeline.h"
#include "compiler/Import/Importer.h"

#include "dialects/Graph/GraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdint>
#include <string>

namespace {

void compile(const std::string &bytes, llvm::StringRef path) {
  auto model = shardc::import::parseModel(bytes, path);
  if (!model) {
    llvm::consumeError(model.takeError());
    return;
  }
  mlir::DialectRegistry registry;
  registry.insert<shardc::graph::GraphDialect, mlir::func::FuncDialect>();
  // A fresh, single-threaded context per input: nothing leaks across inputs.
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler silence(&context, [](mlir::Diagnostic &) {
    return mlir::success();
  });
  shardc::import::ImportOptions options;
  auto module = shardc::import::importModel(context, *model, options);
  if (succeeded(module))
    (void)shardc::driver::runPipeline(**module, std::nullopt, shardc::driver::Phase::Graph,
                                      shardc::driver::PipelineSettings());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  compile(bytes, "fuzz.onnx");
  compile(bytes, "fuzz.onnxtext");
  return 0;
}
