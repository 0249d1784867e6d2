//===- Passes.td - deciding how the program is split over the mesh ----------===//
//
// The global program (graph dialect, single-device semantics) plus a
// dist.mesh: the search chooses every op's sharding, propagation completes
// the annotations and makes every change of sharding an explicit
// dist.reshard. shardc-partition (passes/Partition) then writes the
// per-device program.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_PASSES_SHARDING_PASSES_TD
#define SHARDC_PASSES_SHARDING_PASSES_TD

include "mlir/Pass/PassBase.td"

def AutoShardPass : Pass<"shardc-auto-shard", "mlir::ModuleOp"> {
  let summary = "Choose how every op is split over the mesh, by cost";
  let description = [{
    For each op, every strategy its sharding rule allows (each mesh axis sent
    to one factor, or to none) is priced: compute by the device's roofline,
    and each reshard between a producer's and a consumer's choice by the
    collectives it needs (alpha-beta, ring or tree). The sum over the whole
    program is minimized exactly by variable elimination. Axes named "dp"
    never split weights; "tp" must split every linear layer's weight. The
    choice is written as `dist.shardings` on every op; an op that already has
    them (a user's annotation in an MLIR input) keeps them, and the rest of
    the plan is chosen around it. The plan's memory per
    device (weights + peak activations) must fit `device-memory`.
  }];
  let options = [
    Option<"sequenceParallel", "sequence-parallel", "bool", "false",
           "Split norms and the activations between blocks along the sequence over tp">,
    Option<"device", "device", "std::string", "\"h100\"",
           "Device description: a100, h100, h200 or a JSON file">,
    Option<"deviceMemory", "device-memory", "int64_t", "0",
           "Bytes of memory per device (0: the device description's)">,
    Option<"zero", "zero", "unsigned", "0",
           "ZeRO stage of a training step over dp: 1 splits the optimizer state and "
           "update, 2 also the gradients, 3 also the weights (docs/training.md)">,
    Option<"zeroAuto", "zero-auto", "bool", "false",
           "The least ZeRO stage whose plan fits device-memory (instead of zero)">,
  ];
  let dependentDialects = ["shardc::dist::DistDialect"];
}

def PropagateShardingPass : Pass<"shardc-propagate-sharding", "mlir::ModuleOp"> {
  let summary = "Complete the shardings from the annotated values and make reshards explicit";
  let description = [{
    Ops annotated with `dist.shardings` (by the user or shardc-auto-shard) keep
    them; every other op takes the strategy that needs the cheapest reshards
    of its operands as they arrive (function arguments carry `dist.sharding`,
    else they are whole). Then every operand whose sharding differs from the
    one its op needs gets a `dist.reshard`; a weight is instead cloned per
    sharding (weights are cut at compile time); results are made whole.
  }];
  let options = [
    Option<"device", "device", "std::string", "\"h100\"",
           "Device description used to price reshards: a100, h100, h200 or a JSON file">,
  ];
  let dependentDialects = ["shardc::dist::DistDialect"];
}

def ReplicateKvHeadsPass : Pass<"shardc-replicate-kv-heads", "mlir::ModuleOp"> {
  let summary = "Give each tensor-parallel rank its own copy of the kv heads it reads";
  let description = [{
    Grouped-query or multi-query attention with fewer key/value heads than
    the mesh's tp axis cannot be split by kv heads. Megatron-LM replicates
    each kv head over the ranks whose query heads read it. Here the key and
    value projections (linear, then the reshape/transpose/rotary chain to the
    attention op) are rebuilt on weights whose heads are repeated
    (`repeat_blocks`), so there are as many kv heads as tp ranks and every
    rank holds, and computes, just its own: no communication, the single
    device result unchanged. Only with a mesh whose tp divides by the kv heads
    and divides the query heads.
  }];
  let dependentDialects = ["shardc::graph::GraphDialect"];
}

def SplitFusedProjectionsPass : Pass<"shardc-split-fused-projections", "mlir::ModuleOp"> {
  let summary = "Give each part of a fused projection (QKV) its own linear layer";
  let description = [{
    A linear layer whose output is only split (or sliced) along its feature
    dim, as GPT-2's fused query/key/value projection is, becomes one linear
    layer per part on the matching slice of the weight (and bias). Each part
    can then be split by heads on its own, where the fused output could only
    be split in contiguous blocks that mix query, key and value.
  }];
  let dependentDialects = ["shardc::graph::GraphDialect"];
}

def TestShardingRulesPass : Pass<"shardc-test-sharding-rules", "mlir::ModuleOp"> {
  let summary = "Attach each op's sharding rule as a `dist.rule` string (for tests)";
  let description = [{
    Writes OpShardingRule::describe() of every op to a `dist.rule` attribute:
    operand and result dims as factors (a, b, ...; compound dims as a*b),
    factor sizes, reductions and whole factors.
  }];
}

#endif
