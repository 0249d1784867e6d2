//===- CudaBackend.cpp - the CUDA kernels as the executor sees them -------===//
//
// Adapters from the executor's KernelCall to the CUDA entry points, one per
// kernel name of the CPU table (runtime/cpu/CpuBackend.cpp) with the same
// operand counts and parameter names and encodings. Each is registered
// twice: to run (on KernelCall::stream) and as the prepare-time check (the
// entry point's operand checks, no CUDA call), so a step the GPU cannot run
// fails when the program is prepared with the same line the CPU would give.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaBackend.h"

#include "runtime/cuda/Attention.h"
#include "runtime/cuda/Collectives.h"
#include "runtime/cuda/CudaDevice.h"
#include "runtime/cuda/Elementwise.h"
#include "runtime/cuda/Fused.h"
#include "runtime/cuda/Indexing.h"
#include "runtime/cuda/MatMul.h"
#include "runtime/cuda/Moe.h"
#include "runtime/cuda/Movement.h"
#include "runtime/cuda/Normalization.h"
#include "runtime/cuda/Reduction.h"

namespace shardc::rt::cuda {
namespace {

using kernels::BinaryOp;
using kernels::ReduceOp;
using kernels::UnaryOp;

using Entry = Status (*)(const KernelCall &call, const LaunchContext &context);

/// The generated kernels of the device the call runs on; none when the call
/// comes from elsewhere than a CudaDevice's executor (a test's direct call).
const GeneratedKernels *generatedOf(const KernelCall &call) {
  auto *device = dynamic_cast<const CudaDevice *>(call.device);
  return device ? device->generatedKernels() : nullptr;
}

template <Entry entry> Status runOnStream(const KernelCall &call) {
  if (!call.stream)
    return Status::error("no CUDA stream: CUDA kernels run on a stream of a CudaDevice");
  return entry(call,
               LaunchContext{static_cast<cudaStream_t>(call.stream), false, generatedOf(call)});
}

template <Entry entry> Status checkOnly(const KernelCall &call) {
  return entry(call, LaunchContext{nullptr, true, generatedOf(call)});
}

template <Entry entry> void add(KernelTable &table, const char *name) {
  table.add(name, runOnStream<entry>, checkOnly<entry>);
}

#define SHARDC_EXPECT(minInputs, maxInputs, outputs)                                               \
  do {                                                                                             \
    if (Status status = expectOperands(call, minInputs, maxInputs, outputs); !status)              \
      return status;                                                                               \
  } while (false)

template <UnaryOp op> Status unaryKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(1, 1, 1);
  return unary(op, call.inputs[0], call.outputs[0], context);
}

Status geluKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(1, 1, 1);
  const UnaryOp op =
      call.params.flag("approximate_tanh", false) ? UnaryOp::GeluTanh : UnaryOp::Gelu;
  return unary(op, call.inputs[0], call.outputs[0], context);
}

template <BinaryOp op> Status binaryKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(2, 2, 1);
  return binary(op, call.inputs[0], call.inputs[1], call.outputs[0], context);
}

/// graph.mod: `fmod` chooses the truncated remainder over the floored one.
Status modKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(2, 2, 1);
  const BinaryOp op = call.params.flag("fmod", false) ? BinaryOp::FMod : BinaryOp::Mod;
  return binary(op, call.inputs[0], call.inputs[1], call.outputs[0], context);
}

Status isNanKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(1, 1, 1);
  return isNaN(call.inputs[0], call.outputs[0], context);
}

Status isInfKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(1, 1, 1);
  return isInf(call.inputs[0], call.params.flag("detect_positive", true),
               call.params.flag("detect_negative", true), call.outputs[0], context);
}

Status compareKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(2, 2, 1);
  // graph.compare's predicate enum: eq, lt, le, gt, ge.
  static constexpr kernels::ComparePredicate predicates[] = {
      kernels::ComparePredicate::Eq, kernels::ComparePredicate::Lt, kernels::ComparePredicate::Le,
      kernels::ComparePredicate::Gt, kernels::ComparePredicate::Ge};
  const int64_t predicate = call.params.integer("predicate", -1);
  if (predicate < 0 || predicate > 4)
    return Status::error("compare: unknown predicate " + std::to_string(predicate));
  return compare(predicates[predicate], call.inputs[0], call.inputs[1], call.outputs[0], context);
}

Status whereKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(3, 3, 1);
  return where(call.inputs[0], call.inputs[1], call.inputs[2], call.outputs[0], context);
}

Status castKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(1, 1, 1);
  return cast(call.inputs[0], call.outputs[0], context);
}

Status matmulKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(2, 2, 1);
  // The compiler folds transposes into matmuls for the CPU target only.
  if (call.params.flag("transpose_lhs", false) || call.params.flag("transpose_rhs", false))
    return Status::error("matmul: transposed operands are not supported on cuda");
  return matmul(call.inputs[0], call.inputs[1], call.outputs[0], context);
}

Status linearKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(2, 3, 1);
  const TensorView *bias = call.inputs.size() > 2 ? &call.inputs[2] : nullptr;
  return linear(call.inputs[0], call.inputs[1], bias, call.params.flag("transpose_weight", false),
                call.outputs[0], context);
}

