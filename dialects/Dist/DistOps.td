//===- DistOps.td - operations of the dist dialect ------------------------===//
//
// Two families: `dist.mesh` and `dist.reshard` belong to the global program,
// where values keep their full shapes and shardings are annotations; the
// collectives belong to the partitioned (SPMD) program and act on each
// device's local tensor. A collective runs over a group: the devices that
// differ only in the coordinates of its `mesh_axes`. Its group size n is the
// product of those axes' sizes, and ranks within the group (`root`, `peer`)
// count over those axes major to minor.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIST_OPS_TD
#define SHARDC_DIST_OPS_TD

include "dialects/Dist/DistAttrs.td"

//===----------------------------------------------------------------------===//
// The global program: meshes and reshards
//===----------------------------------------------------------------------===//

def Dist_MeshOp : Dist_Op<"mesh", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "a named grid of devices with named axes";
  let description = [{
    `dist.mesh @m = <["dp"=2, "tp"=4]>` is 8 devices in a 2 x 4 grid; the last
    axis varies fastest in the device order. A mesh without axes is one
    device. Shardings and collectives name the mesh by its symbol.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrArrayAttr:$axis_names,
                       DenseI64ArrayAttr:$axis_sizes);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$symName, "::llvm::ArrayRef<::llvm::StringRef>":$names,
                   "::llvm::ArrayRef<int64_t>":$sizes)>,
    OpBuilder<(ins "::llvm::StringRef":$symName, "::llvm::ArrayRef<std::string>":$names,
                   "::llvm::ArrayRef<int64_t>":$sizes)>,
  ];
  let extraClassDeclaration = [{
    /// The number of devices: the product of the axis sizes.
    int64_t getNumDevices();
    /// The position of axis `name`, or nullopt when the mesh has no such axis.
    std::optional<unsigned> getAxisIndex(::llvm::StringRef name);
    /// The size of axis `name`, which must be an axis of the mesh.
    int64_t getAxisSize(::llvm::StringRef name);
    /// The size of the group spanned by `axes` (an array of axis names of the
    /// mesh): the product of their sizes.
    int64_t getGroupSize(::mlir::ArrayAttr axes);
  }];
}

def Dist_ReshardOp : Dist_Op<"reshard", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "the same value with another sharding";
  let description = [{
    `%y = dist.reshard %x to <@m, [...]> : tensor<8x8xf32>` is `%x` laid out
    as the sharding says; the value does not change. The target prints
    without its `#dist.sharding` prefix, as in Shardy: a full dialect
    attribute followed by `:` would read as an attribute with a type.
    Partitioning replaces it with the collectives that move the blocks (or
    with nothing, when the source sharding already matches).
  }];
  let arguments = (ins Dist_Tensor:$input, Dist_ShardingAttr:$sharding);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = "$input `to` $sharding attr-dict `:` type($input)";
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::shardc::dist::ShardingAttr":$sharding), [{
      build($_builder, $_state, input.getType(), input, sharding);
    }]>,
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// The partitioned program: collectives on local tensors
//===----------------------------------------------------------------------===//

// Pure: the partitioned program is SPMD, so two identical collectives on the
// same value compute the same thing on every device and may be merged.
class Dist_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Dist_Op<mnemonic, [Pure] # traits> {
  let hasVerifier = 1;
}

// A reduction defaults to `sum`; the syntax shows it only when it is another.
defvar Dist_ReductionAttr = DefaultValuedAttr<Dist_Reduction, "::shardc::dist::Reduction::sum">;

def Dist_AllReduceOp : Dist_CollectiveOp<"all_reduce", [AllTypesMatch<["input", "result"]>]> {
  let summary = "every device gets the reduction of the group's tensors";
  let arguments = (ins Dist_Tensor:$input, FlatSymbolRefAttr:$mesh, StrArrayAttr:$mesh_axes,
                       Dist_ReductionAttr:$reduction);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $mesh_axes (`reduction` `=` $reduction^)? attr-dict `:` type($input)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::FlatSymbolRefAttr":$mesh,
                   "::llvm::ArrayRef<::llvm::StringRef>":$axes,
                   CArg<"::shardc::dist::Reduction", "::shardc::dist::Reduction::sum">:$reduction)>,
  ];
}

def Dist_AllGatherOp : Dist_CollectiveOp<"all_gather"> {
  let summary = "concatenate the group's tensors along `dim`, in group rank order";
  let arguments = (ins Dist_Tensor:$input, FlatSymbolRefAttr:$mesh, StrArrayAttr:$mesh_axes,
                       I64Attr:$dim);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $mesh_axes `dim` `=` $dim attr-dict `:` type($input) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::FlatSymbolRefAttr":$mesh,
                   "::llvm::ArrayRef<::llvm::StringRef>":$axes, "int64_t":$dim,
                   "int64_t":$groupSize)>,
  ];
}

def Dist_ReduceScatterOp : Dist_CollectiveOp<"reduce_scatter"> {
  let summary = "sum the group's tensors and keep this device's block of `dim`";
  let arguments = (ins Dist_Tensor:$input, FlatSymbolRefAttr:$mesh, StrArrayAttr:$mesh_axes,
                       I64Attr:$dim,
                       Dist_ReductionAttr:$reduction);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $mesh_axes `dim` `=` $dim (`reduction` `=` $reduction^)? attr-dict `:`
    type($input) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::FlatSymbolRefAttr":$mesh,
                   "::llvm::ArrayRef<::llvm::StringRef>":$axes, "int64_t":$dim,
                   "int64_t":$groupSize,
                   CArg<"::shardc::dist::Reduction", "::shardc::dist::Reduction::sum">:$reduction)>,
  ];
}

