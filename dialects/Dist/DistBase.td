//===- DistBase.td - the dist dialect and its op base class ---------------===//
//
// `dist` says how tensors are split over a mesh of devices: meshes, sharding
// annotations on the global program, and the collectives of the per-device
// (SPMD) program that partitioning produces.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIST_BASE_TD
#define SHARDC_DIST_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Dist_Dialect : Dialect {
  let name = "dist";
  let cppNamespace = "::shardc::dist";
  let summary = "Device meshes, tensor shardings and collectives";
  let description = [{
    A `dist.mesh` names a logical grid of devices with named axes. Values of the
    global (single-device) program carry a `#dist.sharding` that maps each
    tensor dim to the mesh axes splitting it, major to minor, and lists the
    axes over which the value is still a pending partial sum, after Shardy.
    Ops hold one sharding per result in the discardable `dist.shardings`
    attribute; function arguments and results hold theirs in `dist.sharding`.
    `dist.reshard` changes a value's sharding in the global program;
    partitioning turns it into the collectives (`dist.all_gather`,
    `dist.all_reduce`, ...) that act on each device's local tensor.
  }];
  let useDefaultAttributePrinterParser = 1;
  // The dialect checks the shardings it attaches to other dialects' ops and
  // to function arguments and results.
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Adds the attributes; defined next to them, where their storage is.
    void registerAttributes();
  }];
}

class Dist_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dist_Dialect, mnemonic, traits>;

// Collectives act on the local tensors of the partitioned program, whose
// shapes are as static as the global ones they were cut from.
def Dist_Tensor : StaticShapeTensorOf<[AnyType]>;

def Dist_Reduction : I32EnumAttr<"Reduction", "how a collective combines the devices' values", [
      I32EnumAttrCase<"sum", 0>]> {
  let cppNamespace = "::shardc::dist";
}

#endif // SHARDC_DIST_BASE_TD
