//===- SplitMicrobatches.cpp - stage programs take one micro-batch ---------===//
#include "passes/Pipeline/Passes.h"

#include "passes/Sharding/ShardingConversion.h"
#include "runtime/core/MeshAxes.h"

#include "dialects/Dist/GatherChain.h"
#include "dialects/Graph/GraphDialect.h"
#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <numeric>

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

/// The dim along which every use of `argument` slices it over mb (mb
/// first), if every use does, along one dim.
FailureOr<std::optional<int64_t>> slicedDim(BlockArgument argument) {
  std::optional<int64_t> dim;
  for (Operation *user : argument.getUsers()) {
    auto slice = dyn_cast<dist::AllSliceOp>(user);
    if (!slice)
      return std::optional<int64_t>();
    FailureOr<std::optional<SmallVector<StringRef>>> rest = axesWithoutMicrobatches(slice);
    if (failed(rest))
      return failure();
    if (!*rest || (dim && *dim != int64_t(slice.getDim())))
      return std::optional<int64_t>();
    dim = slice.getDim();
  }
  return dim;
}

/// The caller inputs the runtime can cut into micro-batches, with their
/// dim: those that every stage reads only through slices over mb along one
/// dim. The runtime gives an input the same shape in every stage.
FailureOr<llvm::StringMap<int64_t>> runtimeSlicedInputs(ModuleOp module) {
  llvm::StringMap<int64_t> sliced;
  llvm::StringSet<> whole;
  for (auto function : module.getOps<func::FuncOp>())
    for (BlockArgument argument : function.getArguments()) {
      auto name = function.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                        graph::kNameAttrName);
      FailureOr<std::optional<int64_t>> dim = slicedDim(argument);
      if (failed(dim))
        return failure();
      // A stage that does not read the input takes it as the others do.
      if (!name || argument.use_empty())
        continue;
      auto [known, added] = sliced.try_emplace(name.getValue(), dim->value_or(-1));
      if (!*dim || known->second != **dim)
        whole.insert(name.getValue());
    }
  for (const auto &name : whole)
    sliced.erase(name.getKey());
  return sliced;
}

class MicrobatchSplitter {
public:
  MicrobatchSplitter(dist::MeshOp mesh, int64_t microbatches)
      : mesh(mesh), microbatches(microbatches) {}

