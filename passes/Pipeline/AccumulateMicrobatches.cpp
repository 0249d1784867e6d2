//===- AccumulateMicrobatches.cpp - a training step's sums over micro-batches -===//
//
// A training step compiled with --microbatches M (and no pipeline) is
// sharded over the mesh axis mb like a data-parallel axis: every sum over
// the batch (the loss's, the token count's, each weight's gradient) is a
// partial sum over mb, which the search completes with an all-reduce over
// mb. Micro-batches are moments, not devices, so that all-reduce is an
// accumulation: each micro-batch's run adds its piece into a buffer of its
// own, and what needs the whole batch's sum (the optimizer) runs once after
// the last one. This pass makes that split (docs/training.md):
//
//   %g = dist.all_reduce %piece on @mesh ["mb", "dp"]
// becomes
//   %acc = graph.weight "microbatch_sum.K" {graph.train = "accumulator"}
//   graph.assign %acc, (graph.add %acc, %piece)          // per micro-batch
//   exec.microbatch_loop_end M
//   %g = dist.all_reduce %acc on @mesh ["dp"]             // once
//
// and orders the block: every op that (transitively) reads an accumulated
// sum, or whose results only such ops read, after the loop's end; the rest
// before it. The program is imperative from here on, as the exec program
// is: a read of an accumulator after the loop sees the loop's sum. The
// runtime zeroes accumulators before each step's first micro-batch.
//
//===----------------------------------------------------------------------===//
#include "passes/Pipeline/Passes.h"

#include "passes/Sharding/ShardingConversion.h"
#include "runtime/core/MeshAxes.h"

#include "dialects/Exec/ExecDialect.h"
#include "dialects/Graph/GraphDialect.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/TypeUtils.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace shardc::pipeline {
#define GEN_PASS_DEF_ACCUMULATEMICROBATCHESPASS
#include "passes/Pipeline/Passes.h.inc"
} // namespace shardc::pipeline

namespace shardc::pipeline {
namespace {

/// Whether `op` works over the micro-batch axis.
bool overMicrobatches(Operation *op) {
  auto axes = op->getAttrOfType<ArrayAttr>("mesh_axes");
  return axes && llvm::is_contained(axes.getAsValueRange<StringAttr>(), rt::kMicroBatchAxis);
}

class MicrobatchAccumulator {
public:
  MicrobatchAccumulator(func::FuncOp function, int64_t microbatches)
      : function(function), microbatches(microbatches) {}

  LogicalResult run() {
    SmallVector<dist::AllReduceOp> sums;
    function.walk([&](dist::AllReduceOp reduce) {
      if (overMicrobatches(reduce))
        sums.push_back(reduce);
    });
    if (sums.empty())
      return function.emitOpError()
             << "sums nothing over the micro-batches: a training step run in micro-batches "
                "must sum its gradients over them";
    for (dist::AllReduceOp sum : sums)
      accumulate(sum);
    return order();
  }

private:
  /// Replaces the all-reduce over mb by an accumulator (see the file header).
  void accumulate(dist::AllReduceOp sum) {
    OpBuilder builder(sum);
    Location location = sum.getLoc();
    // A training pipeline's sum accumulates on the stage that made it; a
    // sum of pieces two stages made (a tied weight's gradient: the
    // embedding's and the LM head's) accumulates each piece on its own
    // stage, added once after the loop instead of sent every micro-batch.
    Attribute stage = sum->getAttr(dist::kPipelineStageAttrName);
    SmallVector<Value> pieces;
    SmallVector<Operation *> joins;
    splitByStage(sum.getInput(), pieces, joins);
    Value accumulated;
    for (Value piece : pieces) {
      Value accumulator = accumulateInto(builder, location, piece, stageOf(piece, stage));
      if (!accumulated) {
        accumulated = accumulator;
        continue;
      }
      auto join = builder.create<graph::AddOp>(location, accumulated, accumulator);
      if (stage)
        join->setAttr(dist::kPipelineStageAttrName, stage);
      once.insert(join);
      accumulated = join;
    }
    SmallVector<StringRef> rest;
    for (StringRef axis : sum.getMeshAxes().getAsValueRange<StringAttr>())
      if (axis != rt::kMicroBatchAxis)
        rest.push_back(axis);
    Value total = accumulated;
    if (!rest.empty()) {
      auto reduce =
          builder.create<dist::AllReduceOp>(location, accumulated, sum.getMeshAttr(), rest);
      if (stage)
        reduce->setAttr(dist::kPipelineStageAttrName, stage);
      once.insert(reduce);
      total = reduce;
    }
    for (Operation *user : sum->getUsers())
      once.insert(user);
    sum.replaceAllUsesWith(total);
    sum.erase();
    // Outermost first: each add is the only user of the ones inside it.
    for (Operation *join : joins)
      join->erase();
  }

