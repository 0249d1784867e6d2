//===- DistOps.cpp - dist ops: mesh syntax and queries, builders ----------===//
#include "dialects/Dist/DistDialect.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace shardc::dist;

#define GET_OP_CLASSES
#include "dialects/Dist/DistOps.cpp.inc"

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

void MeshOp::build(OpBuilder &builder, OperationState &state, StringRef symName,
                   ArrayRef<StringRef> names, ArrayRef<int64_t> sizes) {
  build(builder, state, builder.getStringAttr(symName), builder.getStrArrayAttr(names),
        builder.getDenseI64ArrayAttr(sizes));
}

void MeshOp::build(OpBuilder &builder, OperationState &state, StringRef symName,
                   ArrayRef<std::string> names, ArrayRef<int64_t> sizes) {
  SmallVector<StringRef> refs(names.begin(), names.end());
  build(builder, state, symName, ArrayRef<StringRef>(refs), sizes);
}

// dist.mesh @m = <["dp"=2, "tp"=4]> {attrs}
ParseResult MeshOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &builder = parser.getBuilder();
  StringAttr name;
  SmallVector<Attribute> names;
  SmallVector<int64_t> sizes;
  if (parser.parseSymbolName(name, getSymNameAttrName(result.name), result.attributes) ||
      parser.parseEqual() || parser.parseLess() ||
      parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square,
                                     [&]() -> ParseResult {
                                       std::string axis;
                                       int64_t size = 0;
                                       if (parser.parseString(&axis) || parser.parseEqual() ||
                                           parser.parseInteger(size))
                                         return failure();
                                       names.push_back(builder.getStringAttr(axis));
                                       sizes.push_back(size);
                                       return success();
                                     }) ||
      parser.parseGreater() || parser.parseOptionalAttrDict(result.attributes))
    return failure();
  result.addAttribute(getAxisNamesAttrName(result.name), builder.getArrayAttr(names));
  result.addAttribute(getAxisSizesAttrName(result.name), builder.getDenseI64ArrayAttr(sizes));
  return success();
}

void MeshOp::print(OpAsmPrinter &printer) {
  printer << ' ';
  printer.printSymbolName(getSymName());
  printer << " = <[";
  llvm::interleaveComma(llvm::zip(getAxisNames().getAsValueRange<StringAttr>(), getAxisSizes()),
                        printer, [&](auto axis) {
                          printer.printString(std::get<0>(axis));
                          printer << "=" << std::get<1>(axis);
                        });
  printer << "]>";
  printer.printOptionalAttrDict(
      (*this)->getAttrs(), {getSymNameAttrName(), getAxisNamesAttrName(), getAxisSizesAttrName()});
}

int64_t MeshOp::getNumDevices() {
  int64_t devices = 1;
  for (int64_t size : getAxisSizes())
    devices *= size;
  return devices;
}

std::optional<unsigned> MeshOp::getAxisIndex(StringRef name) {
  for (auto [index, axis] : llvm::enumerate(getAxisNames().getAsValueRange<StringAttr>()))
    if (axis == name)
      return index;
  return std::nullopt;
}

int64_t MeshOp::getAxisSize(StringRef name) {
  std::optional<unsigned> index = getAxisIndex(name);
  assert(index && "not an axis of the mesh");
  return getAxisSizes()[*index];
}

int64_t MeshOp::getGroupSize(ArrayAttr axes) {
  int64_t size = 1;
  for (StringRef axis : axes.getAsValueRange<StringAttr>())
    size *= getAxisSize(axis);
  return size;
}

//===----------------------------------------------------------------------===//
// Builders that infer the local result type
//===----------------------------------------------------------------------===//

/// `input`'s type with dim `dim` multiplied (or divided) by `factor`.
static RankedTensorType scaleDim(Value input, int64_t dim, int64_t factor, bool divide) {
  auto type = cast<RankedTensorType>(input.getType());
  assert(dim >= 0 && dim < type.getRank() && "dim out of range");
  assert(factor > 0 && "group size must be positive");
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = divide ? shape[dim] / factor : shape[dim] * factor;
  return type.clone(shape);
}

void AllReduceOp::build(OpBuilder &builder, OperationState &state, Value input,
                        FlatSymbolRefAttr mesh, ArrayRef<StringRef> axes, Reduction reduction) {
  build(builder, state, input.getType(), input, mesh, builder.getStrArrayAttr(axes),
        ReductionAttr::get(builder.getContext(), reduction));
}

void AllGatherOp::build(OpBuilder &builder, OperationState &state, Value input,
                        FlatSymbolRefAttr mesh, ArrayRef<StringRef> axes, int64_t dim,
                        int64_t groupSize) {
  build(builder, state, scaleDim(input, dim, groupSize, /*divide=*/false), input, mesh,
        builder.getStrArrayAttr(axes), builder.getI64IntegerAttr(dim));
}

void ReduceScatterOp::build(OpBuilder &builder, OperationState &state, Value input,
                            FlatSymbolRefAttr mesh, ArrayRef<StringRef> axes, int64_t dim,
                            int64_t groupSize, Reduction reduction) {
  build(builder, state, scaleDim(input, dim, groupSize, /*divide=*/true), input, mesh,
        builder.getStrArrayAttr(axes), builder.getI64IntegerAttr(dim),
        ReductionAttr::get(builder.getContext(), reduction));
}

void AllToAllOp::build(OpBuilder &builder, OperationState &state, Value input,
                       FlatSymbolRefAttr mesh, ArrayRef<StringRef> axes, int64_t splitDim,
                       int64_t concatDim, int64_t groupSize) {
  auto type = cast<RankedTensorType>(input.getType());
  assert(splitDim >= 0 && splitDim < type.getRank() && concatDim >= 0 &&
         concatDim < type.getRank() && "dim out of range");
  assert(groupSize > 0 && "group size must be positive");
  SmallVector<int64_t> shape(type.getShape());
  shape[splitDim] /= groupSize;
  shape[concatDim] *= groupSize;
  build(builder, state, type.clone(shape), input, mesh, builder.getStrArrayAttr(axes),
        builder.getI64IntegerAttr(splitDim), builder.getI64IntegerAttr(concatDim));
}

void AllSliceOp::build(OpBuilder &builder, OperationState &state, Value input,
                       FlatSymbolRefAttr mesh, ArrayRef<StringRef> axes, int64_t dim,
                       int64_t groupSize) {
  build(builder, state, scaleDim(input, dim, groupSize, /*divide=*/true), input, mesh,
        builder.getStrArrayAttr(axes), builder.getI64IntegerAttr(dim));
}

void BroadcastOp::build(OpBuilder &builder, OperationState &state, Value input,
                        FlatSymbolRefAttr mesh, ArrayRef<StringRef> axes, int64_t root) {
  build(builder, state, input.getType(), input, mesh, builder.getStrArrayAttr(axes),
        builder.getI64IntegerAttr(root));
}
