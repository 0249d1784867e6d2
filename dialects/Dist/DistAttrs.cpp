//===- DistAttrs.cpp - #dist.sharding: syntax, layout and local shapes ----===//
#include "dialects/Dist/DistDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace shardc::dist;

#define GET_ATTRDEF_CLASSES
#include "dialects/Dist/DistAttrs.cpp.inc"

void DistDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Dist/DistAttrs.cpp.inc"
      >();
}

static ArrayAttr axesAttr(MLIRContext *context, ArrayRef<StringRef> axes) {
  SmallVector<Attribute> names;
  for (StringRef axis : axes)
    names.push_back(StringAttr::get(context, axis));
  return ArrayAttr::get(context, names);
}

static ArrayAttr dimsAttr(MLIRContext *context, ArrayRef<SmallVector<StringRef>> dims) {
  SmallVector<Attribute> elements;
  for (ArrayRef<StringRef> axes : dims)
    elements.push_back(axesAttr(context, axes));
  return ArrayAttr::get(context, elements);
}

ShardingAttr ShardingAttr::get(MLIRContext *context, FlatSymbolRefAttr mesh,
                               ArrayRef<SmallVector<StringRef>> dims, ArrayRef<StringRef> partial) {
  return Base::get(context, mesh, dimsAttr(context, dims), axesAttr(context, partial));
}

ShardingAttr ShardingAttr::getChecked(function_ref<InFlightDiagnostic()> emitError,
                                      MLIRContext *context, FlatSymbolRefAttr mesh,
                                      ArrayRef<SmallVector<StringRef>> dims,
                                      ArrayRef<StringRef> partial) {
  return Base::getChecked(emitError, context, mesh, dimsAttr(context, dims),
                          axesAttr(context, partial));
}

ShardingAttr ShardingAttr::getReplicated(MLIRContext *context, FlatSymbolRefAttr mesh,
                                         int64_t rank) {
  return get(context, mesh, SmallVector<SmallVector<StringRef>>(rank));
}

static bool isAxisList(Attribute attr) {
  auto axes = llvm::dyn_cast_or_null<ArrayAttr>(attr);
  return axes && llvm::all_of(axes, [](Attribute axis) { return llvm::isa<StringAttr>(axis); });
}

LogicalResult ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   FlatSymbolRefAttr mesh, ArrayAttr dims, ArrayAttr partial) {
  if (!mesh)
    return emitError() << "sharding needs a mesh";
  if (!dims)
    return emitError() << "sharding needs dims";
  for (auto [index, dim] : llvm::enumerate(dims))
    if (!isAxisList(dim))
      return emitError() << "sharding dim " << index << " must be an array of axis names; got "
                         << dim;
  if (!isAxisList(partial))
    return emitError() << "sharding partial axes must be an array of axis names; got " << partial;
  return success();
}

//===----------------------------------------------------------------------===//
// Syntax: <@m, [{"dp"}, {}, {"tp"}], partial={"tp"}>
//===----------------------------------------------------------------------===//

/// Parses `{"a", "b"}`.
static ParseResult parseAxes(AsmParser &parser, SmallVectorImpl<Attribute> &axes) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Braces, [&]() -> ParseResult {
    std::string name;
    if (parser.parseString(&name))
      return failure();
    axes.push_back(parser.getBuilder().getStringAttr(name));
    return success();
  });
}

static void printAxes(AsmPrinter &printer, ArrayAttr axes) {
  printer << "{";
  llvm::interleaveComma(axes.getAsValueRange<StringAttr>(), printer,
                        [&](StringRef axis) { printer.printString(axis); });
  printer << "}";
}

Attribute ShardingAttr::parse(AsmParser &parser, Type) {
  MLIRContext *context = parser.getContext();
  FlatSymbolRefAttr mesh;
  SmallVector<Attribute> dims, partial;
  if (parser.parseLess() || parser.parseAttribute(mesh) || parser.parseComma() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() -> ParseResult {
        SmallVector<Attribute> axes;
        if (parseAxes(parser, axes))
          return failure();
        dims.push_back(ArrayAttr::get(context, axes));
        return success();
      }))
    return {};
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("partial") || parser.parseEqual() || parseAxes(parser, partial)))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ShardingAttr>(context, mesh, ArrayAttr::get(context, dims),
                                         ArrayAttr::get(context, partial));
}

void ShardingAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printer.printAttributeWithoutType(getMesh());
  printer << ", [";
  llvm::interleaveComma(getDims(), printer,
                        [&](Attribute axes) { printAxes(printer, llvm::cast<ArrayAttr>(axes)); });
  printer << "]";
  if (!getPartial().empty()) {
    printer << ", partial=";
    printAxes(printer, getPartial());
  }
  printer << ">";
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

SmallVector<SmallVector<StringRef>> ShardingAttr::getDimAxes() const {
  SmallVector<SmallVector<StringRef>> dims;
  for (Attribute axes : getDims())
    dims.emplace_back(llvm::cast<ArrayAttr>(axes).getAsValueRange<StringAttr>());
  return dims;
}

SmallVector<StringRef> ShardingAttr::getPartialAxes() const {
  return llvm::to_vector(getPartial().getAsValueRange<StringAttr>());
}

bool ShardingAttr::isFullyReplicated() const {
  return getPartial().empty() && llvm::all_of(getDims(), [](Attribute axes) {
           return llvm::cast<ArrayAttr>(axes).empty();
         });
}

int64_t ShardingAttr::getNumShards(MeshOp mesh, unsigned dim) const {
  return mesh.getGroupSize(llvm::cast<ArrayAttr>(getDims()[dim]));
}

SmallVector<int64_t> ShardingAttr::getLocalShape(MeshOp mesh, ArrayRef<int64_t> globalShape) const {
  assert(globalShape.size() == getDims().size() && "sharding and shape differ in rank");
  SmallVector<int64_t> local(globalShape);
  for (auto [dim, size] : llvm::enumerate(local))
    if (!ShapedType::isDynamic(size))
      size /= getNumShards(mesh, dim);
  return local;
}

RankedTensorType ShardingAttr::getLocalType(MeshOp mesh, RankedTensorType global) const {
  return global.clone(getLocalShape(mesh, global.getShape()));
}
