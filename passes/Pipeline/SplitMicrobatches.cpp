//===- SplitMicrobatches.cpp - stage programs take one micro-batch ---------===//
#include "passes/Pipeline/Passes.h"

#include "passes/Sharding/ShardingConversion.h"
#include "runtime/core/MeshAxes.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace shardc::pipeline {
#define GEN_PASS_DEF_SPLITMICROBATCHESPASS
#include "passes/Pipeline/Passes.h.inc"
} // namespace shardc::pipeline

namespace shardc::pipeline {
namespace {

/// The collective's axes without mb, when mb is among them; mb must be the
/// major one (it is first in the mesh), so that one micro-batch is a
/// contiguous run of the blocks.
FailureOr<std::optional<SmallVector<StringRef>>> axesWithoutMicrobatches(Operation *op) {
  auto axes = op->getAttrOfType<ArrayAttr>("mesh_axes");
  if (!axes)
    return std::optional<SmallVector<StringRef>>();
  SmallVector<StringRef> names(axes.getAsValueRange<StringAttr>());
  auto found = llvm::find(names, rt::kMicroBatchAxis);
  if (found == names.end())
    return std::optional<SmallVector<StringRef>>();
  if (found != names.begin())
    return op->emitOpError() << "splits the batch over mb inside another axis; expected mb first";
  names.erase(found);
  return std::optional<SmallVector<StringRef>>(names);
}

InFlightDiagnostic mixesMicrobatches(Operation *op) {
  return op->emitOpError() << "works across micro-batches (mesh axis " << rt::kMicroBatchAxis
                           << "): the program mixes the rows of the batch here, so it cannot "
                              "run in micro-batches; give --microbatches 1";
}

class MicrobatchSplitter {
public:
  MicrobatchSplitter(dist::MeshOp mesh, int64_t microbatches)
      : mesh(mesh), microbatches(microbatches) {}

