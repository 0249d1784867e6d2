//===- LowerToExec.cpp - graph program to exec kernel steps ---------------===//
#include "passes/Lowering/Passes.h"

#include "dialects/Dist/DistDialect.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/NodeLocation.h"
#include "passes/Lowering/MoeSteps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

#include <map>

using namespace mlir;
using namespace shardc;

namespace shardc::lowering {
#define GEN_PASS_DEF_LOWERTOEXECPASS
#include "passes/Lowering/Passes.h.inc"
} // namespace shardc::lowering

namespace {

MemRefType bufferType(Type tensor) {
  auto type = cast<RankedTensorType>(tensor);
  return MemRefType::get(type.getShape(), type.getElementType());
}

/// The kernel that computes a graph op: its mnemonic ("graph.add" -> "add").
StringRef kernelName(Operation *op) { return op->getName().stripDialect(); }

class FunctionLowering {
public:
  /// Names of trained storage, shared by the module's functions (see
  /// storageName).
  struct StorageNames {
    llvm::StringMap<std::string> byIdentity;
    llvm::StringMap<int64_t> uses;
  };

  /// Names of the tensors of one weight file, shared by the functions that
  /// read it: a training pipeline stage's programs (its forward, backward
  /// and update parts) read one file per rank, so a value that several of
  /// them hold is one tensor there, written once. A name means one value
  /// in the file: a constant is named by its value, a weight by what its
  /// bytes are made of (weightIdentity).
  struct FileNames {
    /// A constant's value or a weight's identity -> its name.
    llvm::DenseMap<Attribute, std::string> byIdentity;
    llvm::StringMap<int64_t> weightUses;
    int64_t constants = 0;
  };

  FunctionLowering(func::FuncOp function, StorageNames &storage, FileNames &file)
      : function(function), storage(storage), file(file) {}

  LogicalResult run() {
    OpBuilder builder(function);
    auto lowered = builder.create<func::FuncOp>(function.getLoc(), function.getName(),
                                                builder.getFunctionType({}, {}));
    lowered->setAttrs(function->getAttrs());
    lowered.setFunctionType(builder.getFunctionType({}, {}));
    lowered.removeArgAttrsAttr();
    lowered.removeResAttrsAttr();
    builder.setInsertionPointToStart(lowered.addEntryBlock());
    for (BlockArgument argument : function.getArguments()) {
      unsigned index = argument.getArgNumber();
      auto name = function.getArgAttrOfType<StringAttr>(index, graph::kNameAttrName);
      auto input = builder.create<exec::InputOp>(
          argument.getLoc(), bufferType(argument.getType()),
          name ? name.getValue() : "input" + std::to_string(index), index, IntegerAttr());
      for (StringRef kept : {dist::kMicrobatchDimAttrName, dist::kMicrobatchIndexAttrName})
        if (Attribute attr = function.getArgAttr(index, kept))
          input->setAttr(kept, attr);
      mapping.map(argument, input);
    }
    inputs = function.getNumArguments();
    for (Operation &op : function.getBody().front())
      if (failed(lower(builder, op)))
        return failure();
    function.erase();
    return success();
  }

private:
  LogicalResult lower(OpBuilder &builder, Operation &op) {
    Location location = op.getLoc();
    if (auto constant = dyn_cast<graph::ConstantOp>(op)) {
      mapping.map(constant.getResult(),
                  builder.create<exec::ConstantOp>(location, bufferType(constant.getType()),
                                                   constantName(constant.getValue()),
                                                   constant.getValue()));
      return success();
    }
    if (auto weight = dyn_cast<graph::WeightOp>(op)) {
      auto lowered = builder.create<exec::WeightOp>(
          location, bufferType(weight.getType()),
          graph::trainRole(weight).empty() ? fileWeightName(weight) : storageName(weight),
          weight.getFile(), weight.getOffset(), weight.getSize(), weight.getStoredShapeAttr(),
          weight.getBoxOffsetsAttr(), weight.getStoredTypeAttr(), weight.getRepeatBlocksAttr(),
          weight.getPartOffsetsAttr());
      // A partitioned weight's global sharding tells the artifact writer
      // which block each rank holds.
      for (NamedAttribute attr : weight->getDiscardableAttrs())
        lowered->setAttr(attr.getName(), attr.getValue());
      mapping.map(weight.getResult(), lowered);
      return success();
    }
    if (auto reshape = dyn_cast<graph::ReshapeOp>(op)) {
      mapping.map(reshape.getResult(),
                  builder.create<exec::ViewOp>(location, bufferType(reshape.getType()),
                                               mapping.lookup(reshape.getInput())));
      return success();
    }
    // A pipeline stage's transfers are the program's inputs and outputs
    // after the caller's.
    if (auto recv = dyn_cast<dist::RecvOp>(op)) {
      mapping.map(recv.getResult(),
                  builder.create<exec::InputOp>(location, bufferType(recv.getType()),
                                                transferName(recv.getTransferAttr().getInt()), inputs++,
                                                recv.getTransferAttr()));
      return success();
    }
    if (auto send = dyn_cast<dist::SendOp>(op)) {
      sends.push_back(send);
      return success();
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
        auto name = function.getResultAttrOfType<StringAttr>(index, graph::kNameAttrName);
        auto output = builder.create<exec::OutputOp>(
            location, name ? name.getValue() : "output" + std::to_string(index), index,
            mapping.lookup(value), IntegerAttr());
        for (StringRef kept :
             {dist::kMicrobatchDimAttrName, dist::kGatherAxesAttrName, dist::kGatherDimAttrName})
          if (Attribute attr = function.getResultAttr(index, kept))
            output->setAttr(kept, attr);
      }
      for (auto [index, send] : llvm::enumerate(sends))
        builder.create<exec::OutputOp>(send.getLoc(), transferName(send.getTransferAttr().getInt()),
                                       ret.getNumOperands() + index,
                                       mapping.lookup(send.getInput()), send.getTransferAttr());
      builder.create<func::ReturnOp>(location);
      return success();
    }
    // A training step's write: the new value copied into the storage that
    // lives across steps (docs/training.md).
    if (auto assign = dyn_cast<graph::AssignOp>(op)) {
      builder.create<exec::KernelOp>(location, "copy",
                                     ValueRange{mapping.lookup(assign.getValue())},
                                     ValueRange{mapping.lookup(assign.getTarget())},
                                     builder.getDictionaryAttr({}),
                                     graph::onnxNodeNames(location));
      return success();
    }
    // Placed by shardc-accumulate-microbatches: kept where it is.
    if (isa<exec::MicrobatchLoopEndOp>(op)) {
      builder.clone(op);
      return success();
    }
    bool collective = isa<dist::DistDialect>(op.getDialect()) && !isa<dist::ReshardOp>(op);
    if (!isa<graph::GraphDialect>(op.getDialect()) && !collective)
      return op.emitOpError() << "cannot be lowered to exec";
    SmallVector<Value> inputs, outputs;
    for (Value operand : op.getOperands())
      inputs.push_back(mapping.lookup(operand));
    for (Value result : op.getResults()) {
      Value buffer =
          builder.create<exec::AllocOp>(location, bufferType(result.getType()), IntegerAttr());
      mapping.map(result, buffer);
      outputs.push_back(buffer);
    }
    if (auto moe = dyn_cast<graph::MoeOp>(op)) {
      shardc::lowering::emitMoeSteps(builder, moe, inputs, outputs.front());
      return success();
    }
    // The kernels know their group by mesh_axes; the mesh is the program's.
    NamedAttrList params(op.getAttrDictionary());
    params.erase("mesh");
    builder.create<exec::KernelOp>(location, kernelName(&op), inputs, outputs,
                                   params.getDictionary(op.getContext()),
                                   graph::onnxNodeNames(location));
    return success();
  }

