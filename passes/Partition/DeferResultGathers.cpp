//===- DeferResultGathers.cpp - results gathered by the runtime -----------===//
//
// Every rank used to receive every other rank's rows of the outputs, though
// only the output rank hands them to the caller. A result's gather over the
// batch axes is therefore left to the runtime, which sends each piece to the
// output rank alone (docs/design.md, "Results gathered by the runtime").
//
//===----------------------------------------------------------------------===//
#include "passes/Partition/Passes.h"

#include "dialects/Dist/GatherChain.h"
#include "passes/Sharding/ShardingConversion.h"
#include "passes/Sharding/ValueSharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

namespace shardc::partition {
#define GEN_PASS_DEF_DEFERRESULTGATHERSPASS
#include "passes/Partition/Passes.h.inc"
} // namespace shardc::partition

namespace shardc::partition {
namespace {

class ResultGathers {
public:
  explicit ResultGathers(dist::MeshOp mesh) : mesh(mesh), shape(sharding::meshShapeOf(mesh)) {}

  void run(func::FuncOp function) {
    Operation *terminator = function.getBody().front().getTerminator();
    for (OpOperand &result : terminator->getOpOperands())
      defer(function, result);
    function.setType(FunctionType::get(function.getContext(),
                                       function.getBody().front().getArgumentTypes(),
                                       terminator->getOperandTypes()));
  }

private:
  /// The gathers that make `result` whole come in a chain, minor axes of a
  /// dim first. The last gather along a dim holds the dim's major axes: the
  /// first such gather whose axes start with batch axes loses them, and the
  /// ones after it are rebuilt on its smaller result. (A batch axis minor
  /// to another axis of its dim would interleave the pieces: left alone.)
  void defer(func::FuncOp function, OpOperand &result) {
    SmallVector<dist::AllGatherOp> chain; // from the result back
    sharding::AxisList leading;
    for (Value value = result.get(); leading.empty();) {
      auto gather = value.getDefiningOp<dist::AllGatherOp>();
      if (!gather || !gather->hasOneUse())
        return;
      bool outermost = llvm::none_of(
          chain, [&](dist::AllGatherOp later) { return later.getDim() == gather.getDim(); });
      chain.push_back(gather);
      if (outermost)
        leading = sharding::leadingBatchAxes(axesOf(gather), shape);
      value = gather.getInput();
    }
    dist::AllGatherOp batch = chain.pop_back_val();
    SmallVector<StringRef> rest(batch.getMeshAxes().getAsValueRange<StringAttr>());
    rest.erase(rest.begin(), rest.begin() + leading.size());
    int64_t dim = batch.getDim();
    dist::narrowGatherInChain(result, chain, batch, rest, mesh);
    SmallVector<StringRef> names;
    for (unsigned axis : leading)
      names.push_back(shape.names[axis]);
    Builder attrs(function.getContext());
    unsigned index = result.getOperandNumber();
    function.setResultAttr(index, dist::kGatherAxesAttrName, attrs.getStrArrayAttr(names));
    function.setResultAttr(index, dist::kGatherDimAttrName, attrs.getI64IntegerAttr(dim));
  }

  sharding::AxisList axesOf(dist::AllGatherOp gather) const {
    sharding::AxisList axes;
    for (StringRef name : gather.getMeshAxes().getAsValueRange<StringAttr>())
      axes.push_back(*shape.axis(name));
    return axes;
  }

  dist::MeshOp mesh;
  sharding::MeshShape shape;
};

struct DeferResultGathersPass : impl::DeferResultGathersPassBase<DeferResultGathersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<dist::MeshOp> mesh = sharding::findMesh(module);
    if (failed(mesh))
      return signalPassFailure();
    if (!*mesh)
      return;
    for (auto function : module.getOps<func::FuncOp>())
      ResultGathers(*mesh).run(function);
  }
};

} // namespace
} // namespace shardc::partition