template <ReduceOp op> Status reduceKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(1, 1, 1);
  return reduce(op, call.inputs[0], call.params.ints("axes"), call.params.flag("keepdims", true),
                call.outputs[0], context);
}

Status cumSumKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(1, 1, 1);
  return cumSum(call.inputs[0], call.params.integer("axis", 0),
                call.params.flag("exclusive", false), call.params.flag("reverse", false),
                call.outputs[0], context);
}

Status softmaxKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(1, 1, 1);
  return softmax(call.inputs[0], call.params.integer("axis", -1), call.outputs[0], context);
}

Status topkKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(1, 1, 2);
  return topk(call.inputs[0], call.params.integer("k", 0), call.params.integer("axis", -1),
              call.params.flag("largest", true), call.params.flag("sorted", true), call.outputs[0],
              call.outputs[1], context);
}

Status transposeKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(1, 1, 1);
  return transpose(call.inputs[0], call.params.ints("perm"), call.outputs[0], context);
}

Status sliceKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(1, 1, 1);
  return slice(call.inputs[0], call.params.ints("starts"), call.params.ints("ends"),
               call.params.ints("steps"), call.outputs[0], context);
}

Status concatKernel(const KernelCall &call, const LaunchContext &context) {
  if (call.inputs.empty() || call.outputs.size() != 1)
    return Status::error("concat: expected inputs and one output");
  return concat(kernels::ViewList(call.inputs), call.params.integer("axis", 0), call.outputs[0],
                context);
}

Status splitKernel(const KernelCall &call, const LaunchContext &context) {
  if (call.inputs.size() != 1 || call.outputs.empty())
    return Status::error("split: expected one input and outputs");
  return split(call.inputs[0], call.params.integer("axis", 0), kernels::ViewList(call.outputs),
               context);
}

Status gatherKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(2, 2, 1);
  return gather(call.inputs[0], call.inputs[1], call.params.integer("axis", 0), call.outputs[0],
                context);
}

Status expandKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(1, 1, 1);
  return expand(call.inputs[0], call.outputs[0], context);
}

Status copyKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(1, 1, 1);
  return copy(call.inputs[0], call.outputs[0], context);
}

/// The graph dialect's ScatterReduction enum (none, add, mul, max, min) of
/// scatter_elements and scatter_nd.
Status scatterReduction(const char *op, const KernelCall &call,
                        kernels::ScatterReduction &reduction) {
  static constexpr kernels::ScatterReduction reductions[] = {
      kernels::ScatterReduction::None, kernels::ScatterReduction::Add,
      kernels::ScatterReduction::Mul, kernels::ScatterReduction::Max,
      kernels::ScatterReduction::Min};
  const int64_t value = call.params.integer("reduction", 0);
  if (value < 0 || value > 4)
    return Status::error(std::string(op) + ": unknown reduction " + std::to_string(value));
  reduction = reductions[value];
  return Status::success();
}

Status scatterElementsKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(3, 3, 1);
  kernels::ScatterReduction reduction;
  if (Status status = scatterReduction("scatter_elements", call, reduction); !status)
    return status;
  return scatterElements(call.inputs[0], call.inputs[1], call.inputs[2],
                         call.params.integer("axis", 0), reduction, call.outputs[0], context);
}

Status gatherElementsKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(2, 2, 1);
  return gatherElements(call.inputs[0], call.inputs[1], call.params.integer("axis", 0),
                        call.outputs[0], context);
}

Status gatherNdKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(2, 2, 1);
  return gatherND(call.inputs[0], call.inputs[1], call.params.integer("batch_dims", 0),
                  call.outputs[0], context);
}

Status scatterNdKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(3, 3, 1);
  kernels::ScatterReduction reduction;
  if (Status status = scatterReduction("scatter_nd", call, reduction); !status)
    return status;
  return scatterND(call.inputs[0], call.inputs[1], call.inputs[2], reduction, call.outputs[0],
                   context);
}

Status triluKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(1, 1, 1);
  return trilu(call.inputs[0], call.params.integer("k", 0), call.params.flag("upper", true),
               call.outputs[0], context);
}

Status layerNormKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(2, 3, 1);
  const TensorView *bias = call.inputs.size() > 2 ? &call.inputs[2] : nullptr;
  return layerNorm(call.inputs[0], call.inputs[1], bias, call.params.integer("axis", -1),
                   call.params.number("epsilon", 1e-5), call.outputs[0], context);
}

Status rmsNormKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(2, 2, 1);
  return rmsNorm(call.inputs[0], call.inputs[1], call.params.integer("axis", -1),
                 call.params.number("epsilon", 1e-5), call.outputs[0], context);
}

Status attentionKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(3, 4, 1);
  const TensorView *mask = call.inputs.size() > 3 ? &call.inputs[3] : nullptr;
  return attention(call.inputs[0], call.inputs[1], call.inputs[2], mask,
                   call.params.number("scale", 1.0), call.params.flag("causal", false),
                   call.outputs[0], context);
}

