//===- CpuBackend.cpp - the CPU kernels as the executor sees them ---------===//
//
// Adapters from the executor's uniform KernelCall (inputs, outputs, params by
// name) to the typed kernel functions. Parameter names and encodings are the
// graph ops' attributes (dialects/Graph/GraphOps.td) as the compiler
// serializes them: enums as their integer values, bools as 0/1.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CpuBackend.h"

#include "runtime/cpu/Attention.h"
#include "runtime/cpu/Collectives.h"
#include "runtime/cpu/Elementwise.h"
#include "runtime/cpu/Fused.h"
#include "runtime/cpu/Indexing.h"
#include "runtime/cpu/MatMul.h"
#include "runtime/cpu/Moe.h"
#include "runtime/cpu/Movement.h"
#include "runtime/cpu/Normalization.h"
#include "runtime/cpu/PackedLinear.h"
#include "runtime/cpu/Reduction.h"
#include "runtime/cpu/SharedPackedWeights.h"
#include "runtime/cpu/Threading.h"

#include <thread>

namespace shardc::rt::cpu {
namespace {

template <UnaryOp op> Status unaryKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 1, 1, 1); !status)
    return status;
  return unary(op, call.inputs[0], call.outputs[0]);
}

Status geluKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 1, 1, 1); !status)
    return status;
  UnaryOp op = call.params.flag("approximate_tanh", false) ? UnaryOp::GeluTanh : UnaryOp::Gelu;
  return unary(op, call.inputs[0], call.outputs[0]);
}

template <BinaryOp op> Status binaryKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 2, 2, 1); !status)
    return status;
  return binary(op, call.inputs[0], call.inputs[1], call.outputs[0]);
}

/// graph.mod: `fmod` chooses the truncated remainder over the floored one.
Status modKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 2, 2, 1); !status)
    return status;
  BinaryOp op = call.params.flag("fmod", false) ? BinaryOp::FMod : BinaryOp::Mod;
  return binary(op, call.inputs[0], call.inputs[1], call.outputs[0]);
}

Status isNanKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 1, 1, 1); !status)
    return status;
  return isNaN(call.inputs[0], call.outputs[0]);
}

Status isInfKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 1, 1, 1); !status)
    return status;
  return isInf(call.inputs[0], call.params.flag("detect_positive", true),
               call.params.flag("detect_negative", true), call.outputs[0]);
}

Status compareKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 2, 2, 1); !status)
    return status;
  // graph.compare's predicate enum: eq, lt, le, gt, ge.
  static constexpr ComparePredicate predicates[] = {ComparePredicate::Eq, ComparePredicate::Lt,
                                                    ComparePredicate::Le, ComparePredicate::Gt,
                                                    ComparePredicate::Ge};
  int64_t predicate = call.params.integer("predicate", -1);
  if (predicate < 0 || predicate > 4)
    return Status::error("compare: unknown predicate " + std::to_string(predicate));
  return compare(predicates[predicate], call.inputs[0], call.inputs[1], call.outputs[0]);
}

Status whereKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 3, 3, 1); !status)
    return status;
  return where(call.inputs[0], call.inputs[1], call.inputs[2], call.outputs[0]);
}

Status castKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 1, 1, 1); !status)
    return status;
  return cast(call.inputs[0], call.outputs[0]);
}

Status matmulKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 2, 2, 1); !status)
    return status;
  return matmul(call.inputs[0], call.inputs[1], call.outputs[0],
                call.params.flag("transpose_lhs", false), call.params.flag("transpose_rhs", false));
}

/// A linear step's operands past input and weight: its bias, if it has
/// one, then its epilogue's extra inputs (passes/Lowering/FuseLinearEpilogue).
struct LinearExtras {
  const TensorView *bias = nullptr;
  ViewList epilogueInputs{nullptr, 0};
};

