//===- OpRegistry.h - the ONNX op types the importer knows ------*- C++ -*-===//
//
// Adding an op: write `static LogicalResult importFoo(NodeContext &node)` in
// the Ops/ file of its family and add it to that file's register function
// with the first opset whose semantics it implements.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_IMPORT_OPREGISTRY_H
#define SHARDC_COMPILER_IMPORT_OPREGISTRY_H

#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringMap.h"

namespace shardc::import {

class NodeContext;

using ImportFunction = mlir::LogicalResult (*)(NodeContext &);

struct OpImporter {
  ImportFunction import;
  /// The oldest opset whose version of the op this importer implements: the
  /// op's first opset (23 for Attention), or the last change of semantics we
  /// do not replay (13 for Softmax, which coerced inputs to 2-D before).
  int64_t minOpset;
  /// Whether the op reads ONNX sequences (the Sequence* ops, Loop, Identity);
  /// any other op given a sequence is an error at its node.
  bool takesSequences = false;
};

using OpImporterMap = llvm::StringMap<OpImporter>;

/// Every supported ONNX op type of the default domain.
const OpImporterMap &opImporters();

/// Newest default-domain opset the importer knows. Opsets 25-28 changed the
/// ops imported here only by admitting new element types (int2, float8, ...)
/// and Range's fp16 accumulation, so their semantics for supported types are
/// those of opset 24. Older opsets are checked per op (OpImporter::minOpset).
constexpr int64_t kMaxOpset = 28;

// One per file under Ops/.
void registerElementwiseImporters(OpImporterMap &map);
void registerMovementImporters(OpImporterMap &map);
void registerIndexingImporters(OpImporterMap &map);
void registerSourceImporters(OpImporterMap &map);
void registerReductionImporters(OpImporterMap &map);
void registerLinearAlgebraImporters(OpImporterMap &map);
void registerNormalizationImporters(OpImporterMap &map);
void registerAttentionImporters(OpImporterMap &map);
void registerTileImporters(OpImporterMap &map);
void registerPadImporters(OpImporterMap &map);
void registerOneHotImporters(OpImporterMap &map);
void registerEinsumImporters(OpImporterMap &map);
void registerConvolutionImporters(OpImporterMap &map);
void registerSequenceImporters(OpImporterMap &map);
void registerControlFlowImporters(OpImporterMap &map);

} // namespace shardc::import

#endif
