//===- ModelLayers.h - the repeated layers of a model, by module -*- C++ -*-===//
//
// A report counts collectives per layer, and a layer is what the user wrote:
// one repeated block of the residual stream (model.layers.3, transformer.h.3,
// encoder.layer.3), named by the torch module the exporter recorded for each
// node. The blocks are the numbered children of one module; a model with
// several such lists (an encoder's layers, a T5 block's sub-layers) reports
// the list with the most entries.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_REPORT_MODELLAYERS_H
#define SHARDC_COMPILER_REPORT_MODELLAYERS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardc::report {

class ModelLayers {
public:
  /// The layers among the module paths of a program's ops (duplicates and
  /// paths outside any numbered list are fine).
  static ModelLayers fromModules(llvm::ArrayRef<std::string> modules);

  /// The layer holding `module`, if it is inside one.
  std::optional<unsigned> layerOf(llvm::StringRef module) const;

  size_t size() const { return indices.size(); }
  bool empty() const { return indices.empty(); }
  /// The layer's module path, e.g. "model.layers.3".
  std::string name(unsigned layer) const;

private:
  std::string stem;             ///< the list's module, e.g. "model.layers"
  std::vector<int64_t> indices; ///< the numbers of its children, ascending
};

} // namespace shardc::report

#endif
