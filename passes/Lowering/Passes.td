//===- Passes.td - lowering the graph dialect to exec programs -------------===//

#ifndef SHARDC_PASSES_LOWERING_PASSES_TD
#define SHARDC_PASSES_LOWERING_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseElementwisePass : Pass<"shardc-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "Fuse chains of elementwise exec kernels into one 'fused' kernel";
  let description = [{
    A float32 elementwise kernel whose output is read only by the next
    elementwise kernel of the chain is merged into it: the fused kernel reads
    each outside input once and writes only the chain's result, so the
    intermediate buffers (and their memory traffic) disappear. Its `expr`
    parameter lists the steps, each an op and its arguments (inputs first,
    then earlier steps), evaluated per element of the broadcast result.
  }];
  let dependentDialects = ["shardc::exec::ExecDialect"];
}

def FuseLinearEpiloguePass : Pass<"shardc-fuse-linear-epilogue", "mlir::ModuleOp"> {
  let summary = "Apply the elementwise kernel that alone reads a linear's output inside the GEMM";
  let description = [{
    A float32 `linear` kernel whose output is read by one elementwise kernel
    only (a single op, or a "fused" one) becomes a linear with an epilogue:
    that kernel's expression, applied to the GEMM's result before it is
    stored, with the kernel's other inputs as extra inputs of the linear.
    The CPU runs the epilogue as oneDNN post-ops of the packed GEMM
    (runtime/cpu/PackedLinear.h), so GELU after an MLP's first linear, the
    residual add after a projection and SwiGLU's silu(gate) * up cost no
    pass over memory of their own. Only expressions post-ops can run are
    taken: a chain in which each step applies gelu, gelu_tanh, relu, silu,
    sigmoid or tanh to the running value, or adds, multiplies, takes the max
    or min with (or subtracts or divides the running value by) an extra
    input of the output's shape. The new linear stands where the
    elementwise kernel stood (the up projection of SwiGLU is computed
    first), which the pass allows only when nothing in between writes the
    linear's inputs. Params: `epilogue_ops` and `epilogue_args` in the fused
    kernel's encoding, index 0 the GEMM's result and 1..`epilogue_inputs`
    the extra inputs, which follow the linear's own (input, weight, bias).
    Run by the driver for `--target=cpu` only.
  }];
  let dependentDialects = ["shardc::exec::ExecDialect"];
}

def FoldMatMulTransposesPass : Pass<"shardc-fold-matmul-transposes", "mlir::ModuleOp"> {
  let summary = "Let a matmul read an operand whose last two dims a transpose swapped in place";
  let description = [{
    A float32 `matmul` kernel whose operand is the result of a `transpose`
    kernel that swaps exactly the last two dims reads the transpose's input
    instead, with `transpose_lhs` or `transpose_rhs` set: the GEMM reads the
    stored matrices transposed (sgemm's 'T'), and the transpose, once
    nothing else reads its result, and its buffer go. A training step's
    weight gradients (x^T dy) and attention's backward products are such
    matmuls: on GPT-2-small's step (batch 4 x 128) 97 of its 217
    transposes go, up to the LM head's [512, 50257]. Not done when a kernel
    between the two writes the transpose's input or a micro-batch loop ends
    between them. Run by the driver for `--target=cpu` only.
  }];
  let dependentDialects = ["shardc::exec::ExecDialect"];
}

def WriteStatesInPlacePass : Pass<"shardc-write-states-in-place", "mlir::ModuleOp"> {
  let summary = "Let the elementwise kernel that computes a state's new value write the state";
  let description = [{
    A training step writes each parameter and optimizer state with a `copy`
    kernel from the buffer of its new value. When that value is the only
    output of an elementwise kernel (the fused optimizer update), and no
    kernel after it reads the state's old value, the kernel writes the state
    buffer itself (each element read and written at the same index) and the
    copy and the value's buffer go.
  }];
  let dependentDialects = ["shardc::exec::ExecDialect"];
}

def GenerateCudaKernelsPass : Pass<"shardc-generate-cuda-kernels", "mlir::ModuleOp"> {
  let summary = "Write CUDA C++ for every fused elementwise step (--target=cuda)";
  let description = [{
    Each `exec.kernel "fused"` gets a `__global__` function specialized to its
    shapes: one thread per output element in a grid-stride loop, every
    input's offset computed from the constant broadcast strides, the
    expression evaluated in registers. The step names its function in the
    `cuda_kernel` parameter; the whole source is the module's
    `exec.cuda_source`, compiled into the artifact's fatbin by nvcc for the
    chosen architecture.
  }];
}

def PretransposeWeightsPass : Pass<"shardc-pretranspose-weights", "mlir::ModuleOp"> {
  let summary = "Give linear layers that read a weight transposed a copy stored [K, N]";
  let description = [{
    On the CPU a GEMM that reads its weight transposed ('N','T') runs well
    below the same GEMM on the weight stored [K, N]: GPT-2's tied LM head
    (128 x 50257 x 768) took 34-40 ms against 24-25 ms with oneDNN on two
    threads. A `graph.linear` with `transpose_weight` whose weight is a 2-D
    `graph.weight` (whole, or a rank's box) reads instead a weight of the
    transposed type marked `graph.transposed`, which
    the artifact writer writes transposed, and drops the flag. A weight
    other ops also read (an embedding tied to the LM head) keeps its
    orientation for them: the rank then holds both copies, as onnxruntime's
    pre-packing does. Run by the driver for `--target=cpu` only.
  }];
}

def LowerToExecPass : Pass<"shardc-lower-to-exec", "mlir::ModuleOp"> {
  let summary = "Lower the graph program to an exec program of kernel steps on buffers";
  let description = [{
    Each graph op becomes an exec.kernel writing a fresh arena buffer
    (exec.alloc), reshapes become exec.view, weights and constants exec.weight
    and exec.constant, arguments exec.input and results exec.output.
    Weights and constants are named as tensors of the weight file that
    holds them: a pipeline stage's functions share one, so a constant (by
    value) or untrained weight (by its bytes) that two of them hold has one
    name; trained storage is named alike across the module.
    Expects the partitioned program that shardc-verify-partitioned accepts.
  }];
  let dependentDialects = ["shardc::exec::ExecDialect"];
}

def PlanMemoryPass : Pass<"shardc-plan-memory", "mlir::ModuleOp"> {
  let summary = "Place every arena buffer: liveness-based offsets with reuse";
  let description = [{
    Computes each exec.alloc's live range over the steps (through views; an
    output lives to the end), places buffers largest first at the lowest
    offset that overlaps no buffer live at the same time (64-byte aligned),
    and records the peak as the function's `exec.arena_bytes`.
  }];
  let dependentDialects = ["shardc::exec::ExecDialect"];
}

#endif // SHARDC_PASSES_LOWERING_PASSES_TD
