//===- DistAttrs.td - attributes of the dist dialect ----------------------===//
//
// The sharding of a tensor value, after Shardy's: which mesh axes split each
// dim and which axes still hold unreduced partial sums.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIST_ATTRS_TD
#define SHARDC_DIST_ATTRS_TD

include "dialects/Dist/DistBase.td"

def Dist_ShardingAttr : AttrDef<Dist_Dialect, "Sharding"> {
  let mnemonic = "sharding";
  let summary = "how a tensor is split over the axes of a mesh";
  let description = [{
    `#dist.sharding<@m, [...]>` lists, for each tensor dim, the mesh axes that
    split it: on a rank-3 tensor, the dims `{"dp"}, {}, {"tp"}` split dim 0
    over mesh axis "dp" and dim 2 over "tp"; dim 1 is replicated. A dim split
    over several axes lists them major to minor: `{"dp", "tp"}` gives device
    (dp, tp) the block dp * size(tp) + tp. `partial={"tp"}` says that the
    devices along "tp" each hold a summand of the value, so the value is their
    sum; an all-reduce over "tp" makes it whole. An axis appears at most once
    in a sharding; the axes it does not name replicate the value. Rank-0
    tensors have `[]`.

    Storage: `dims` is an array (one per tensor dim) of arrays of axis names,
    `partial` an array of axis names, possibly empty. `verifySharding` checks
    the sharding against a mesh and a tensor type.
  }];
  let parameters = (ins "::mlir::FlatSymbolRefAttr":$mesh, "::mlir::ArrayAttr":$dims,
                        "::mlir::ArrayAttr":$partial);
  let hasCustomAssemblyFormat = 1;
  // Only the layout of the arrays: the mesh is a symbol, so the axes can be
  // checked only where the sharding is used (verifySharding).
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "::mlir::FlatSymbolRefAttr":$mesh,
                     "::llvm::ArrayRef<::llvm::SmallVector<::llvm::StringRef>>":$dims,
                     CArg<"::llvm::ArrayRef<::llvm::StringRef>", "{}">:$partial)>,
  ];
  let extraClassDeclaration = [{
    /// A sharding that splits none of the `rank` dims of a tensor on `mesh`.
    static ShardingAttr getReplicated(::mlir::MLIRContext *context,
                                      ::mlir::FlatSymbolRefAttr mesh, int64_t rank);

    /// The axes splitting each dim, major to minor.
    ::llvm::SmallVector<::llvm::SmallVector<::llvm::StringRef>> getDimAxes() const;
    /// The axes over which the value is a pending partial sum.
    ::llvm::SmallVector<::llvm::StringRef> getPartialAxes() const;
    /// True when no dim is split and no sum is pending: every device holds
    /// the whole value.
    bool isFullyReplicated() const;

    /// The number of blocks `dim` is cut into: the product of its axes' sizes.
    int64_t getNumShards(MeshOp mesh, unsigned dim) const;
    /// The shape of one device's block. Assumes the sharding verified against
    /// `globalShape`; dynamic dims stay dynamic.
    ::llvm::SmallVector<int64_t> getLocalShape(MeshOp mesh,
                                               ::llvm::ArrayRef<int64_t> globalShape) const;
    /// `global` with the shape of one device's block.
    ::mlir::RankedTensorType getLocalType(MeshOp mesh, ::mlir::RankedTensorType global) const;
  }];
}

def Dist_ActionKind : I32EnumAttr<"ActionKind", "what a pipeline rank does next", [
      I32EnumAttrCase<"forward", 0>, I32EnumAttrCase<"backward_input", 1>,
      I32EnumAttrCase<"backward_weight", 2>, I32EnumAttrCase<"send", 3>,
      I32EnumAttrCase<"recv", 4>, I32EnumAttrCase<"update", 5>]> {
  let cppNamespace = "::shardc::dist";
  let genSpecializedAttr = 0;
}

def Dist_ActionAttr : AttrDef<Dist_Dialect, "Action"> {
  let mnemonic = "action";
  let summary = "one step of a pipeline rank's schedule";
  let description = [{
    `#dist.action<forward, stage = 1, microbatch = 3, transfer = -1>` runs
    stage 1's program on micro-batch 3; `send` and `recv` move transfer
    `transfer` of a micro-batch to or from the rank of `stage` (the peer
    stage). A training pipeline's `backward_input` and `backward_weight` run
    the B and W programs of a stage on a micro-batch, and `update` the
    stage's update program of level `level` once per step (docs/pipeline.md).
  }];
  let parameters = (ins EnumParameter<Dist_ActionKind>:$kind, "int64_t":$stage,
                        "int64_t":$microbatch, "int64_t":$transfer,
                        DefaultValuedParameter<"int64_t", "0">:$level);
  let assemblyFormat = "`<` $kind `,` struct($stage, $microbatch, $transfer, $level) `>`";
}

#endif // SHARDC_DIST_ATTRS_TD
