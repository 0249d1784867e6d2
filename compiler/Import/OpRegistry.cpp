//===- OpRegistry.cpp - the ONNX op types the importer knows --------------===//
#include "compiler/Import/OpRegistry.h"

namespace shardc::import {

const OpImporterMap &opImporters() {
  static const OpImporterMap map = [] {
    OpImporterMap all;
    registerElementwiseImporters(all);
    registerMovementImporters(all);
    registerIndexingImporters(all);
    registerSourceImporters(all);
    registerReductionImporters(all);
    registerLinearAlgebraImporters(all);
    registerNormalizationImporters(all);
    registerAttentionImporters(all);
    registerTileImporters(all);
    registerPadImporters(all);
    registerOneHotImporters(all);
    registerEinsumImporters(all);
    registerConvolutionImporters(all);
    registerSequenceImporters(all);
    registerControlFlowImporters(all);
    return all;
  }();
  return map;
}

} // namespace shardc::import