def Dist_AllToAllOp : Dist_CollectiveOp<"all_to_all"> {
  let summary = "cut `split_dim` into n blocks, send block i to group rank i, and "
                "concatenate the received blocks along `concat_dim`";
  let arguments = (ins Dist_Tensor:$input, FlatSymbolRefAttr:$mesh, StrArrayAttr:$mesh_axes,
                       I64Attr:$split_dim, I64Attr:$concat_dim);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $mesh_axes `split_dim` `=` $split_dim `concat_dim` `=` $concat_dim
    attr-dict `:` type($input) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::FlatSymbolRefAttr":$mesh,
                   "::llvm::ArrayRef<::llvm::StringRef>":$axes, "int64_t":$splitDim,
                   "int64_t":$concatDim, "int64_t":$groupSize)>,
  ];
}

def Dist_AllSliceOp : Dist_CollectiveOp<"all_slice"> {
  let summary = "keep this device's block of `dim` (no communication)";
  let description = [{
    The inverse of `dist.all_gather`: a replicated tensor becomes split over
    the group, each device keeping the block at its group rank.
  }];
  let arguments = (ins Dist_Tensor:$input, FlatSymbolRefAttr:$mesh, StrArrayAttr:$mesh_axes,
                       I64Attr:$dim);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $mesh_axes `dim` `=` $dim attr-dict `:` type($input) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::FlatSymbolRefAttr":$mesh,
                   "::llvm::ArrayRef<::llvm::StringRef>":$axes, "int64_t":$dim,
                   "int64_t":$groupSize)>,
  ];
}

def Dist_BroadcastOp : Dist_CollectiveOp<"broadcast", [AllTypesMatch<["input", "result"]>]> {
  let summary = "every device gets the tensor of group rank `root`";
  let arguments = (ins Dist_Tensor:$input, FlatSymbolRefAttr:$mesh, StrArrayAttr:$mesh_axes,
                       I64Attr:$root);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $mesh_axes `root` `=` $root attr-dict `:` type($input)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::FlatSymbolRefAttr":$mesh,
                   "::llvm::ArrayRef<::llvm::StringRef>":$axes, "int64_t":$root)>,
  ];
}

//===----------------------------------------------------------------------===//
// Pipelines: stages as functions, transfers between them, the schedule
//===----------------------------------------------------------------------===//

def Dist_PipelineOp : Dist_Op<"pipeline", [HasParent<"::mlir::ModuleOp">]> {
  let summary = "the pipeline the module's stages run on";
  let description = [{
    `pipeline_ranks` (the pp degree P) ranks each hold `virtual_stages` (V)
    of the P * V stages: stage k runs on pp rank k mod P. The batch is cut
    into `microbatches` pieces that `schedule` ("gpipe": fill and drain, or
    "interleaved") runs through the stages. `splits` are ONNX node names
    after which a stage must end (--pp-split). Before
    `shardc-pipeline-stages` the module has one function; after it, one per
    stage (`dist.stage` on each). `shardc-pipeline-schedule` adds `actions`:
    per pp rank, the ordered #dist.action list every rank of it runs.
    `recompute` (a training step's): "selective", "full" when each
    stage's backward computes its forward again, keeping only what the
    stage receives, or "auto": full where a stage does not fit otherwise
    (`dist.recomputed_stages` gives the choice per stage).
  }];
  let arguments = (ins I64Attr:$pipeline_ranks, I64Attr:$virtual_stages,
                       I64Attr:$microbatches, StrAttr:$schedule,
                       DefaultValuedAttr<StrArrayAttr, "{}">:$splits,
                       OptionalAttr<ArrayAttr>:$actions,
                       DefaultValuedAttr<StrAttr, "\"selective\"">:$recompute);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// P * V.
    int64_t getNumStages() {
      return getPipelineRanksAttr().getInt() * getVirtualStagesAttr().getInt();
    }
  }];
}

// Both have effects so that they stay in program order and a receive is never
// merged with another or dropped.
def Dist_SendOp : Dist_Op<"send", [MemoryEffects<[MemWrite]>]> {
  let summary = "send a value to a later pipeline stage";
  let description = [{
    In the function of stage s (`dist.stage`), `dist.send %v to stage 2
    transfer 0` gives each micro-batch's %v to stage 2, where `dist.recv` of
    the same transfer takes it. Each rank sends its own block to the rank of
    the other stage with the same dp and tp coordinates (both stages hold the
    value with the same sharding). One send per transfer.
  }];
  let arguments = (ins Dist_Tensor:$input, I64Attr:$to_stage, I64Attr:$transfer);
  let assemblyFormat = [{
    $input `to` `stage` $to_stage `transfer` $transfer attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Dist_RecvOp : Dist_Op<"recv", [MemoryEffects<[MemWrite]>]> {
  let summary = "receive a value from an earlier pipeline stage";
  let arguments = (ins I64Attr:$from_stage, I64Attr:$transfer);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    `from` `stage` $from_stage `transfer` $transfer attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

#endif // SHARDC_DIST_OPS_TD
