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
    stay whole (shardc-defer-result-gathers then leaves the batch axes'
    gathers of results to the runtime).
  }];
  let dependentDialects = ["shardc::dist::DistDialect"];
}

def DeferResultGathersPass : Pass<"shardc-defer-result-gathers", "mlir::ModuleOp"> {
  let summary = "Leave the batch axes' gathers of what the program returns to the runtime";
  let description = [{
    Runs on the per-device program (after shardc-partition and
    shardc-split-microbatches). A result made whole by an `all_gather` whose
    mesh axes start with batch axes (dp, ep: they split the batch, never a
    weight) is returned split instead: the gather keeps only the axes after
    them (or goes), the gathers after it are rebuilt on the smaller value,
    and the result is marked `dist.gather_axes` / `dist.gather_dim`. The
    runtime then gathers the pieces onto the output rank alone, instead of
    every rank receiving every other rank's rows. One dim per result, the
    first the chain gathers such axes along; the rule is
    `sharding::returnedByRuntime`'s, which the report and the stage search
    price.
  }];
  let dependentDialects = ["shardc::dist::DistDialect"];
}

def BucketCollectivesPass : Pass<"shardc-bucket-collectives", "mlir::ModuleOp"> {
  let summary = "Fuse a training step's gradient sums and weight gathers into buckets";
  let description = [{
    Runs on the per-device program of a training step (after
    shardc-defer-result-gathers). As PyTorch DDP and DeepSpeed's ZeRO bucket
    them, the sums of weights' gradients (`all_reduce`, `reduce_scatter`
    read by the update or added into a micro-batch accumulator) and the
    gathers of the new weights after the update (`all_gather` of an update's
    value) are fused: collectives of one kind, mesh, axes, reduction and
    element type, taken in program order, share one collective on the flat
    concatenation of their inputs until the next would take the bucket's
    input past `bucket-mb` MiB per rank; the result is split and reshaped
    back. A reduce-scatter or all-gather takes a member only when each
    rank's block of it is contiguous (every dim before the split one is 1),
    so that the bucket's blocks are the members' blocks side by side. The
    bucket is placed at its first member's place, or after the last of its
    members' inputs, and before any member's result is read; a member that
    cannot be placed so starts a new bucket. Sums and gathers are
    elementwise, so the step computes the same bits. The bucket's
    collective carries `dist.bucket` (the number of members). 0 MiB: no
    buckets.
  }];
  let options = [
    Option<"bucketMb", "bucket-mb", "double", "25",
           "Largest input of a bucket, MiB per rank (0: no buckets)">,
  ];
  let dependentDialects = ["shardc::graph::GraphDialect"];
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