  LogicalResult run(func::FuncOp function) {
    for (BlockArgument argument : function.getArguments())
      if (failed(splitArgument(function, argument)))
        return failure();
    Operation *terminator = function.getBody().front().getTerminator();
    for (OpOperand &result : terminator->getOpOperands())
      if (failed(gatherResult(function, result)))
        return failure();
    WalkResult walk = function.walk([&](Operation *op) {
      FailureOr<std::optional<SmallVector<StringRef>>> rest = axesWithoutMicrobatches(op);
      if (failed(rest))
        return WalkResult::interrupt();
      if (*rest) {
        mixesMicrobatches(op);
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    function.setType(FunctionType::get(function.getContext(),
                                       function.getBody().front().getArgumentTypes(),
                                       terminator->getOperandTypes()));
    return success();
  }

private:
  FlatSymbolRefAttr meshRef() { return FlatSymbolRefAttr::get(mesh.getSymNameAttr()); }

  /// An input sliced over mb takes the micro-batch's shape; the runtime
  /// slices it. Read whole by another op, its rows would mix.
  LogicalResult splitArgument(func::FuncOp function, BlockArgument argument) {
    SmallVector<dist::AllSliceOp> slices;
    Operation *whole = nullptr;
    for (Operation *user : argument.getUsers()) {
      auto slice = dyn_cast<dist::AllSliceOp>(user);
      FailureOr<std::optional<SmallVector<StringRef>>> rest =
          slice ? axesWithoutMicrobatches(slice) : FailureOr<std::optional<SmallVector<StringRef>>>(
                                                       std::optional<SmallVector<StringRef>>());
      if (failed(rest))
        return failure();
      if (*rest)
        slices.push_back(slice);
      else
        whole = user;
    }
    if (slices.empty())
      return success();
    if (whole)
      return mixesMicrobatches(whole) << " (it reads the whole input #" << argument.getArgNumber()
                                      << ")";
    int64_t dim = slices.front().getDim();
    auto type = cast<RankedTensorType>(argument.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] /= microbatches;
    argument.setType(RankedTensorType::get(shape, type.getElementType()));
    function.setArgAttr(argument.getArgNumber(), dist::kMicrobatchDimAttrName,
                        Builder(function.getContext()).getI64IntegerAttr(dim));
    for (dist::AllSliceOp slice : slices) {
      if (int64_t(slice.getDim()) != dim)
        return slice.emitOpError() << "slices the input along another dim than its other uses";
      SmallVector<StringRef> rest = **axesWithoutMicrobatches(slice);
      Value replacement = argument;
      if (!rest.empty()) {
        OpBuilder builder(slice);
        int64_t group = mesh.getGroupSize(builder.getStrArrayAttr(rest));
        replacement = builder.create<dist::AllSliceOp>(slice.getLoc(), argument, meshRef(), rest,
                                                       dim, group);
      }
      slice.getResult().replaceAllUsesWith(replacement);
      slice.erase();
    }
    return success();
  }

  /// A result gathered over mb is gathered over the other axes only; the
  /// runtime concatenates the micro-batches. The gathers that make a result
  /// whole come in a chain (one per dim); the ones after the mb gather are
  /// rebuilt on its smaller result.
  LogicalResult gatherResult(func::FuncOp function, OpOperand &result) {
    SmallVector<dist::AllGatherOp> chain; // from the result back
    std::optional<SmallVector<StringRef>> rest;
    for (Value value = result.get(); !rest;) {
      auto gather = value.getDefiningOp<dist::AllGatherOp>();
      if (!gather)
        return success();
      FailureOr<std::optional<SmallVector<StringRef>>> axes = axesWithoutMicrobatches(gather);
      if (failed(axes))
        return failure();
      if (!gather->hasOneUse())
        return *axes ? mixesMicrobatches(gather) << " (its gathered value is used in the program)"
                     : success();
      chain.push_back(gather);
      rest = *axes;
      value = gather.getInput();
    }
    dist::AllGatherOp overMicrobatches = chain.pop_back_val();
    OpBuilder builder(overMicrobatches);
    Value value = overMicrobatches.getInput();
    if (!rest->empty())
      value = builder.create<dist::AllGatherOp>(overMicrobatches.getLoc(), value, meshRef(), *rest,
                                                overMicrobatches.getDim(),
                                                mesh.getGroupSize(builder.getStrArrayAttr(*rest)));
    int64_t dim = overMicrobatches.getDim();
    for (dist::AllGatherOp later : llvm::reverse(chain)) {
      builder.setInsertionPoint(later);
      value = builder.create<dist::AllGatherOp>(later.getLoc(), value, meshRef(),
                                                SmallVector<StringRef>(later.getMeshAxes()
                                                                           .getAsValueRange<StringAttr>()),
                                                later.getDim(),
                                                mesh.getGroupSize(later.getMeshAxes()));
    }
    result.set(value);
    for (dist::AllGatherOp gather : chain)
      gather.erase();
    overMicrobatches.erase();
    function.setResultAttr(result.getOperandNumber(), dist::kMicrobatchDimAttrName,
                           Builder(function.getContext()).getI64IntegerAttr(dim));
    return success();
  }

  dist::MeshOp mesh;
  int64_t microbatches;
};

struct SplitMicrobatchesPass : impl::SplitMicrobatchesPassBase<SplitMicrobatchesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<dist::MeshOp> mesh = sharding::findMesh(module);
    if (failed(mesh))
      return signalPassFailure();
    if (!*mesh || !(*mesh).getAxisIndex(rt::kMicroBatchAxis))
      return;
    int64_t microbatches = (*mesh).getAxisSize(rt::kMicroBatchAxis);
    for (auto function : module.getOps<func::FuncOp>())
      if (failed(MicrobatchSplitter(*mesh, microbatches).run(function)))
        return signalPassFailure();
    // The axis is time now, not devices.
    SmallVector<StringRef> names;
    SmallVector<int64_t> sizes;
    for (auto [name, size] : llvm::zip((*mesh).getAxisNames().getAsValueRange<StringAttr>(),
                                       (*mesh).getAxisSizes()))
      if (name != rt::kMicroBatchAxis) {
        names.push_back(name);
        sizes.push_back(size);
      }
    OpBuilder builder(*mesh);
    builder.create<dist::MeshOp>((*mesh).getLoc(), (*mesh).getSymName(), names, sizes);
    (*mesh).erase();
  }
};

} // namespace
} // namespace shardc::pipeline