StatusOr<LinearExtras> linearExtras(const KernelCall &call) {
  const int64_t extras = call.params.integer("epilogue_inputs", 0);
  if (extras < 0 || extras > int64_t(call.inputs.size()))
    return Status::error("linear: epilogue_inputs " + std::to_string(extras) + " is out of range");
  if (Status status = expectOperands(call, 2 + size_t(extras), 3 + size_t(extras), 1); !status)
    return status;
  if (extras > 0 && call.params.strings("epilogue_ops").empty())
    return Status::error("linear: epilogue inputs without epilogue_ops");
  const size_t own = call.inputs.size() - size_t(extras);
  return LinearExtras{own == 3 ? &call.inputs[2] : nullptr,
                      ViewList(call.inputs.data() + own, size_t(extras))};
}

Status linearKernel(const KernelCall &call) {
  auto extras = linearExtras(call);
  if (!extras)
    return extras.status();
  const TensorView &out = call.outputs[0];
  if (call.state)
    return static_cast<PackedLinear *>(call.state)->run(call.inputs[0], extras->bias, out,
                                                        extras->epilogueInputs);
  if (Status status = linear(call.inputs[0], call.inputs[1], extras->bias,
                             call.params.flag("transpose_weight", false), out);
      !status || !call.params.has("epilogue_ops"))
    return status;
  // The epilogue over the stored result, in place (fused reads each block
  // of its inputs before it writes that block).
  std::vector<TensorView> operands{out};
  operands.insert(operands.end(), extras->epilogueInputs.begin(), extras->epilogueInputs.end());
  return fused(operands, call.params.strings("epilogue_ops"), call.params.ints("epilogue_args"),
               out);
}

/// A constant fp32 weight is packed once for the step (PackedLinear.h).
StatusOr<std::unique_ptr<KernelState>> prepareLinear(const KernelCall &call,
                                                     const std::vector<PrepareInput> &inputs) {
  auto extras = linearExtras(call);
  if (!extras)
    return extras.status();
  LinearEpilogue epilogue{call.params.strings("epilogue_ops"), call.params.ints("epilogue_args")};
  auto packed = PackedLinear::prepare(call.inputs[0], call.inputs[1], extras->bias,
                                      call.params.flag("transpose_weight", false),
                                      call.outputs[0], inputs.at(1).constant, epilogue,
                                      extras->epilogueInputs, inputs.at(1).hold);
  if (!packed)
    return packed.status();
  return std::unique_ptr<KernelState>(std::move(*packed));
}

template <ReduceOp op> Status reduceKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 1, 1, 1); !status)
    return status;
  return reduce(op, call.inputs[0], call.params.ints("axes"), call.params.flag("keepdims", true),
                call.outputs[0]);
}

Status cumSumKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 1, 1, 1); !status)
    return status;
  return cumSum(call.inputs[0], call.params.integer("axis", 0),
                call.params.flag("exclusive", false), call.params.flag("reverse", false),
                call.outputs[0]);
}

Status softmaxKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 1, 1, 1); !status)
    return status;
  return softmax(call.inputs[0], call.params.integer("axis", -1), call.outputs[0]);
}

Status topkKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 1, 1, 2); !status)
    return status;
  return topk(call.inputs[0], call.params.integer("k", 0), call.params.integer("axis", -1),
              call.params.flag("largest", true), call.params.flag("sorted", true), call.outputs[0],
              call.outputs[1]);
}

Status transposeKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 1, 1, 1); !status)
    return status;
  return transpose(call.inputs[0], call.params.ints("perm"), call.outputs[0]);
}

Status sliceKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 1, 1, 1); !status)
    return status;
  return slice(call.inputs[0], call.params.ints("starts"), call.params.ints("ends"),
               call.params.ints("steps"), call.outputs[0]);
}

Status concatKernel(const KernelCall &call) {
  if (call.inputs.empty() || call.outputs.size() != 1)
    return Status::error("concat: expected inputs and one output");
  return concat(ViewList(call.inputs), call.params.integer("axis", 0), call.outputs[0]);
}

Status splitKernel(const KernelCall &call) {
  if (call.inputs.size() != 1 || call.outputs.empty())
    return Status::error("split: expected one input and outputs");
  return split(call.inputs[0], call.params.integer("axis", 0), ViewList(call.outputs));
}

