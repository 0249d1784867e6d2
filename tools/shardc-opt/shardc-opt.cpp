//===- shardc-opt.cpp - run shardc passes on MLIR files -------------------===//
//
// mlir-opt with every shardc dialect and pass registered: the tool each
// pass's lit tests drive.
//
//===----------------------------------------------------------------------===//
#include "dialects/Dist/DistDialect.h"
#include "dialects/Exec/ExecDialect.h"
#include "dialects/Graph/GraphDialect.h"
#include "passes/Graph/Passes.h"
#include "passes/Lowering/Passes.h"
#include "passes/Partition/Passes.h"
#include "passes/Sharding/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<shardc::graph::GraphDialect, shardc::exec::ExecDialect, mlir::func::FuncDialect>();
  registry.insert<shardc::dist::DistDialect>();
  mlir::registerTransformsPasses();
  shardc::graph::registerGraphPasses();
  shardc::lowering::registerLoweringPasses();
  shardc::sharding::registerShardingPasses();
  shardc::partition::registerPartitionPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "shardc optimizer driver\n", registry));
}
