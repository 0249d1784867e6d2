//===- Passes.td - the global program becomes each device's program ---------===//

#ifndef SHARDC_PASSES_PARTITION_PASSES_TD
#define SHARDC_PASSES_PARTITION_PASSES_TD

include "mlir/Pass/PassBase.td"

def PartitionPass : Pass<"shardc-partition", "mlir::ModuleOp"> {
  let summary = "Rewrite the sharded global program as the per-device (SPMD) program";
  let description = [{
    Expects every op annotated (`dist.shardings`) and every change of sharding
    explicit (`dist.reshard`), as shardc-propagate-sharding leaves them. Each
    value takes its local shape; each reshard becomes the collectives that
    perform it (all_reduce / reduce_scatter for pending sums, all_gather,
    all_to_all, and all_slice for taking a share of a whole value); each
    weight keeps its global sharding as `dist.weight_shard`, from which the
    artifact writer cuts every rank's slice. Function arguments and results
    stay whole.
  }];
  let dependentDialects = ["shardc::dist::DistDialect"];
}

def VerifyShardedPass : Pass<"shardc-verify-sharded", "mlir::ModuleOp"> {
  let summary = "Check the boundary between sharding and partitioning";
  let description = [{
    The global program that shardc-partition takes: no `graph.composite`
    (shardc-inline-composites), no collective yet (they are what partitioning
    makes; the shardings' fit to the mesh is the dialect verifier's); with
    `dist.pipeline`, one function per stage (shardc-pipeline-stages)
    and the ranks' action lists (shardc-pipeline-schedule). Every op that
    breaks this is reported with the pass that should have run; the module is
    not changed.
  }];
}

def VerifyPartitionedPass : Pass<"shardc-verify-partitioned", "mlir::ModuleOp"> {
  let summary = "Check the boundary between partitioning and lowering";
  let description = [{
    The per-device program that shardc-lower-to-exec takes: no
    `graph.composite` left (shardc-inline-composites), no `dist.reshard` left
    and no op still annotated with a `dist.*` sharding (shardc-partition),
    except the global `dist.weight_shard` a weight keeps for the artifact
    writer, and no micro-batch axis left in the mesh
    (shardc-split-microbatches). Every op that breaks this is reported, with the pass that should
    have removed it; the module is not changed.
  }];
}

#endif
