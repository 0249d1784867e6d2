//===- Passes.td - passes on the graph dialect ------------------------------===//
//
// Raising: recognizes the composite ops of transformer models in imported,
// primitive form. Every raising pass preserves semantics exactly; what it
// cannot prove matches stays as primitives.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_PASSES_GRAPH_PASSES_TD
#define SHARDC_PASSES_GRAPH_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertPrecisionPass : Pass<"shardc-convert-precision", "mlir::ModuleOp"> {
  let summary = "Store the program's float32 tensors in bf16 or fp16 (--dtype)";
  let description = [{
    Every float32 value becomes `dtype`: weights keep their stored bytes
    (`stored_type = f32`, converted when the artifact is written), constants
    are converted now (saturating at the type's largest finite value, so a
    mask's -3.4e38 stays finite), inputs are cast on entry and results cast
    back to float32 on exit, so the program's signature does not change.
    Kernels still compute in float32.

    With `master-weights` (a mixed-precision training step, before
    shardc-autodiff) every float32 weight stays float32 and is read through
    one cast to `dtype`, tagged `graph.compute_type`: the weight is the fp32
    master the optimizer updates, the cast is the step's low-precision copy,
    and the cast's gradient is the fp32 gradient (docs/training.md).
  }];
  let options = [
    Option<"dtype", "dtype", "std::string", "\"bf16\"", "The storage type: bf16 or f16">,
    Option<"masterWeights", "master-weights", "bool", "false",
           "keep float32 weights and compute on a cast of each (mixed-precision training)">,
  ];
  let dependentDialects = ["shardc::graph::GraphDialect"];
}

def SplitWeightCastsPass : Pass<"shardc-split-weight-casts", "mlir::ModuleOp"> {
  let summary = "Give each use of a cast of a weight a cast of its own";
  let description = [{
    A mixed-precision training step reads each fp32 master weight through a
    cast to the compute type, and CSE leaves one cast per weight. A weight
    the sharding search may cut for each consumer on its own; one cast
    feeding several consumers (a tied embedding and LM head, a linear's
    forward and backward) is one variable of the search linking them all,
    whose tables then outgrow its bound. A cast per use costs a cast per
    use and keeps the search's problem the fp32 step's.
  }];
  let dependentDialects = ["shardc::graph::GraphDialect"];
}

def ComputeCopiesPass : Pass<"shardc-compute-copies", "mlir::ModuleOp"> {
  let summary = "Keep each mixed-precision master's compute-type copy as storage the update refreshes";
  let description = [{
    After shardc-autodiff on a mixed-precision step, each fp32 master
    (`graph.train = "param"` with `graph.compute_type`) is read by the
    forward and backward through casts. Each such cast becomes a read of a
    new weight in the compute type, `graph.train = "copy"`, named NAME.bf16
    (NAME.f16), initialised from the master's bytes converted; after the
    master's write the update casts the new master and writes the copy.

    So the step keeps what Megatron-LM's distributed optimizer keeps: the
    compute-type weights whole (2 bytes a parameter), the master only where
    the update needs it. ZeRO then splits the master over dp with the
    optimizer's state from stage 1 on, and the new weights are gathered in
    the compute type, half the bytes of the fp32 master (docs/training.md).
    Casts of weights that are not trained (--freeze) stay.
  }];
  let dependentDialects = ["shardc::graph::GraphDialect"];
}

def DensifySelectionsPass : Pass<"shardc-densify-selections", "mlir::ModuleOp"> {
  let summary = "Make NonZero routing static: every entry runs, unselected ones add zero";
  let description = [{
    graph.nonzero (a selection whose size is known only at run time) becomes
    every coordinate of its mask. Its uses are followed to the scatters that
    put the entries back; their updates are zeroed where the mask is zero and
    they add. A use that mixes entries (a reduction over them, a contraction,
    a model output) is refused with an error naming it: no graph.nonzero is
    left after this pass.
  }];
  let dependentDialects = ["shardc::graph::GraphDialect"];
}

def InlineCompositesPass : Pass<"shardc-inline-composites", "mlir::ModuleOp"> {
  let summary = "Replace graph.composite ops by their bodies";
  let description = [{
    Ends the graph phase. shardc-raise-mlp and shardc-raise-moe outline each
    block they recognize into a `graph.composite` so that `--emit=graph` shows
    the model's structure; every later phase works op by op (a sharding rule
    per op, a kernel per op), so the driver inlines the composites before
    sharding. Nested composites (the experts of a MoE) are inlined first.
  }];
  let dependentDialects = ["shardc::graph::GraphDialect"];
}

def RaiseActivationsPass : Pass<"shardc-raise-activations", "mlir::ModuleOp"> {
  let summary = "Recognize GELU (erf and tanh forms), SiLU and rsqrt spelled out as primitives";
  let description = [{
    0.5 * x * (1 + erf(x / sqrt(2))) becomes graph.gelu, the tanh approximation
    graph.gelu {approximate_tanh}, x * sigmoid(x) graph.silu and 1 / sqrt(x)
    graph.rsqrt, whatever the order of the factors.
  }];
  let dependentDialects = ["shardc::graph::GraphDialect"];
}

