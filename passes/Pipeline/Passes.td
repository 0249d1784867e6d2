//===- Passes.td - pipeline stages, their schedule, micro-batches ---------===//

#ifndef SHARDC_PASSES_PIPELINE_PASSES_TD
#define SHARDC_PASSES_PIPELINE_PASSES_TD

include "mlir/Pass/PassBase.td"

def PipelineStagesPass : Pass<"shardc-pipeline-stages", "mlir::ModuleOp"> {
  let summary = "Cut the sharded program into cost-balanced pipeline stages";
  let description = [{
    On a module with `dist.pipeline`: prices every op of the sharded program
    with its chosen sharding (per micro-batch), chooses the P x V - 1 cuts
    that minimize the schedule's step time with every stage within the
    device memory (weights, the in-flight micro-batches' boundary
    activations and the working set), and replaces the program by one
    function per stage with `dist.send` / `dist.recv` between them
    (docs/pipeline.md). `--pp-split` cuts (the pipeline's `splits`) are kept.
    Each stage function records its estimate in `dist.stage_estimate`, the
    pipeline op the step time in `dist.step_seconds`. Without
    `dist.pipeline` it does nothing.
  }];
  let options = [
    Option<"device", "device", "std::string", "\"h100\"",
           "The device the cost model prices: a100, h100, h200 or a JSON file">,
    Option<"deviceMemory", "device-memory", "int64_t", "0",
           "Bytes per device a stage must fit (0: the device's)">,
  ];
  let dependentDialects = ["shardc::dist::DistDialect", "mlir::func::FuncDialect"];
}

def PipelineSchedulePass : Pass<"shardc-pipeline-schedule", "mlir::ModuleOp"> {
  let summary = "Order each pipeline rank's forwards, sends and receives";
  let description = [{
    Turns the stages, the micro-batches and the schedule kind of
    `dist.pipeline` into the ordered `#dist.action` list of every pp rank
    (`actions`): GPipe runs every micro-batch through a rank's stage in
    order; the interleaved schedule runs micro-batches in groups of P
    through each of the rank's stages in turn (Megatron-LM's forward order).
    Each forward is preceded by the receives it needs and followed by the
    sends it feeds. Then it checks the lists against each other by running
    them: sends are buffered and matched in order per pair of ranks, so the
    lists deadlock exactly when some rank waits on a receive no peer will
    send; the check names the rank and the action, and that every transfer
    has one send and one receive of the same type.
  }];
}

def SplitMicrobatchesPass : Pass<"shardc-split-microbatches", "mlir::ModuleOp"> {
  let summary = "Make stage programs take one micro-batch: drop the mb axis";
  let description = [{
    After partitioning, the micro-batch axis `mb` of the mesh (which the
    sharding search split the batch over, like dp) becomes time: an
    argument's `dist.all_slice` over mb is removed (the runtime slices the
    micro-batch) and the argument takes the micro-batch's shape; a
    `dist.all_gather` over mb of a returned value is removed (the runtime
    concatenates the micro-batches), recording the dim on the result as
    `dist.microbatch_dim`; mb is dropped from the collectives' axes and
    from the mesh. Any other use of mb would mix micro-batches and is an
    error at the op.
  }];
  let dependentDialects = ["shardc::graph::GraphDialect"];
}

def AccumulateMicrobatchesPass : Pass<"shardc-accumulate-microbatches", "mlir::ModuleOp"> {
  let summary = "A training step in micro-batches: sums over mb accumulate, the update runs once";
  let description = [{
    On a partitioned training step (a module with `graph.training`) whose
    mesh has the micro-batch axis `mb` and no pipeline: each
    `dist.all_reduce` over mb (a sum over the batch: a gradient, the loss,
    the token count) becomes an accumulator (a `graph.weight` with
    `graph.train = "accumulator"`) that every micro-batch adds its piece to,
    read after the loop, all-reduced there over the collective's other
    axes. The ops that read the sums, and those only they read, move after
    an `exec.microbatch_loop_end`, which the runtime runs once per step;
    the rest runs once per micro-batch (docs/training.md). An op after the
    loop that reads one micro-batch's value is an error at the op.
  }];
  let dependentDialects = ["shardc::graph::GraphDialect", "shardc::exec::ExecDialect"];
}

def PipelineTrainingProgramsPass
    : Pass<"shardc-pipeline-training-programs", "mlir::ModuleOp"> {
  let summary = "Cut a partitioned training step into stage programs (F, B, W, update)";
  let description = [{
    On a training step with `dist.pipeline` whose ops carry their stage
    (`dist.pipeline_stage`, from shardc-pipeline-stages), after
    partitioning and shardc-accumulate-microbatches: one function per
    stage and part (`dist.stage`, `dist.part` = forward, backward_input,
    backward_weight or update, and an update's `dist.level`), with
    `dist.send` / `dist.recv` for every value one function makes and another
    reads (docs/pipeline.md, "Training pipelines"). A trained weight that a
    loop part of another stage reads (a tied embedding and LM head) is an
    error at the op. Without `graph.training` it does nothing.
  }];
  let dependentDialects = ["shardc::dist::DistDialect", "mlir::func::FuncDialect"];
}

#endif
