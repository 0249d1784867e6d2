//===- GraphOps.td - operations of the graph dialect ------------------------===//
//
// Conventions: axes are non-negative and attributes fully normalized (the
// importer resolves ONNX's negative axes, defaults and clamping), so passes
// never re-derive them. Result types are inferred wherever the operands and
// attributes determine them; reshape, expand and cast carry theirs.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_GRAPH_OPS_TD
#define SHARDC_GRAPH_OPS_TD

include "dialects/Graph/GraphBase.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

//===----------------------------------------------------------------------===//
// Sources: constants and weights
//===----------------------------------------------------------------------===//

def Graph_ConstantOp : Graph_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "a tensor whose value is known at compile time";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Graph_WeightOp : Graph_Op<"weight", [Pure]> {
  let summary = "a reference to a tensor's bytes in a file";
  let description = [{
    Names the little-endian raw bytes of a weight: `size` bytes at `offset` in
    `file`, with the dtype and shape of the result type. The bytes are read only
    by the phases that need them, so a model whose external data is absent can
    still be imported and planned.

    With `stored_shape` and `box_offsets`, the bytes hold a larger tensor of
    `stored_shape` and the result is its box of the result's shape at
    `box_offsets` (one part of a fused projection, cut at compile time).
    With `stored_type`, the bytes hold that element type and are converted to
    the result's when the artifact is written (--dtype bf16 on an fp32 model).
    With `repeat_blocks = [axis, block, times]` (and a box), along `axis`
    each run of `block` elements of the box is repeated `times` times: the
    key/value heads a grouped-query projection shares between tensor-parallel
    ranks, each rank holding its copy (Megatron-LM's kv-head replication).
    With `part_offsets`, the `size` bytes are not one range but equal parts
    at those offsets, in order: the experts' weights of a MoE layer stacked
    along a leading dim (`offset` is the first part's).
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$file, I64Attr:$offset, I64Attr:$size,
                       OptionalAttr<DenseI64ArrayAttr>:$stored_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$box_offsets,
                       OptionalAttr<TypeAttr>:$stored_type,
                       OptionalAttr<DenseI64ArrayAttr>:$repeat_blocks,
                       OptionalAttr<DenseI64ArrayAttr>:$part_offsets);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Graph_AssignOp : Graph_Op<"assign",
    [MemoryEffects<[MemWrite]>, AllTypesMatch<["target", "value"]>]> {
  let summary = "write a trained weight's or an optimizer state's value for the next step";
  let description = [{
    `target` is a graph.weight marked `graph.train` (a parameter or an
    optimizer state, docs/training.md): its storage lives across steps, and
    this op gives it `value`, of the same type, once the step's reads of it
    are done. The only op that writes memory; a training step ends with one
    per parameter and state.
  }];
  let arguments = (ins Graph_Tensor:$target, Graph_Tensor:$value);
  let assemblyFormat = "$target `,` $value attr-dict `:` type($target)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Graph_UnaryOp<string mnemonic, Type tensorType, list<Trait> traits = []>
    : Graph_Op<mnemonic, [Pure, InferTypeOpAdaptor] # traits> {
  let arguments = (ins tensorType:$input);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
}

def Graph_NegOp : Graph_UnaryOp<"neg", Graph_Tensor> { let summary = "-x"; }
def Graph_AbsOp : Graph_UnaryOp<"abs", Graph_Tensor> { let summary = "|x|"; }
def Graph_SqrtOp : Graph_UnaryOp<"sqrt", Graph_FloatTensor> { let summary = "square root"; }
def Graph_RsqrtOp : Graph_UnaryOp<"rsqrt", Graph_FloatTensor> { let summary = "1 / sqrt(x)"; }
def Graph_ReciprocalOp : Graph_UnaryOp<"reciprocal", Graph_FloatTensor> { let summary = "1 / x"; }
def Graph_ExpOp : Graph_UnaryOp<"exp", Graph_FloatTensor> { let summary = "e^x"; }
def Graph_LogOp : Graph_UnaryOp<"log", Graph_FloatTensor> { let summary = "natural logarithm"; }
def Graph_CosOp : Graph_UnaryOp<"cos", Graph_FloatTensor> { let summary = "cosine"; }
def Graph_SinOp : Graph_UnaryOp<"sin", Graph_FloatTensor> { let summary = "sine"; }
def Graph_ErfOp : Graph_UnaryOp<"erf", Graph_FloatTensor> { let summary = "error function"; }
def Graph_TanhOp : Graph_UnaryOp<"tanh", Graph_FloatTensor> { let summary = "hyperbolic tangent"; }
def Graph_SigmoidOp : Graph_UnaryOp<"sigmoid", Graph_FloatTensor> { let summary = "1 / (1 + e^-x)"; }
def Graph_ReluOp : Graph_UnaryOp<"relu", Graph_Tensor> { let summary = "max(x, 0)"; }
def Graph_SiluOp : Graph_UnaryOp<"silu", Graph_FloatTensor> { let summary = "x * sigmoid(x)"; }
def Graph_NotOp : Graph_UnaryOp<"not", Graph_BoolTensor> { let summary = "logical not"; }
def Graph_FloorOp : Graph_UnaryOp<"floor", Graph_FloatTensor> { let summary = "largest whole number <= x"; }
def Graph_CeilOp : Graph_UnaryOp<"ceil", Graph_FloatTensor> { let summary = "smallest whole number >= x"; }
def Graph_RoundOp : Graph_UnaryOp<"round", Graph_FloatTensor> {
  let summary = "nearest whole number, halves to even (ONNX Round)";
}
def Graph_SignOp : Graph_UnaryOp<"sign", Graph_NumberTensor> {
  let summary = "-1, 0 or 1 by the sign of x; NaN stays NaN";
}

def Graph_IsNanOp : Graph_Op<"is_nan", [Pure, InferTypeOpAdaptor]> {
  let summary = "true where x is NaN";
  let arguments = (ins Graph_FloatTensor:$input);
  let results = (outs Graph_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_IsInfOp : Graph_Op<"is_inf", [Pure, InferTypeOpAdaptor]> {
  let summary = "true where x is +inf (detect_positive) or -inf (detect_negative)";
  let arguments = (ins Graph_FloatTensor:$input,
                       DefaultValuedAttr<BoolAttr, "true">:$detect_positive,
                       DefaultValuedAttr<BoolAttr, "true">:$detect_negative);
  let results = (outs Graph_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_GeluOp : Graph_Op<"gelu", [Pure, InferTypeOpAdaptor]> {
  let summary = "Gaussian error linear unit, exact (erf) or tanh-approximated";
  let arguments = (ins Graph_FloatTensor:$input,
                       DefaultValuedAttr<BoolAttr, "false">:$approximate_tanh);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
}

// Binary ops broadcast numpy-style (ONNX multidirectional broadcasting).
class Graph_BinaryOp<string mnemonic, Type tensorType, list<Trait> traits = []>
    : Graph_Op<mnemonic, [Pure, InferTypeOpAdaptor] # traits> {
  let arguments = (ins tensorType:$lhs, tensorType:$rhs);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_AddOp : Graph_BinaryOp<"add", Graph_Tensor, [Commutative]> { let summary = "a + b"; }
def Graph_SubOp : Graph_BinaryOp<"sub", Graph_Tensor> { let summary = "a - b"; }
def Graph_MulOp : Graph_BinaryOp<"mul", Graph_Tensor, [Commutative]> { let summary = "a * b"; }
def Graph_DivOp : Graph_BinaryOp<"div", Graph_Tensor> {
  let summary = "a / b, truncating toward zero for integers";
}
def Graph_MaxOp : Graph_BinaryOp<"max", Graph_Tensor, [Commutative]> { let summary = "max(a, b)"; }
def Graph_MinOp : Graph_BinaryOp<"min", Graph_Tensor, [Commutative]> { let summary = "min(a, b)"; }
def Graph_AndOp : Graph_BinaryOp<"and", Graph_BoolTensor, [Commutative]> { let summary = "logical and"; }
def Graph_OrOp : Graph_BinaryOp<"or", Graph_BoolTensor, [Commutative]> { let summary = "logical or"; }

def Graph_PowOp : Graph_Op<"pow", [Pure, InferTypeOpAdaptor]> {
  let summary = "a ^ b; the exponent may have another element type";
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_ModOp : Graph_Op<"mod", [Pure, InferTypeOpAdaptor]> {
  let summary = "remainder of a / b: floored (sign of b) or, with `fmod`, truncated (sign of a)";
  let description = [{
    Without `fmod` the quotient is floored, like Python's `%` (ONNX Mod's
    fmod=0, which opsets before 28 allow only for integers); with `fmod` it
    is truncated, like C's fmod and `%` (fmod=1). An integer remainder by 0
    is an error.
  }];
  let arguments = (ins Graph_NumberTensor:$lhs, Graph_NumberTensor:$rhs,
                       DefaultValuedAttr<BoolAttr, "false">:$fmod);
  let results = (outs Graph_NumberTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_CompareOp : Graph_Op<"compare", [Pure, InferTypeOpAdaptor]> {
  let summary = "elementwise comparison giving a boolean tensor";
  let arguments = (ins Graph_ComparePredicate:$predicate, Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_BoolTensor:$result);
  let assemblyFormat = "$predicate `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_WhereOp : Graph_Op<"where", [Pure, InferTypeOpAdaptor]> {
  let summary = "select between two tensors by a boolean condition, broadcasting";
  let arguments = (ins Graph_BoolTensor:$condition, Graph_Tensor:$true_value,
                       Graph_Tensor:$false_value);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$condition `,` $true_value `,` $false_value attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_CastOp : Graph_Op<"cast", [Pure]> {
  let summary = "convert elements to the result's element type";
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Contractions and reductions
//===----------------------------------------------------------------------===//

def Graph_MatMulOp : Graph_Op<"matmul", [Pure, InferTypeOpAdaptor]> {
  let summary = "numpy matmul: batched, broadcasting batch dims, 1-D operands promoted";
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

class Graph_ReduceOp<string mnemonic> : Graph_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$axes, BoolAttr:$keepdims);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_ReduceSumOp : Graph_ReduceOp<"reduce_sum"> { let summary = "sum over axes"; }
def Graph_ReduceMeanOp : Graph_ReduceOp<"reduce_mean"> { let summary = "mean over axes"; }
def Graph_ReduceMaxOp : Graph_ReduceOp<"reduce_max"> { let summary = "maximum over axes"; }
def Graph_ReduceMinOp : Graph_ReduceOp<"reduce_min"> { let summary = "minimum over axes"; }

def Graph_SoftmaxOp : Graph_Op<"softmax", [Pure, InferTypeOpAdaptor]> {
  let summary = "softmax along one axis";
  let arguments = (ins Graph_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
}

def Graph_CumSumOp : Graph_Op<"cumsum", [Pure, InferTypeOpAdaptor]> {
  let summary = "running sum along an axis";
  let description = [{
    result[..., j, ...] is the sum of input[..., i, ...] over i <= j along
    `axis` (i < j with `exclusive`); with `reverse` the sums run from the end
    of the axis (i >= j, or i > j). Integers wrap; floats are summed in the
    order of the scan.
  }];
  let arguments = (ins StaticShapeTensorOf<[Graph_Float, I32, I64]>:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                       DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs StaticShapeTensorOf<[Graph_Float, I32, I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
}

def Graph_TopKOp : Graph_Op<"topk", [Pure, InferTypeOpAdaptor]> {
  let summary = "the k largest (or smallest) elements along an axis and their indices";
  let arguments = (ins Graph_Tensor:$input, I64Attr:$k, I64Attr:$axis, BoolAttr:$largest,
                       BoolAttr:$sorted);
  let results = (outs Graph_Tensor:$values, StaticShapeTensorOf<[I64]>:$indices);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Graph_ReshapeOp : Graph_Op<"reshape", [Pure]> {
  let summary = "reinterpret a tensor with another shape of the same element count";
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_TransposeOp : Graph_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "permute dimensions: result dim i is input dim perm[i]";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_SliceOp : Graph_Op<"slice", [Pure, InferTypeOpAdaptor]> {
  let summary = "strided slice with one normalized start, end and step per dim";
  let description = [{
    For each dim, elements start, start+step, ... while before `end` (exclusive).
    Starts are in range; ends are in [-1, size]; steps are non-zero.
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_ConcatOp : Graph_Op<"concat", [Pure, InferTypeOpAdaptor]> {
  let summary = "join tensors along an axis";
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_SplitOp : Graph_Op<"split", [Pure, InferTypeOpAdaptor]> {
  let summary = "cut a tensor along an axis into pieces of the given sizes";
  let arguments = (ins Graph_Tensor:$input, I64Attr:$axis, DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<Graph_Tensor>:$results);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_GatherOp : Graph_Op<"gather", [Pure, InferTypeOpAdaptor]> {
  let summary = "take slices along an axis by index (embedding lookup)";
  let description = [{ Negative indices count from the end of the axis. }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_ExpandOp : Graph_Op<"expand", [Pure]> {
  let summary = "broadcast a tensor to the result's shape";
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_ScatterElementsOp : Graph_Op<"scatter_elements", [Pure, InferTypeOpAdaptor]> {
  let summary = "write updates into a copy of data at per-element indices along an axis";
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices, Graph_Tensor:$updates,
                       I64Attr:$axis, Graph_ScatterReduction:$reduction);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_GatherElementsOp : Graph_Op<"gather_elements", [Pure, InferTypeOpAdaptor]> {
  let summary = "take one element per index along an axis (torch.gather)";
  let description = [{
    result[p] = data[p with p[axis] replaced by indices[p]]: the result has
    the indices' shape, which has data's rank and is no larger than data in
    any dim but `axis`. Negative indices count from the end of the axis.
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_GatherNdOp : Graph_Op<"gather_nd", [Pure, InferTypeOpAdaptor]> {
  let summary = "take slices of data at index tuples (ONNX GatherND)";
  let description = [{
    indices [B..., N..., k] with B the `batch_dims` leading dims, shared with
    data [B..., D...]: each k-tuple indexes the first k dims of D within its
    batch, and the result [B..., N..., D[k:]...] holds the slices it names.
    1 <= k <= rank(data) - batch_dims; negative indices count from the end.
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_ScatterNdOp : Graph_Op<"scatter_nd", [Pure, InferTypeOpAdaptor]> {
  let summary = "write slices of updates into a copy of data at index tuples (ONNX ScatterND)";
  let description = [{
    indices [N..., k] holds k-tuples into data's first k dims; updates
    [N..., data[k:]...] the slices. Tuples are applied in row-major order, so
    with reduction none a repeated target takes the last slice (ONNX leaves
    that undefined); the reductions combine in the element type. Negative
    indices count from the end.
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices, Graph_Tensor:$updates,
                       Graph_ScatterReduction:$reduction);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_NonZeroOp : Graph_Op<"nonzero", [Pure, InferTypeOpAdaptor]> {
  let summary = "ONNX NonZero with room for every element: coordinates of a selection";
  let description = [{
    The coordinates [rank, n] of the nonzero elements of `input`, in
    row-major order, where n is the input's element count: ONNX's result
    has one column per nonzero element, a number known only at run time.
    No phase after import accepts this op: shardc-densify-selections
    replaces it by every coordinate and masks the unselected ones where
    the entries are scattered back (MoE routing), or rejects the model.
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs StaticShapeTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Graph_TriluOp : Graph_Op<"trilu", [Pure, InferTypeOpAdaptor]> {
  let summary = "keep the upper or lower triangle (offset k) of the last two dims";
  let arguments = (ins Graph_Tensor:$input, I64Attr:$k, BoolAttr:$upper);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Composite ops found by raising (or imported from ONNX's own composites)
//===----------------------------------------------------------------------===//

def Graph_LinearOp : Graph_Op<"linear", [Pure, InferTypeOpAdaptor]> {
  let summary = "input @ weight (+ bias): a fully connected layer";
  let description = [{
    input [..., K]; weight [K, N], or [N, K] with `transpose_weight`; bias [N].
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$weight,
                       Optional<Graph_FloatTensor>:$bias,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_weight);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
}

def Graph_LayerNormOp : Graph_Op<"layer_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "normalize over dims [axis, rank) to zero mean and unit variance, then scale and shift";
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale,
                       Optional<Graph_FloatTensor>:$bias, I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
}

def Graph_RmsNormOp : Graph_Op<"rms_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "x / sqrt(mean(x^2 over dims [axis, rank)) + epsilon) * scale";
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale, I64Attr:$axis,
                       F64Attr:$epsilon);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input `,` $scale attr-dict `:` functional-type(operands, results)";
}

def Graph_AttentionOp : Graph_Op<"attention", [Pure, InferTypeOpAdaptor]> {
  let summary = "scaled dot-product attention, multi-head, grouped-query or cross";
  let description = [{
    query [B..., Hq, Sq, D], key [B..., Hkv, Sk, D], value [B..., Hkv, Sk, Dv]
    with Hq a multiple of Hkv (query head h reads key/value head h / (Hq/Hkv)).
    result [B..., Hq, Sq, Dv] = softmax(scale * q k^T + mask) v. A boolean
    mask keeps `true` positions; a float mask is added to the scores. Both
    broadcast to [B..., Hq, Sq, Sk]. `causal` also hides key j > i + Sk - Sq
    for query i: aligned at the bottom right, so the last query sees every key
    (with Sq == Sk the usual lower triangle; with a KV cache, offset by it).
  }];
  let arguments = (ins Graph_FloatTensor:$query, Graph_FloatTensor:$key,
                       Graph_FloatTensor:$value, Optional<Graph_Tensor>:$mask,
                       F64Attr:$scale, DefaultValuedAttr<BoolAttr, "false">:$causal);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$query `,` $key `,` $value (`,` $mask^)? attr-dict `:` functional-type(operands, results)";
}

def Graph_RotaryOp : Graph_Op<"rotary", [Pure, InferTypeOpAdaptor]> {
  let summary = "rotary position embedding of the first R features of the last dim";
  let description = [{
    cos and sin have last dim R (even, at most the input's) and broadcast against
    the input's other dims. Pairs are (i, i + R/2) or, with `interleaved`,
    (2i, 2i + 1); element i of a pair-rotation uses cos[i], sin[i]:
    out[i] = x[i] cos[i] - x[partner] sin[i] for the first of a pair and
    x[i] cos[i] + x[partner] sin[i] for the second. Features past R pass through.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$cos,
                       Graph_FloatTensor:$sin, DefaultValuedAttr<BoolAttr, "false">:$interleaved);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input `,` $cos `,` $sin attr-dict `:` functional-type(operands, results)";
}

def Graph_MoeOp : Graph_Op<"moe", [Pure, InferTypeOpAdaptor]> {
  let summary = "routed experts: every token through its chosen experts, gate-weighted and summed";
  let description = [{
    y[t] = sum over j of gates[t, j] * expert_{indices[t, j]}(input[t]), with
    input [T, H], indices [T, k] (distinct experts per token) and gates
    [T, k] from the router (which stays ordinary ops). Each expert is an MLP
    whose weights are stacked along a leading expert dim: `weights` are
    (gate, up, down) for a gated MLP, down(act(x W_gate) * (x W_up)), or
    (up, down) for down(act(x W_up)); gate and up [E, H, F], down [E, F, H],
    or "out x in" ([E, F, H] and [E, H, F]) with `transpose_weights`.
    `activation`: silu, gelu, gelu_tanh or relu. `experts` is the number of
    experts of the whole model (the weights' leading dim until they are
    partitioned). `capacity`: entries per expert kept, 0 for all (dropless);
    which ones are kept is docs/experts.md's rule. After partitioning,
    `expert_axes` are the mesh axes the experts are split over and `exchange`
    says whether the tokens are split over them too (entries travel to their
    expert's devices and back) or whole (the result is a partial sum).
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_IndexTensor:$indices,
                       Graph_FloatTensor:$gates, Variadic<Graph_FloatTensor>:$weights,
                       I64Attr:$experts, StrAttr:$activation,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_weights,
                       DefaultValuedAttr<I64Attr, "0">:$capacity,
                       OptionalAttr<StrArrayAttr>:$expert_axes,
                       DefaultValuedAttr<BoolAttr, "false">:$exchange);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $indices `,` $gates `,` `experts` `(` $weights `)` attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// Whether the experts are gated MLPs (three weights each).
    bool isGated() { return getWeights().size() == 3; }
    mlir::Value getDownWeight() { return getWeights().back(); }
  }];
}

def Graph_CompositeOp : Graph_Op<"composite",
    [IsolatedFromAbove, SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "a named group of ops recognized as one unit (mlp, moe)";
  let description = [{
    The body computes the results from the block arguments (bound to the
    operands); the group is the unit later passes shard and schedule as a whole.
    Inlining the body gives the same semantics.
  }];
  let arguments = (ins StrAttr:$kind, Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$kind `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body";
  let hasVerifier = 1;
}

def Graph_YieldOp : Graph_Op<"yield", [Pure, Terminator, HasParent<"CompositeOp">]> {
  let summary = "the results of a composite's body";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ /* empty yield */ }]>];
}

#endif // SHARDC_GRAPH_OPS_TD
