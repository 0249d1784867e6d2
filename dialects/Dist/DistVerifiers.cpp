//===- DistVerifiers.cpp - checks of meshes, shardings and collectives ----===//
//
// Every check that needs a mesh looks it up from the op it verifies: meshes
// are symbols of the enclosing module, so a sharding or collective can be
// checked only where it sits.
//
//===----------------------------------------------------------------------===//
#include "dialects/Dist/DistDialect.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace shardc::dist;

/// `"dp", "tp"`, as the diagnostics quote axis names.
static std::string formatAxes(ArrayRef<StringRef> axes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(axes, os, [&](StringRef axis) { os << '"' << axis << '"'; });
  return text;
}

static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return text;
}

/// Checks that `axis` is an axis of `mesh` not in `seen`, and adds it.
static LogicalResult verifyAxis(MeshOp mesh, StringRef axis, llvm::StringSet<> &seen,
                                function_ref<InFlightDiagnostic()> emitError) {
  if (!mesh.getAxisIndex(axis)) {
    SmallVector<StringRef> names(mesh.getAxisNames().getAsValueRange<StringAttr>());
    InFlightDiagnostic diag = emitError();
    diag << "unknown mesh axis \"" << axis << "\"; the mesh has ";
    if (names.empty())
      diag << "no axes";
    else
      diag << formatAxes(names);
    return diag;
  }
  if (!seen.insert(axis).second)
    return emitError() << "mesh axis \"" << axis << "\" is used twice";
  return success();
}

//===----------------------------------------------------------------------===//
// Meshes and shardings
//===----------------------------------------------------------------------===//

LogicalResult MeshOp::verify() {
  ArrayRef<int64_t> sizes = getAxisSizes();
  if (getAxisNames().size() != sizes.size())
    return emitOpError() << "mesh has " << getAxisNames().size() << " axis names but "
                         << sizes.size() << " sizes";
  llvm::StringSet<> seen;
  for (auto [index, name, size] :
       llvm::zip_equal(llvm::seq<size_t>(0, sizes.size()),
                       getAxisNames().getAsValueRange<StringAttr>(), sizes)) {
    if (name.empty())
      return emitOpError() << "mesh axis " << index << " has an empty name";
    if (!seen.insert(name).second)
      return emitOpError() << "mesh axis \"" << name << "\" appears twice";
    if (size <= 0)
      return emitOpError() << "mesh axis \"" << name << "\" has size " << size
                           << "; expected a positive size";
  }
  return success();
}

namespace shardc::dist {

LogicalResult verifySharding(ShardingAttr sharding, MeshOp mesh, Type valueType,
                             function_ref<InFlightDiagnostic()> emitError) {
  if (!mesh)
    return emitError() << "unknown mesh " << sharding.getMesh();
  auto type = dyn_cast<RankedTensorType>(valueType);
  if (!type)
    return emitError() << "a sharding needs a ranked tensor; got " << valueType;
  SmallVector<SmallVector<StringRef>> dims = sharding.getDimAxes();
  if (static_cast<int64_t>(dims.size()) != type.getRank())
    return emitError() << "sharding has " << dims.size() << " dims but the tensor has rank "
                       << type.getRank();
  llvm::StringSet<> seen;
  for (ArrayRef<StringRef> axes : dims)
    for (StringRef axis : axes)
      if (failed(verifyAxis(mesh, axis, seen, emitError)))
        return failure();
  for (StringRef axis : sharding.getPartialAxes())
    if (failed(verifyAxis(mesh, axis, seen, emitError)))
      return failure();
  for (auto [dim, axes] : llvm::enumerate(dims)) {
    int64_t size = type.getDimSize(dim);
    int64_t shards = sharding.getNumShards(mesh, dim);
    if (!ShapedType::isDynamic(size) && size % shards != 0)
      return emitError() << "dim " << dim << " of size " << size << " is not divisible by "
                         << shards << " (axes " << formatAxes(axes) << ")";
  }
  return success();
}

} // namespace shardc::dist

