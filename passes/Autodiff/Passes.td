//===- Passes.td - training: loss, gradients, optimizer update --------------===//
//
// Runs on the raised global program (graph dialect), before sharding: the
// step it builds is sharded, partitioned and lowered like any program
// (docs/training.md).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_PASSES_AUTODIFF_PASSES_TD
#define SHARDC_PASSES_AUTODIFF_PASSES_TD

include "mlir/Pass/PassBase.td"

def AutodiffPass : Pass<"shardc-autodiff", "mlir::ModuleOp"> {
  let summary = "Turn the model into one training step: loss, gradients, optimizer update";
  let description = [{
    Appends the loss (`loss`, docs/training.md) to `main`, builds the
    reverse-mode gradient of the loss with respect to every trainable weight
    (every float graph.weight the loss depends on, minus `freeze`) with one
    rule per op (passes/Autodiff/Vjp*.cpp), and appends the optimizer's
    update, which writes every parameter and optimizer state with
    graph.assign. `main` then takes the model's inputs plus `labels` or
    `target` and returns `loss` and `grad_norm`. Composites are inlined
    first. An op on the path from a trained weight to the loss without a
    gradient rule is an error at the op (its ONNX node). Weights an
    export duplicated (equal bytes, or equal once transposed: a tied LM
    head) are first made one parameter, with a warning per tie.
  }];
  let options = [
    Option<"loss", "loss", "std::string", "\"\"",
           "KIND:OUTPUT with KIND causal-lm, cross-entropy, mse or output">,
    Option<"optimizer", "optimizer", "std::string", "\"adamw\"", "adamw or sgd">,
    Option<"lr", "lr", "double", "1e-3", "learning rate">,
    Option<"beta1", "beta1", "double", "0.9", "AdamW's first-moment decay">,
    Option<"beta2", "beta2", "double", "0.999", "AdamW's second-moment decay">,
    Option<"eps", "eps", "double", "1e-8", "AdamW's denominator term">,
    Option<"weightDecay", "weight-decay", "double", "-1",
           "weight decay; negative: the optimizer's default (AdamW 0.01, SGD 0)">,
    Option<"noDecay1d", "no-decay-1d", "bool", "false",
           "no weight decay on parameters of fewer than two dims (biases, norm scales)">,
    Option<"momentum", "momentum", "double", "0", "SGD's momentum">,
    Option<"gradClip", "grad-clip", "double", "0",
           "clip the gradients' global L2 norm to this; 0: no clipping">,
    ListOption<"freeze", "freeze", "std::string",
               "weights not trained: initializer names or name prefixes">,
    Option<"untie", "untie", "bool", "false",
           "train weights that hold the same bytes (directly or transposed) apart">,
    Option<"sumGradients", "sum-gradients", "bool", "false",
           "differentiate the loss's sum and divide each gradient by its denominator "
           "afterwards (the batch runs in micro-batches, which sum their gradients)">,
    Option<"lossScaling", "loss-scaling", "bool", "false",
           "dynamic loss scaling as torch.amp.GradScaler (fp16): the backward starts "
           "from the loss scale, a step with a non-finite gradient is skipped">,
    Option<"tagOwners", "tag-owners", "bool", "false",
           "number the forward ops (graph.op_id) and tag each backward op with the "
           "forward op whose rule made it (graph.vjp_of): a pipeline runs the backward "
           "of an op on that op's stage">,
  ];
  let dependentDialects = ["shardc::graph::GraphDialect", "mlir::func::FuncDialect"];
}

#endif // SHARDC_PASSES_AUTODIFF_PASSES_TD
