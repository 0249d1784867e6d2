//===- Registration.cpp - every shardc dialect and pass, registered -------===//
#include "passes/Registration.h"

#include "dialects/Dist/DistDialect.h"
#include "dialects/Exec/ExecDialect.h"
#include "dialects/Graph/GraphDialect.h"
#include "passes/Autodiff/Passes.h"
#include "passes/Graph/Passes.h"
#include "passes/Lowering/Passes.h"
#include "passes/Partition/Passes.h"
#include "passes/Pipeline/Passes.h"
#include "passes/Sharding/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

namespace shardc {

void registerShardcDialects(mlir::DialectRegistry &registry) {
  registry.insert<graph::GraphDialect, dist::DistDialect, exec::ExecDialect,
                  mlir::func::FuncDialect>();
}

void registerShardcPasses() {
  mlir::registerTransformsPasses();
  graph::registerGraphPasses();
  autodiff::registerAutodiffPasses();
  sharding::registerShardingPasses();
  pipeline::registerPipelinePasses();
  partition::registerPartitionPasses();
  lowering::registerLoweringPasses();
}

} // namespace shardc