  /// A new accumulator that every micro-batch adds `piece` to (on `stage`).
  Value accumulateInto(OpBuilder &builder, Location location, Value piece, Attribute stage) {
    auto type = cast<RankedTensorType>(piece.getType());
    uint64_t bytes =
        uint64_t(type.getNumElements()) * graph::elementByteWidth(type.getElementType());
    // At the top of the block, with the program's other weights: it is
    // read in the loop and after it.
    OpBuilder top(&function.getBody().front(), function.getBody().front().begin());
    auto accumulator = top.create<graph::WeightOp>(
        location, type, ("microbatch_sum." + Twine(accumulators++)).str(), /*file=*/"", 0, bytes,
        nullptr, nullptr, nullptr, nullptr, nullptr);
    accumulator->setAttr(graph::kTrainAttrName, builder.getStringAttr(graph::kTrainAccumulator));
    auto added = builder.create<graph::AddOp>(location, accumulator, piece);
    auto assign = builder.create<graph::AssignOp>(location, accumulator, added);
    if (stage)
      for (Operation *made : {added.getOperation(), assign.getOperation()})
        made->setAttr(dist::kPipelineStageAttrName, stage);
    return accumulator;
  }

  /// The stage that made `value` (its op's tag), else `fallback`.
  static Attribute stageOf(Value value, Attribute fallback) {
    Operation *producer = value.getDefiningOp();
    Attribute tag = producer ? producer->getAttr(dist::kPipelineStageAttrName) : Attribute();
    return tag ? tag : fallback;
  }

  /// The pieces of `value` by stage: through adds (of one use, no
  /// broadcast) whose operands two different stages made; the adds go to
  /// `joins`. A value of one stage is its own piece.
  static void splitByStage(Value value, SmallVectorImpl<Value> &pieces,
                           SmallVectorImpl<Operation *> &joins) {
    auto add = value.getDefiningOp<graph::AddOp>();
    if (add && add->hasOneUse() && add.getLhs().getType() == add.getType() &&
        add.getRhs().getType() == add.getType()) {
      Attribute left = stageOf(add.getLhs(), {}), right = stageOf(add.getRhs(), {});
      if (left && right && left != right) {
        joins.push_back(add);
        splitByStage(add.getLhs(), pieces, joins);
        splitByStage(add.getRhs(), pieces, joins);
        return;
      }
    }
    pieces.push_back(value);
  }

  /// Moves what runs once per step after the loop's end; errors where it
  /// would read one micro-batch's value.
  LogicalResult order() {
    Block &body = function.getBody().front();
    Operation *terminator = body.getTerminator();
    // What differs from micro-batch to micro-batch: what the batch's slices
    // flow into (the accumulators are weights: what follows them is not).
    llvm::DenseSet<Value> varying;
    for (Operation &op : body.without_terminator()) {
      bool sliced = isa<dist::AllSliceOp>(op) && overMicrobatches(&op);
      if (sliced || llvm::any_of(op.getOperands(), [&](Value v) { return varying.contains(v); }))
        varying.insert(op.result_begin(), op.result_end());
    }
    // Once: what reads an accumulated sum, and the step's own writes.
    for (Operation &op : body.without_terminator()) {
      auto assign = dyn_cast<graph::AssignOp>(op);
      if ((assign && graph::trainRole(assign.getTarget()) != graph::kTrainAccumulator) ||
          llvm::any_of(op.getOperands(), [&](Value v) { return onceValue(v); }))
        once.insert(&op);
    }
    // And what only those read, unless it reads a micro-batch's values.
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (!once.contains(op) && !op->use_empty() && !isa<graph::WeightOp>(op) &&
          llvm::none_of(op->getResults(), [&](Value v) { return varying.contains(v); }) &&
          llvm::all_of(op->getUsers(), [&](Operation *user) { return once.contains(user); }))
        once.insert(op);
    for (Operation *op : ops)
      if (once.contains(op))
        for (Value operand : op->getOperands())
          if (varying.contains(operand) && !onceValue(operand))
            return op->emitOpError()
                   << "runs once per step, after the micro-batches, but reads a value of one "
                      "micro-batch (not summed over them); give --microbatches 1";
    for (Value result : terminator->getOperands())
      if (varying.contains(result))
        return terminator->emitOpError()
               << "returns a value of one micro-batch; a training step run in micro-batches "
                  "returns the whole batch's loss";
    OpBuilder(terminator).create<exec::MicrobatchLoopEndOp>(function.getLoc(), microbatches);
    for (Operation *op : ops)
      if (once.contains(op))
        op->moveBefore(terminator);
    return success();
  }

  bool onceValue(Value value) const {
    Operation *definer = value.getDefiningOp();
    return definer && once.contains(definer);
  }

  func::FuncOp function;
  int64_t microbatches;
  int64_t accumulators = 0;
  llvm::DenseSet<Operation *> once;
};

struct AccumulateMicrobatchesPass
    : impl::AccumulateMicrobatchesPassBase<AccumulateMicrobatchesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!module->hasAttr(graph::kTrainingAttrName))
      return;
    FailureOr<dist::MeshOp> mesh = sharding::findMesh(module);
    if (failed(mesh))
      return signalPassFailure();
    if (!*mesh || !(*mesh).getAxisIndex(rt::kMicroBatchAxis))
      return;
    int64_t microbatches = (*mesh).getAxisSize(rt::kMicroBatchAxis);
    for (auto function : module.getOps<func::FuncOp>())
      if (failed(MicrobatchAccumulator(function, microbatches).run()))
        return signalPassFailure();
  }
};

} // namespace
} // namespace shardc::pipeline