  static std::string transferName(int64_t transfer) {
    return "transfer." + std::to_string(transfer);
  }

  /// `name`, or "NAME#k" for its k-th other tensor (`uses` counts them):
  /// the parts of one stored weight (fused projections, several shardings).
  static std::string numbered(StringRef name, int64_t &uses) {
    return uses++ ? (name + "#" + Twine(uses - 1)).str() : name.str();
  }

  /// What a weight's bytes in the artifact are made of: its own attributes
  /// (the stored tensor, box, type conversion, repeats, parts), its type,
  /// and how the writer cuts and lays out each rank's block. Weights of
  /// equal identity hold equal bytes on every rank.
  static Attribute weightIdentity(graph::WeightOp weight) {
    NamedAttrList identity;
    for (NamedAttribute attr : weight->getAttrs()) {
      StringRef name = attr.getName().getValue();
      if (llvm::is_contained(graph::WeightOp::getAttributeNames(), name) ||
          name == dist::kWeightShardAttrName || name == graph::kTransposedAttrName)
        identity.push_back(attr);
    }
    identity.append("type", TypeAttr::get(weight.getType()));
    return identity.getDictionary(weight.getContext());
  }

  /// An untrained weight's tensor in the function's weight file (FileNames).
  std::string fileWeightName(graph::WeightOp weight) {
    auto [it, added] = file.byIdentity.try_emplace(weightIdentity(weight));
    if (added)
      it->second = numbered(weight.getName(), file.weightUses[weight.getName()]);
    return it->second;
  }

  /// A constant's tensor in the function's weight file (FileNames).
  std::string constantName(Attribute value) {
    auto [it, added] = file.byIdentity.try_emplace(value);
    if (added)
      it->second = "constant." + std::to_string(file.constants++);
    return it->second;
  }

  /// Trained storage is one buffer a training pipeline's programs share by
  /// name (the runtime's state pool): each distinct storage (its tensor, its
  /// box in it, its sharding) gets one name in the whole module, in the
  /// order they first appear, so that a program that reads the parts of a
  /// fused projection in another order still names each part alike.
  std::string storageName(graph::WeightOp weight) {
    std::string identity;
    llvm::raw_string_ostream os(identity);
    os << weight.getName() << "|" << weight.getType();
    for (StringRef attr : {"box_offsets", "stored_shape"})
      if (Attribute value = weight->getAttr(attr))
        os << "|" << value;
    if (Attribute shard = weight->getAttr(dist::kWeightShardAttrName))
      os << "|" << shard;
    auto [it, added] = storage.byIdentity.try_emplace(identity);
    if (added)
      it->second = numbered(weight.getName(), storage.uses[weight.getName()]);
    return it->second;
  }

  func::FuncOp function;
  StorageNames &storage;
  FileNames &file;
  IRMapping mapping;
  /// The caller's inputs, then the received transfers.
  int64_t inputs = 0;
  SmallVector<dist::SendOp> sends;
};

struct LowerToExecPass : shardc::lowering::impl::LowerToExecPassBase<LowerToExecPass> {
  void runOnOperation() override {
    FunctionLowering::StorageNames storage;
    // A pipeline stage's programs share the stage's weight file; any other
    // function has its own.
    std::map<int64_t, FunctionLowering::FileNames> stageFiles;
    for (func::FuncOp function : llvm::to_vector(getOperation().getOps<func::FuncOp>())) {
      FunctionLowering::FileNames ownFile;
      auto stage = function->getAttrOfType<IntegerAttr>(dist::kStageAttrName);
      FunctionLowering::FileNames &file = stage ? stageFiles[stage.getInt()] : ownFile;
      if (failed(FunctionLowering(function, storage, file).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
