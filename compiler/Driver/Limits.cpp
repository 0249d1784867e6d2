//===- Limits.cpp - how large a compilation shardc accepts ----------------===//
#include "compiler/Driver/Limits.h"

#include "dialects/Graph/GraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace shardc::driver {

llvm::Error checkRankCount(const sharding::MeshShape &mesh, int64_t maxRanks) {
  if (rt::Status status = mesh.verify(); !status)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), status.message());
  if (mesh.devices() > maxRanks)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the mesh " + mesh.describe() + " has " + std::to_string(mesh.devices()) +
            " ranks, over the limit of " + std::to_string(maxRanks) +
            " (each rank is a program and a weight file; raise it with --max-ranks N)");
  return llvm::Error::success();
}

std::string batchSplitWarning(mlir::ModuleOp module, const sharding::MeshShape &mesh) {
  int64_t degree = mesh.dataParallelRanks(), batch = 0;
  if (degree == 1)
    return "";
  std::string widest = "no input has a batch"; // the input with the largest one
  for (auto function : module.getOps<mlir::func::FuncOp>())
    for (auto [index, type] : llvm::enumerate(function.getArgumentTypes()))
      if (auto shaped = llvm::dyn_cast<mlir::ShapedType>(type);
          shaped && shaped.hasRank() && shaped.getRank() > 0 && shaped.getDimSize(0) > batch) {
        batch = shaped.getDimSize(0);
        auto name = function.getArgAttrOfType<mlir::StringAttr>(index, graph::kNameAttrName);
        widest = "'" + (name ? name.str() : "input " + std::to_string(index)) + "' has " +
                 std::to_string(batch);
      }
  if (degree <= batch)
    return "";
  return "--dp " + std::to_string(degree) + " is larger than the batch (dim 0 of the inputs; " +
         widest + "): the ranks beyond it hold copies";
}

} // namespace shardc::driver
