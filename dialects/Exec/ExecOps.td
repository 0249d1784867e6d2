//===- ExecOps.td - the exec dialect: per-rank programs of steps ----------===//
//
// `exec` is what a rank runs: steps (kernel launches) on buffers. Buffers are
// builtin memrefs with static shapes and the identity layout; where their
// bytes live is said by the op that defines them: an arena slice (exec.alloc,
// placed by the memory plan), a weight or constant of the rank's weight file,
// a caller's input, or a view of another buffer.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_EXEC_OPS_TD
#define SHARDC_EXEC_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Exec_Dialect : Dialect {
  let name = "exec";
  let cppNamespace = "::shardc::exec";
  let summary = "Per-rank programs of kernel steps on planned buffers";
  let description = [{
    A program is a `func.func` without arguments or results whose body binds
    inputs, weights and arena buffers and then runs steps in order; the
    artifact serializes it for the runtime. The function's `exec.arena_bytes`
    attribute is the memory plan's peak.
  }];
}

class Exec_Op<string mnemonic, list<Trait> traits = []>
    : Op<Exec_Dialect, mnemonic, traits>;

def Exec_Buffer : MemRefRankOf<[AnyType], [0, 1, 2, 3, 4, 5, 6, 7, 8]>;

def Exec_InputOp : Exec_Op<"input"> {
  let summary = "the caller's input `index`, named as in the model";
  let description = [{
    In a pipeline stage's program, an input with `transfer` is that
    transfer's tensor, received from an earlier stage (docs/pipeline.md).
  }];
  let arguments = (ins StrAttr:$name, I64Attr:$index, OptionalAttr<I64Attr>:$transfer);
  let results = (outs Exec_Buffer:$buffer);
  let assemblyFormat = "$name attr-dict `:` type($buffer)";
}

def Exec_OutputOp : Exec_Op<"output"> {
  let summary = "marks `buffer` as the caller's output `index`";
  let description = [{
    In a pipeline stage's program, an output with `transfer` is sent to a
    later stage instead of returned to the caller.
  }];
  let arguments = (ins StrAttr:$name, I64Attr:$index, Exec_Buffer:$buffer,
                       OptionalAttr<I64Attr>:$transfer);
  let assemblyFormat = "$name $buffer attr-dict `:` type($buffer)";
}

def Exec_WeightOp : Exec_Op<"weight", [Pure]> {
  let summary = "a tensor of the rank's weight file, read from `file` at compile time";
  let description = [{
    `size` bytes at `offset` in `file` hold the tensor, or with `stored_shape`
    and `box_offsets` a larger one this is a box of, with `stored_type` in
    another element type, with `repeat_blocks` its blocks repeated, with
    `part_offsets` read from equal parts (see graph.weight). A
    `dist.weight_shard` sharding says which block of it each rank holds: the
    buffer's type is that block's.
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$file, I64Attr:$offset, I64Attr:$size,
                       OptionalAttr<DenseI64ArrayAttr>:$stored_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$box_offsets,
                       OptionalAttr<TypeAttr>:$stored_type,
                       OptionalAttr<DenseI64ArrayAttr>:$repeat_blocks,
                       OptionalAttr<DenseI64ArrayAttr>:$part_offsets);
  let results = (outs Exec_Buffer:$buffer);
  let assemblyFormat = "$name attr-dict `:` type($buffer)";
}

def Exec_ConstantOp : Exec_Op<"constant", [Pure]> {
  let summary = "a tensor of the rank's weight file whose value the compiler computed";
  let arguments = (ins StrAttr:$name, ElementsAttr:$value);
  let results = (outs Exec_Buffer:$buffer);
  let assemblyFormat = "$name $value attr-dict `:` type($buffer)";
}

def Exec_AllocOp : Exec_Op<"alloc"> {
  let summary = "a slice of the rank's arena; `offset` is set by the memory plan";
  let arguments = (ins OptionalAttr<I64Attr>:$offset);
  let results = (outs Exec_Buffer:$buffer);
  let assemblyFormat = "attr-dict `:` type($buffer)";
}

def Exec_ViewOp : Exec_Op<"view", [Pure]> {
  let summary = "the same bytes seen with another shape (a reshape without a copy)";
  let arguments = (ins Exec_Buffer:$source);
  let results = (outs Exec_Buffer:$buffer);
  let assemblyFormat = "$source attr-dict `:` type($source) `to` type($buffer)";
  let hasVerifier = 1;
}

def Exec_KernelOp : Exec_Op<"kernel", [AttrSizedOperandSegments]> {
  let summary = "run the named kernel, reading `inputs` and writing `outputs`";
  let description = [{
    `params` are the kernel's parameters (the graph op's attributes); `source`
    names the ONNX node(s) the step computes, for profiles and reports. Fused
    elementwise kernels are named "fused" and carry their expression.
  }];
  let arguments = (ins StrAttr:$kernel, Variadic<Exec_Buffer>:$inputs,
                       Variadic<Exec_Buffer>:$outputs, DictionaryAttr:$params,
                       StrAttr:$source);
  let assemblyFormat = [{
    $kernel `(` $inputs `)` `->` `(` $outputs `)` $params attr-dict `:`
    functional-type($inputs, $outputs)
  }];
  let hasVerifier = 1;
}

def Exec_MicrobatchLoopEndOp : Exec_Op<"microbatch_loop_end"> {
  let summary = "the kernels before it run once per micro-batch, those after it once";
  let description = [{
    A training step run in micro-batches (docs/training.md): the runtime
    runs the steps before this op for each micro-batch (its inputs cut along
    their `microbatch_dim`), then the steps after it once. At most one, in
    the program's block. shardc-accumulate-microbatches places it in the
    partitioned graph program already (the lowering keeps it in place): it
    only orders, so it needs no graph op of its own.
  }];
  let arguments = (ins I64Attr:$microbatches);
  let assemblyFormat = "$microbatches attr-dict";
}

#endif // SHARDC_EXEC_OPS_TD
