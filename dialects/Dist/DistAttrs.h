//===- DistAttrs.h - the dist dialect and its attributes --------*- C++ -*-===//
//
// Include dialects/Dist/DistDialect.h, which brings this and the ops.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_DIALECTS_DIST_DISTATTRS_H
#define SHARDC_DIALECTS_DIST_DISTATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "dialects/Dist/DistDialect.h.inc"
#include "dialects/Dist/DistEnums.h.inc"

namespace shardc::dist {
// ShardingAttr's helpers take the mesh the sharding names; the op is declared
// after the attributes it uses.
class MeshOp;
} // namespace shardc::dist

#define GET_ATTRDEF_CLASSES
#include "dialects/Dist/DistAttrs.h.inc"

#endif
