//===- shardc-opt.cpp - run shardc passes on MLIR files -------------------===//
//
// mlir-opt with every shardc dialect and pass registered: the tool each
// pass's lit tests drive.
//
//===----------------------------------------------------------------------===//
#include "passes/Registration.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  shardc::registerShardcDialects(registry);
  shardc::registerShardcPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "shardc optimizer driver\n", registry));
}