def RaiseAttentionPass : Pass<"shardc-raise-attention", "mlir::ModuleOp"> {
  let summary = "Recognize scaled dot-product attention";
  let description = [{
    softmax(scale * q @ k^T + mask) @ v, with the scale applied to the scores or
    to q and k, masks added or applied with where(), and key/value heads
    repeated for grouped-query attention, becomes graph.attention. Constant
    causal masks become the `causal` flag.
  }];
  let dependentDialects = ["shardc::graph::GraphDialect"];
}

def RaiseLinearPass : Pass<"shardc-raise-linear", "mlir::ModuleOp"> {
  let summary = "Recognize fully connected layers: matmul by a weight, plus a bias";
  let description = [{
    matmul(x, W) or matmul(x, transpose(W)) with W a 2-D weight or constant,
    optionally followed by the add of a 1-D bias, becomes graph.linear. A
    linear on tokens flattened to [B*S, H] whose result is viewed back (Hugging
    Face's Conv1D), and a whole region of per-token ops (norms, linears,
    elementwise) between such views (OPT's MLP), run on [B, S, H] instead.
  }];
  let dependentDialects = ["shardc::graph::GraphDialect"];
}

def RaiseMlpPass : Pass<"shardc-raise-mlp", "mlir::ModuleOp"> {
  let summary = "Group feed-forward blocks into an mlp graph.composite";
  let description = [{
    linear -> activation -> linear, and the gated form
    linear(act(linear(x)) * linear(x)), whose intermediate values are used
    nowhere else, become one composite op.
  }];
  let dependentDialects = ["shardc::graph::GraphDialect"];
}

def RaiseMoePass : Pass<"shardc-raise-moe", "mlir::ModuleOp"> {
  let summary = "Group top-k routed mixture-of-experts blocks into a moe graph.composite";
  let description = [{
    A router (linear -> softmax -> topk) whose routing weights scale expert
    outputs that are summed: everything from the router's input to the point
    where all routed paths join becomes one composite op.
  }];
  let dependentDialects = ["shardc::graph::GraphDialect"];
}

def RaiseRoutedExpertsPass : Pass<"shardc-raise-routed-experts", "mlir::ModuleOp"> {
  let summary = "Raise the routed experts of each moe composite into graph.moe";
  let description = [{
    In each `moe` composite, finds the tokens, the router's top-k choices and
    gates, and one MLP per expert, whichever way the exporter spelled the
    dispatch (a dense gate table, ...), and replaces the composite by the
    router's ops and one graph.moe (docs/experts.md). A composite no spelling
    matches stays, and runs every expert on every token as exported.
  }];
  let dependentDialects = ["shardc::graph::GraphDialect"];
}

def SetMoeCapacityPass : Pass<"shardc-set-moe-capacity", "mlir::ModuleOp"> {
  let summary = "Give every graph.moe a per-expert capacity of factor x (its entries / experts)";
  let description = [{
    --moe-capacity-factor F: each expert keeps at most ceil(F * T * k / E)
    of the T tokens' k entries (GShard's and Megatron-LM's capacity); the
    rest are dropped by docs/experts.md's rule (first tokens first) and
    counted in profiles. Without it every entry is kept (dropless).
  }];
  let options = [Option<"factor", "factor", "double", "1.0",
                        "capacity as a multiple of the entries an expert gets on average">];
  let dependentDialects = ["shardc::graph::GraphDialect"];
}

def RaiseNormsPass : Pass<"shardc-raise-norms", "mlir::ModuleOp"> {
  let summary = "Recognize layer norm and RMS norm spelled out as primitives";
  let description = [{
    (x - mean(x)) / sqrt(var(x) + eps) * gamma + beta becomes graph.layer_norm
    and x * rsqrt(mean(x^2) + eps) * w graph.rms_norm, over trailing axes.
  }];
  let dependentDialects = ["shardc::graph::GraphDialect"];
}

def RaiseRotaryPass : Pass<"shardc-raise-rotary", "mlir::ModuleOp"> {
  let summary = "Recognize rotary position embeddings in rotate-half form";
  let description = [{
    x * cos + concat(-x[..., D/2:], x[..., :D/2]) * sin becomes graph.rotary.
  }];
  let dependentDialects = ["shardc::graph::GraphDialect"];
}

def RaiseBatchGathersPass : Pass<"shardc-raise-batch-gathers", "mlir::ModuleOp"> {
  let summary = "Recognize a GatherND whose index tuples name their own batch row";
  let description = [{
    A graph.gather_nd with constant indices whose tuples' first component
    is the tuple's own coordinate along the leading indices dim (torch's
    dynamo exporter gathers the attention mask so: (b, position) for row b)
    becomes one with one more batch dim and that component dropped: the same
    values, but now the batch is a dim data, indices and result share, which
    the sharding rules split like any batch (dp, micro-batches) instead of
    gathering the data whole. Repeated while the next component qualifies.
  }];
  let dependentDialects = ["shardc::graph::GraphDialect"];
}

#endif // SHARDC_PASSES_GRAPH_PASSES_TD