Status rotaryKernel(const KernelCall &call, const LaunchContext &context) {
  SHARDC_EXPECT(3, 3, 1);
  return rotary(call.inputs[0], call.inputs[1], call.inputs[2],
                call.params.flag("interleaved", false), call.outputs[0], context);
}

Status fusedKernel(const KernelCall &call, const LaunchContext &context) {
  if (call.outputs.size() != 1)
    return Status::error("fused: expected one output");
  // The compiler's shape-specialized code when the artifact has it; the
  // expression interpreter otherwise.
  if (call.params.has("cuda_kernel"))
    return launchGenerated(call.params.strings("cuda_kernel").at(0), kernels::ViewList(call.inputs),
                           call.outputs[0], context);
  return fused(kernels::ViewList(call.inputs), call.params.strings("ops"), call.params.ints("args"),
               call.outputs[0], context);
}

KernelTable makeTable() {
  KernelTable table;
  add<unaryKernel<UnaryOp::Neg>>(table, "neg");
  add<unaryKernel<UnaryOp::Abs>>(table, "abs");
  add<unaryKernel<UnaryOp::Sqrt>>(table, "sqrt");
  add<unaryKernel<UnaryOp::Rsqrt>>(table, "rsqrt");
  add<unaryKernel<UnaryOp::Reciprocal>>(table, "reciprocal");
  add<unaryKernel<UnaryOp::Exp>>(table, "exp");
  add<unaryKernel<UnaryOp::Log>>(table, "log");
  add<unaryKernel<UnaryOp::Cos>>(table, "cos");
  add<unaryKernel<UnaryOp::Sin>>(table, "sin");
  add<unaryKernel<UnaryOp::Erf>>(table, "erf");
  add<unaryKernel<UnaryOp::Tanh>>(table, "tanh");
  add<unaryKernel<UnaryOp::Sigmoid>>(table, "sigmoid");
  add<unaryKernel<UnaryOp::Relu>>(table, "relu");
  add<unaryKernel<UnaryOp::Silu>>(table, "silu");
  add<unaryKernel<UnaryOp::Not>>(table, "not");
  add<unaryKernel<UnaryOp::Floor>>(table, "floor");
  add<unaryKernel<UnaryOp::Ceil>>(table, "ceil");
  add<unaryKernel<UnaryOp::Round>>(table, "round");
  add<unaryKernel<UnaryOp::Sign>>(table, "sign");
  add<isNanKernel>(table, "is_nan");
  add<isInfKernel>(table, "is_inf");
  add<geluKernel>(table, "gelu");
  add<binaryKernel<BinaryOp::Add>>(table, "add");
  add<binaryKernel<BinaryOp::Sub>>(table, "sub");
  add<binaryKernel<BinaryOp::Mul>>(table, "mul");
  add<binaryKernel<BinaryOp::Div>>(table, "div");
  add<binaryKernel<BinaryOp::Pow>>(table, "pow");
  add<binaryKernel<BinaryOp::Max>>(table, "max");
  add<binaryKernel<BinaryOp::Min>>(table, "min");
  add<binaryKernel<BinaryOp::And>>(table, "and");
  add<binaryKernel<BinaryOp::Or>>(table, "or");
  add<modKernel>(table, "mod");
  add<compareKernel>(table, "compare");
  add<whereKernel>(table, "where");
  add<castKernel>(table, "cast");
  add<matmulKernel>(table, "matmul");
  add<linearKernel>(table, "linear");
  add<reduceKernel<ReduceOp::Sum>>(table, "reduce_sum");
  add<reduceKernel<ReduceOp::Mean>>(table, "reduce_mean");
  add<reduceKernel<ReduceOp::Max>>(table, "reduce_max");
  add<reduceKernel<ReduceOp::Min>>(table, "reduce_min");
  add<cumSumKernel>(table, "cumsum");
  add<softmaxKernel>(table, "softmax");
  add<topkKernel>(table, "topk");
  add<transposeKernel>(table, "transpose");
  add<sliceKernel>(table, "slice");
  add<concatKernel>(table, "concat");
  add<splitKernel>(table, "split");
  add<gatherKernel>(table, "gather");
  add<expandKernel>(table, "expand");
  add<copyKernel>(table, "copy");
  add<scatterElementsKernel>(table, "scatter_elements");
  add<gatherElementsKernel>(table, "gather_elements");
  add<gatherNdKernel>(table, "gather_nd");
  add<scatterNdKernel>(table, "scatter_nd");
  add<triluKernel>(table, "trilu");
  add<layerNormKernel>(table, "layer_norm");
  add<rmsNormKernel>(table, "rms_norm");
  add<attentionKernel>(table, "attention");
  add<rotaryKernel>(table, "rotary");
  add<fusedKernel>(table, "fused");
  add<moeDispatch>(table, "moe_dispatch");
  add<moeExperts>(table, "moe_experts");
  add<moeCombine>(table, "moe_combine");
  addCollectiveKernels(table);
  return table;
}

} // namespace

const KernelTable &kernelTable() {
  static const KernelTable table = makeTable();
  return table;
}

} // namespace shardc::rt::cuda