LogicalResult ReshardOp::verify() {
  ShardingAttr sharding = getSharding();
  return verifySharding(sharding, lookupMesh(*this, sharding.getMesh()), getType(),
                        [&] { return emitOpError(); });
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// Checks the mesh and axes of a collective; returns its group size.
static FailureOr<int64_t> verifyGroup(Operation *op, FlatSymbolRefAttr meshName, ArrayAttr axes) {
  MeshOp mesh = lookupMesh(op, meshName);
  if (!mesh) {
    op->emitOpError() << "unknown mesh " << meshName;
    return failure();
  }
  if (axes.empty()) {
    op->emitOpError() << "needs at least one mesh axis to run over";
    return failure();
  }
  llvm::StringSet<> seen;
  for (StringRef axis : axes.getAsValueRange<StringAttr>())
    if (failed(verifyAxis(mesh, axis, seen, [&] { return op->emitOpError(); })))
      return failure();
  return mesh.getGroupSize(axes);
}

/// Checks that `dim` (the attribute `name`) is a dim of `type`.
static LogicalResult verifyDim(Operation *op, StringRef name, int64_t dim, RankedTensorType type) {
  if (dim < 0 || dim >= type.getRank())
    return op->emitOpError() << name << " " << dim << " is out of range; expected a dim in [0, "
                             << type.getRank() << ")";
  return success();
}

/// Checks that `rank` (the attribute `name`) is a rank of a group of `size`.
static LogicalResult verifyGroupRank(Operation *op, StringRef name, int64_t rank, int64_t size) {
  if (rank < 0 || rank >= size)
    return op->emitOpError() << name << " " << rank
                             << " is out of range; expected a group rank in [0, " << size << ")";
  return success();
}

/// Checks that dim `dim` of `type` splits into `parts` blocks.
static LogicalResult verifyDivisible(Operation *op, RankedTensorType type, int64_t dim,
                                     int64_t parts) {
  if (type.getDimSize(dim) % parts != 0)
    return op->emitOpError() << "operand dim " << dim << " of size " << type.getDimSize(dim)
                             << " is not divisible by the group size " << parts;
  return success();
}

/// Checks that `result` is `input` with the shape `expected`; `change` says
/// how the collective derives it.
static LogicalResult verifyResult(Operation *op, RankedTensorType input, RankedTensorType result,
                                  ArrayRef<int64_t> expected, const Twine &change) {
  if (input.getElementType() != result.getElementType())
    return op->emitOpError() << "result element type differs from the operand's; expected "
                             << input.getElementType() << " but got " << result.getElementType();
  if (result.getShape() != expected)
    return op->emitOpError() << "result shape must be the operand's with " << change
                             << "; expected " << formatShape(expected) << " but got "
                             << formatShape(result.getShape());
  return success();
}

/// The shape of `type` with dim `dim` scaled by `factor` (divided if `divide`).
static SmallVector<int64_t> scaled(RankedTensorType type, int64_t dim, int64_t factor,
                                   bool divide) {
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = divide ? shape[dim] / factor : shape[dim] * factor;
  return shape;
}

LogicalResult AllReduceOp::verify() { return verifyGroup(*this, getMeshAttr(), getMeshAxes()); }

LogicalResult AllGatherOp::verify() {
  FailureOr<int64_t> group = verifyGroup(*this, getMeshAttr(), getMeshAxes());
  RankedTensorType input = getInput().getType();
  int64_t dim = getDimAttr().getInt();
  if (failed(group) || failed(verifyDim(*this, "dim", dim, input)))
    return failure();
  return verifyResult(*this, input, getType(), scaled(input, dim, *group, /*divide=*/false),
                      "dim " + Twine(dim) + " gathered from " + Twine(*group) + " devices");
}

/// reduce_scatter and all_slice: dim `dim` divided over the group's devices.
template <typename OpTy> static LogicalResult verifyDividedDim(OpTy op, StringRef how) {
  FailureOr<int64_t> group = verifyGroup(op, op.getMeshAttr(), op.getMeshAxes());
  RankedTensorType input = op.getInput().getType();
  int64_t dim = op.getDimAttr().getInt();
  if (failed(group) || failed(verifyDim(op, "dim", dim, input)) ||
      failed(verifyDivisible(op, input, dim, *group)))
    return failure();
  return verifyResult(op, input, op.getType(), scaled(input, dim, *group, /*divide=*/true),
                      "dim " + Twine(dim) + " " + how + " over " + Twine(*group) + " devices");
}

LogicalResult ReduceScatterOp::verify() { return verifyDividedDim(*this, "scattered"); }

LogicalResult AllToAllOp::verify() {
  FailureOr<int64_t> group = verifyGroup(*this, getMeshAttr(), getMeshAxes());
  RankedTensorType input = getInput().getType();
  int64_t splitDim = getSplitDimAttr().getInt(), concatDim = getConcatDimAttr().getInt();
  if (failed(group) || failed(verifyDim(*this, "split_dim", splitDim, input)) ||
      failed(verifyDim(*this, "concat_dim", concatDim, input)))
    return failure();
  if (splitDim == concatDim)
    return emitOpError() << "split_dim and concat_dim are both " << splitDim
                         << "; expected different dims";
  if (failed(verifyDivisible(*this, input, splitDim, *group)))
    return failure();
  SmallVector<int64_t> expected(input.getShape());
  expected[splitDim] /= *group;
  expected[concatDim] *= *group;
  return verifyResult(*this, input, getType(), expected,
                      "dim " + Twine(splitDim) + " split and dim " + Twine(concatDim) +
                          " concatenated over " + Twine(*group) + " devices");
}

LogicalResult AllSliceOp::verify() { return verifyDividedDim(*this, "sliced"); }

LogicalResult BroadcastOp::verify() {
  FailureOr<int64_t> group = verifyGroup(*this, getMeshAttr(), getMeshAxes());
  if (failed(group))
    return failure();
  return verifyGroupRank(*this, "root", getRootAttr().getInt(), *group);
}

/// The stage of the function around `op` (its `dist.stage`), checked
/// against `peer`: a transfer goes from an earlier stage to a later one.
static LogicalResult verifyTransferStages(Operation *op, int64_t transfer, int64_t from,
                                          int64_t to) {
  if (transfer < 0)
    return op->emitOpError() << "transfer " << transfer << " is negative";
  auto function = op->getParentOfType<FunctionOpInterface>();
  auto stage = function ? function->getAttrOfType<IntegerAttr>(kStageAttrName) : IntegerAttr();
  if (!stage)
    return op->emitOpError() << "must be in a pipeline stage's function (one with "
                             << kStageAttrName << ")";
  int64_t own = stage.getInt();
  if ((isa<SendOp>(op) ? from : to) != own)
    return op->emitOpError() << "is in stage " << own << " but names it as "
                             << (isa<SendOp>(op) ? "the sender" : "the receiver");
  // A training pipeline's programs also send gradients to earlier stages
  // and keep values on theirs (docs/pipeline.md).
  bool training = function->hasAttr(kPartAttrName);
  if (from < 0 || to < 0 || (!training && to <= from))
    return op->emitOpError() << "goes from stage " << from << " to stage " << to
                             << "; transfers go to a later stage";
  return success();
}

LogicalResult SendOp::verify() {
  auto function = (*this)->getParentOfType<FunctionOpInterface>();
  auto stage = function ? function->getAttrOfType<IntegerAttr>(kStageAttrName) : IntegerAttr();
  return verifyTransferStages(*this, getTransfer(), stage ? stage.getInt() : -1, getToStage());
}

LogicalResult RecvOp::verify() {
  auto function = (*this)->getParentOfType<FunctionOpInterface>();
  auto stage = function ? function->getAttrOfType<IntegerAttr>(kStageAttrName) : IntegerAttr();
  return verifyTransferStages(*this, getTransfer(), getFromStage(), stage ? stage.getInt() : -1);
}

LogicalResult PipelineOp::verify() {
  if (getPipelineRanks() < 2)
    return emitOpError() << "pipeline_ranks " << getPipelineRanks() << " must be at least 2";
  if (getVirtualStages() < 1 || getMicrobatches() < 1)
    return emitOpError() << "virtual_stages and microbatches must be positive";
  StringRef schedule = getSchedule();
  if (!llvm::is_contained({"gpipe", "interleaved", "1f1b", "zb-h1", "zb-h2"}, schedule))
    return emitOpError() << "schedule '" << schedule
                         << "': expected gpipe, interleaved, 1f1b, zb-h1 or zb-h2";
  if (schedule != "interleaved" && getVirtualStages() != 1)
    return emitOpError() << "a " << schedule
                         << " schedule has one stage per rank; virtual stages need "
                            "the interleaved schedule";
  if (!llvm::is_contained({"selective", "full", "auto"}, getRecompute()))
    return emitOpError() << "recompute '" << getRecompute()
                         << "': expected selective, full or auto";
  if (std::optional<ArrayAttr> actions = getActions()) {
    if (int64_t(actions->size()) != getPipelineRanksAttr().getInt())
      return emitOpError() << "has " << actions->size() << " action lists for "
                           << getPipelineRanksAttr().getInt() << " pipeline ranks";
    for (Attribute list : *actions) {
      auto array = dyn_cast<ArrayAttr>(list);
      if (!array || !llvm::all_of(array, [](Attribute a) { return isa<ActionAttr>(a); }))
        return emitOpError() << "actions must be arrays of #dist.action";
    }
  }
  return success();
}