  LogicalResult run(func::FuncOp function, const llvm::StringMap<int64_t> &runtimeSliced) {
    for (BlockArgument argument : function.getArguments())
      splitArgument(function, argument, runtimeSliced);
    // What is left sliced over mb is a value the stage computes whole (from
    // whole inputs: masks, positions): it keeps the micro-batch's rows.
    SmallVector<dist::AllSliceOp> slices;
    function.walk([&](dist::AllSliceOp slice) {
      FailureOr<std::optional<SmallVector<StringRef>>> rest = axesWithoutMicrobatches(slice);
      if (succeeded(rest) && *rest && !sliceUniformConstant(slice))
        slices.push_back(slice);
    });
    // A training step runs its micro-batches inside one program, which has
    // no micro-batch index to take rows by (shardc-accumulate-microbatches).
    if (!slices.empty() && function->getParentOfType<ModuleOp>()->hasAttr(
                               graph::kTrainingAttrName))
      return slices.front().emitOpError()
             << "takes one micro-batch's rows of a value the step computes from the whole "
                "batch; a training step in micro-batches cannot yet (give --microbatches 1)";
    for (dist::AllSliceOp slice : slices)
      sliceByIndex(function, slice);
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

  /// The program's micro-batch index, an input the runtime gives (made on
  /// first use, the last argument).
  Value microbatchIndex(func::FuncOp function) {
    if (index)
      return index;
    MLIRContext *context = function.getContext();
    Block &body = function.getBody().front();
    index = body.addArgument(RankedTensorType::get({1}, IntegerType::get(context, 64)),
                             function.getLoc());
    function.setType(FunctionType::get(context, body.getArgumentTypes(),
                                       function.getFunctionType().getResults()));
    Builder builder(context);
    unsigned number = body.getNumArguments() - 1;
    function.setArgAttr(number, graph::kNameAttrName, builder.getStringAttr("microbatch"));
    function.setArgAttr(number, dist::kMicrobatchIndexAttrName, builder.getUnitAttr());
    return index;
  }

  /// A constant whose micro-batches' rows are all alike (a splat, as
  /// gradients start from; a position table repeated for every row of the
  /// batch) has no rows to take by index: the slice is one micro-batch's
  /// rows, made at compile time, then sliced over the other axes. Whether
  /// it was one.
  bool sliceUniformConstant(dist::AllSliceOp slice) {
    auto constant = slice.getInput().getDefiningOp<graph::ConstantOp>();
    auto value = constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
    auto type = cast<RankedTensorType>(slice.getInput().getType());
    unsigned bits = type.getElementTypeBitWidth();
    if (!value || (!value.isSplat() && bits % 8 != 0))
      return false;
    int64_t dim = slice.getDim();
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] /= microbatches;
    auto pieceType = RankedTensorType::get(shape, type.getElementType());
    DenseElementsAttr piece;
    if (value.isSplat()) {
      piece = value.resizeSplat(pieceType);
    } else {
      // Row-major: the dims before `dim` make `outer` blocks of M pieces.
      ArrayRef<char> raw = value.getRawData();
      int64_t outer = 1, pieceBytes = int64_t(bits / 8);
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (d < dim)
          outer *= type.getDimSize(d);
        else
          pieceBytes *= shape[d];
      }
      std::vector<char> first;
      for (int64_t block = 0; block < outer; ++block) {
        ArrayRef<char> own = raw.slice(size_t(block * microbatches * pieceBytes), size_t(pieceBytes));
        for (int64_t m = 1; m < microbatches; ++m)
          if (raw.slice(size_t((block * microbatches + m) * pieceBytes), size_t(pieceBytes)) != own)
            return false;
        first.insert(first.end(), own.begin(), own.end());
      }
      piece = DenseElementsAttr::getFromRawBuffer(pieceType, first);
    }
    OpBuilder builder(slice);
    Value made = builder.create<graph::ConstantOp>(slice.getLoc(), cast<ElementsAttr>(piece));
    SmallVector<StringRef> rest = **axesWithoutMicrobatches(slice);
    if (!rest.empty())
      made = builder.create<dist::AllSliceOp>(slice.getLoc(), made, meshRef(), rest, dim,
                                              mesh.getGroupSize(builder.getStrArrayAttr(rest)));
    slice.getResult().replaceAllUsesWith(made);
    slice.erase();
    return true;
  }

  /// Keeps micro-batch m's rows of a value held whole: a gather of rows
  /// m * n .. m * n + n - 1 along the dim (n = the micro-batch's share),
  /// then the slice over the other axes.
  void sliceByIndex(func::FuncOp function, dist::AllSliceOp slice) {
    Value microbatch = microbatchIndex(function);
    OpBuilder builder(slice);
    Location location = slice.getLoc();
    auto type = cast<RankedTensorType>(slice.getInput().getType());
    int64_t dim = slice.getDim(), share = type.getDimSize(dim) / microbatches;
    auto indexType = RankedTensorType::get({share}, builder.getI64Type());
    SmallVector<int64_t> rows(share);
    std::iota(rows.begin(), rows.end(), 0);
    Value first = builder.create<graph::ConstantOp>(
        location, DenseElementsAttr::get(indexType, ArrayRef<int64_t>(rows)));
    auto scalarType = RankedTensorType::get({1}, builder.getI64Type());
    Value stride = builder.create<graph::ConstantOp>(
        location, DenseElementsAttr::get(scalarType, ArrayRef<int64_t>{share}));
    Value offset = builder.create<graph::MulOp>(location, microbatch, stride);
    Value indices = builder.create<graph::AddOp>(location, first, offset);
    Value piece = builder.create<graph::GatherOp>(location, slice.getInput(), indices,
                                                  builder.getI64IntegerAttr(dim));
    SmallVector<StringRef> rest = **axesWithoutMicrobatches(slice);
    if (!rest.empty())
      piece = builder.create<dist::AllSliceOp>(location, piece, meshRef(), rest, dim,
                                               mesh.getGroupSize(builder.getStrArrayAttr(rest)));
    slice.getResult().replaceAllUsesWith(piece);
    slice.erase();
  }

  /// An input that only slices over mb read takes the micro-batch's shape
  /// (its dim given by `runtimeSliced`, by input name); the runtime slices
  /// it. One read otherwise anywhere in the pipeline stays whole, and its
  /// slices take their rows by the micro-batch index.
  void splitArgument(func::FuncOp function, BlockArgument argument,
                     const llvm::StringMap<int64_t> &runtimeSliced) {
    auto name = function.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                      graph::kNameAttrName);
    auto found = name ? runtimeSliced.find(name.getValue()) : runtimeSliced.end();
    if (found == runtimeSliced.end())
      return;
    int64_t dim = found->second;
    auto type = cast<RankedTensorType>(argument.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] /= microbatches;
    argument.setType(RankedTensorType::get(shape, type.getElementType()));
    function.setArgAttr(argument.getArgNumber(), dist::kMicrobatchDimAttrName,
                        Builder(function.getContext()).getI64IntegerAttr(dim));
    for (Operation *user : llvm::to_vector(argument.getUsers())) {
      auto slice = cast<dist::AllSliceOp>(user);
      SmallVector<StringRef> rest = **axesWithoutMicrobatches(slice);
      Value replacement = argument;
      if (!rest.empty()) {
        OpBuilder builder(slice);
        int64_t group = mesh.getGroupSize(builder.getStrArrayAttr(rest));
        replacement =
            builder.create<dist::AllSliceOp>(slice.getLoc(), argument, meshRef(), rest, dim, group);
      }
      slice.getResult().replaceAllUsesWith(replacement);
      slice.erase();
    }
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
    int64_t dim = overMicrobatches.getDim();
    dist::narrowGatherInChain(result, chain, overMicrobatches, *rest, mesh);
    function.setResultAttr(result.getOperandNumber(), dist::kMicrobatchDimAttrName,
                           Builder(function.getContext()).getI64IntegerAttr(dim));
    return success();
  }

  dist::MeshOp mesh;
  int64_t microbatches;
  Value index;
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
    FailureOr<llvm::StringMap<int64_t>> runtimeSliced = runtimeSlicedInputs(module);
    if (failed(runtimeSliced))
      return signalPassFailure();
    for (auto function : module.getOps<func::FuncOp>())
      if (failed(MicrobatchSplitter(*mesh, microbatches).run(function, *runtimeSliced)))
        return signalPassFailure();
    // The axis is time now, not devices.
    SmallVector<StringRef> names;
    SmallVector<int64_t> sizes;
    for (auto [name, size] :
         llvm::zip((*mesh).getAxisNames().getAsValueRange<StringAttr>(), (*mesh).getAxisSizes()))
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