Status gatherKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 2, 2, 1); !status)
    return status;
  return gather(call.inputs[0], call.inputs[1], call.params.integer("axis", 0), call.outputs[0]);
}

Status expandKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 1, 1, 1); !status)
    return status;
  return expand(call.inputs[0], call.outputs[0]);
}

Status copyKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 1, 1, 1); !status)
    return status;
  return copy(call.inputs[0], call.outputs[0]);
}

/// The graph dialect's ScatterReduction enum (none, add, mul, max, min) of
/// scatter_elements and scatter_nd.
Status scatterReduction(const char *op, const KernelCall &call, ScatterReduction &reduction) {
  static constexpr ScatterReduction reductions[] = {ScatterReduction::None, ScatterReduction::Add,
                                                    ScatterReduction::Mul, ScatterReduction::Max,
                                                    ScatterReduction::Min};
  int64_t value = call.params.integer("reduction", 0);
  if (value < 0 || value > 4)
    return Status::error(std::string(op) + ": unknown reduction " + std::to_string(value));
  reduction = reductions[value];
  return Status::success();
}

Status scatterElementsKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 3, 3, 1); !status)
    return status;
  ScatterReduction reduction;
  if (Status status = scatterReduction("scatter_elements", call, reduction); !status)
    return status;
  return scatterElements(call.inputs[0], call.inputs[1], call.inputs[2],
                         call.params.integer("axis", 0), reduction, call.outputs[0]);
}

Status gatherElementsKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 2, 2, 1); !status)
    return status;
  return gatherElements(call.inputs[0], call.inputs[1], call.params.integer("axis", 0),
                        call.outputs[0]);
}

Status gatherNdKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 2, 2, 1); !status)
    return status;
  return gatherND(call.inputs[0], call.inputs[1], call.params.integer("batch_dims", 0),
                  call.outputs[0]);
}

Status scatterNdKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 3, 3, 1); !status)
    return status;
  ScatterReduction reduction;
  if (Status status = scatterReduction("scatter_nd", call, reduction); !status)
    return status;
  return scatterND(call.inputs[0], call.inputs[1], call.inputs[2], reduction, call.outputs[0]);
}

Status triluKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 1, 1, 1); !status)
    return status;
  return trilu(call.inputs[0], call.params.integer("k", 0), call.params.flag("upper", true),
               call.outputs[0]);
}

Status layerNormKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 2, 3, 1); !status)
    return status;
  const TensorView *bias = call.inputs.size() > 2 ? &call.inputs[2] : nullptr;
  return layerNorm(call.inputs[0], call.inputs[1], bias, call.params.integer("axis", -1),
                   call.params.number("epsilon", 1e-5), call.outputs[0]);
}

Status rmsNormKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 2, 2, 1); !status)
    return status;
  return rmsNorm(call.inputs[0], call.inputs[1], call.params.integer("axis", -1),
                 call.params.number("epsilon", 1e-5), call.outputs[0]);
}

Status attentionKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 3, 4, 1); !status)
    return status;
  const TensorView *mask = call.inputs.size() > 3 ? &call.inputs[3] : nullptr;
  return attention(call.inputs[0], call.inputs[1], call.inputs[2], mask,
                   call.params.number("scale", 1.0), call.params.flag("causal", false),
                   call.outputs[0]);
}

Status rotaryKernel(const KernelCall &call) {
  if (Status status = expectOperands(call, 3, 3, 1); !status)
    return status;
  return rotary(call.inputs[0], call.inputs[1], call.inputs[2],
                call.params.flag("interleaved", false), call.outputs[0]);
}

Status fusedKernel(const KernelCall &call) {
  if (call.outputs.size() != 1)
    return Status::error("fused: expected one output");
  return fused(ViewList(call.inputs), call.params.strings("ops"), call.params.ints("args"),
               call.outputs[0]);
}

KernelTable makeTable() {
  KernelTable table;
  table.add("neg", unaryKernel<UnaryOp::Neg>);
  table.add("abs", unaryKernel<UnaryOp::Abs>);
  table.add("sqrt", unaryKernel<UnaryOp::Sqrt>);
  table.add("rsqrt", unaryKernel<UnaryOp::Rsqrt>);
  table.add("reciprocal", unaryKernel<UnaryOp::Reciprocal>);
  table.add("exp", unaryKernel<UnaryOp::Exp>);
  table.add("log", unaryKernel<UnaryOp::Log>);
  table.add("cos", unaryKernel<UnaryOp::Cos>);
  table.add("sin", unaryKernel<UnaryOp::Sin>);
  table.add("erf", unaryKernel<UnaryOp::Erf>);
  table.add("tanh", unaryKernel<UnaryOp::Tanh>);
  table.add("sigmoid", unaryKernel<UnaryOp::Sigmoid>);
  table.add("relu", unaryKernel<UnaryOp::Relu>);
  table.add("silu", unaryKernel<UnaryOp::Silu>);
  table.add("not", unaryKernel<UnaryOp::Not>);
  table.add("floor", unaryKernel<UnaryOp::Floor>);
  table.add("ceil", unaryKernel<UnaryOp::Ceil>);
  table.add("round", unaryKernel<UnaryOp::Round>);
  table.add("sign", unaryKernel<UnaryOp::Sign>);
  table.add("is_nan", isNanKernel);
  table.add("is_inf", isInfKernel);
  table.add("gelu", geluKernel);
  table.add("add", binaryKernel<BinaryOp::Add>);
  table.add("sub", binaryKernel<BinaryOp::Sub>);
  table.add("mul", binaryKernel<BinaryOp::Mul>);
  table.add("div", binaryKernel<BinaryOp::Div>);
  table.add("pow", binaryKernel<BinaryOp::Pow>);
  table.add("max", binaryKernel<BinaryOp::Max>);
  table.add("min", binaryKernel<BinaryOp::Min>);
  table.add("and", binaryKernel<BinaryOp::And>);
  table.add("or", binaryKernel<BinaryOp::Or>);
  table.add("mod", modKernel);
  table.add("compare", compareKernel);
  table.add("where", whereKernel);
  table.add("cast", castKernel);
  table.add("matmul", matmulKernel);
  table.add("linear", linearKernel, nullptr, prepareLinear);
  table.add("reduce_sum", reduceKernel<ReduceOp::Sum>);
  table.add("reduce_mean", reduceKernel<ReduceOp::Mean>);
  table.add("reduce_max", reduceKernel<ReduceOp::Max>);
  table.add("reduce_min", reduceKernel<ReduceOp::Min>);
  table.add("cumsum", cumSumKernel);
  table.add("softmax", softmaxKernel);
  table.add("topk", topkKernel);
  table.add("transpose", transposeKernel);
  table.add("slice", sliceKernel);
  table.add("concat", concatKernel);
  table.add("split", splitKernel);
  table.add("gather", gatherKernel);
  table.add("expand", expandKernel);
  table.add("copy", copyKernel);
  table.add("scatter_elements", scatterElementsKernel);
  table.add("gather_elements", gatherElementsKernel);
  table.add("gather_nd", gatherNdKernel);
  table.add("scatter_nd", scatterNdKernel);
  table.add("trilu", triluKernel);
  table.add("layer_norm", layerNormKernel);
  table.add("rms_norm", rmsNormKernel);
  table.add("attention", attentionKernel);
  table.add("rotary", rotaryKernel);
  table.add("fused", fusedKernel);
  addCollectiveKernels(table);
  addMoeKernels(table);
  return table;
}

} // namespace

const KernelTable &kernelTable() {
  static const KernelTable table = makeTable();
  return table;
}

void setThreads(int count) {
  setNumThreads(count > 0 ? count
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

int threads() { return numThreads(); }

size_t peakPackedWeightBytes() { return livePackedBlocks().peakBytes; }

} // namespace shardc::rt::cpu
