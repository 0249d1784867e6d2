//===- GenerateCudaKernels.cpp - CUDA C++ for fused elementwise steps -----===//
#include "passes/Lowering/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace shardc::lowering {
#define GEN_PASS_DEF_GENERATECUDAKERNELSPASS
#include "passes/Lowering/Passes.h.inc"
} // namespace shardc::lowering

namespace shardc::lowering {
namespace {

/// The CUDA expression of one step of a fused expression; `a`, `b` its
/// operands. Matches runtime/cpu/Fused.cpp (NaN-propagating max/min, GELU
/// by erf or tanh, rounding halves to even, floored or truncated mod).
std::optional<std::string> expression(StringRef op, StringRef a, StringRef b) {
  auto two = [&](const char *format) { return llvm::formatv(format, a, b).str(); };
  return llvm::StringSwitch<std::optional<std::string>>(op)
      .Case("add", two("{0} + {1}"))
      .Case("sub", two("{0} - {1}"))
      .Case("mul", two("{0} * {1}"))
      .Case("div", two("{0} / {1}"))
      .Case("pow", two("powf({0}, {1})"))
      .Case("max", two("(isnan({0}) || {0} > {1}) ? {0} : {1}"))
      .Case("min", two("(isnan({0}) || {0} < {1}) ? {0} : {1}"))
      // Python's %: the truncated remainder moved into the divisor's sign (a
      // zero takes it too); nvcc computes the repeated fmodf once.
      .Case("mod",
            two("(fmodf({0}, {1}) == 0.0f ? copysignf(0.0f, {1}) : (fmodf({0}, {1}) < 0.0f) != "
                "({1} < 0.0f) ? fmodf({0}, {1}) + {1} : fmodf({0}, {1}))"))
      .Case("fmod", two("fmodf({0}, {1})"))
      .Case("neg", two("-{0}"))
      .Case("abs", two("fabsf({0})"))
      .Case("sqrt", two("sqrtf({0})"))
      .Case("rsqrt", two("1.0f / sqrtf({0})"))
      .Case("reciprocal", two("1.0f / {0}"))
      .Case("exp", two("expf({0})"))
      .Case("log", two("logf({0})"))
      .Case("cos", two("cosf({0})"))
      .Case("sin", two("sinf({0})"))
      .Case("erf", two("erff({0})"))
      .Case("tanh", two("tanhf({0})"))
      .Case("sigmoid", two("1.0f / (1.0f + expf(-{0}))"))
      .Case("relu", two("{0} < 0.0f ? 0.0f : {0}"))
      .Case("floor", two("floorf({0})"))
      .Case("ceil", two("ceilf({0})"))
      .Case("round", two("rintf({0})"))
      .Case("sign", two("({0} > 0.0f ? 1.0f : {0} < 0.0f ? -1.0f : {0} == 0.0f ? 0.0f : {0})"))
      .Case("silu", two("{0} / (1.0f + expf(-{0}))"))
      .Case("gelu", two("0.5f * {0} * (1.0f + erff({0} * 0.70710678118654752f))"))
      .Case("gelu_tanh",
            two("0.5f * {0} * (1.0f + tanhf(0.79788456080286536f * ({0} + 0.044715f * {0} * {0} "
                "* {0})))"))
      .Default(std::nullopt);
}

int arity(StringRef op) {
  return llvm::StringSwitch<int>(op)
      .Cases("add", "sub", "mul", "div", "pow", "max", "min", 2)
      .Cases("mod", "fmod", 2)
      .Default(1);
}

/// The offset into an input of `shape` for output element `index` of
/// `outShape` (numpy broadcasting from the right), as C++ over `i`.
std::string offsetOf(ArrayRef<int64_t> shape, ArrayRef<int64_t> outShape) {
  if (shape == outShape)
    return "i";
  int64_t elements = 1;
  for (int64_t dim : shape)
    elements *= dim;
  if (elements == 1)
    return "0";
  std::string offset;
  int64_t stride = 1, outStride = 1;
  size_t lead = outShape.size() - shape.size();
  for (size_t dim = outShape.size(); dim-- > lead;) {
    int64_t size = shape[dim - lead];
    if (size != 1)
      offset += llvm::formatv("{0}((i / {1}LL) % {2}LL) * {3}LL", offset.empty() ? "" : " + ",
                              outStride, outShape[dim], stride)
                    .str();
    stride *= size;
    outStride *= outShape[dim];
  }
  return offset;
}

/// One __global__ function for `kernel`, or failure for an op it does not know.
FailureOr<std::string> generate(exec::KernelOp kernel, StringRef name) {
  auto ops = kernel.getParams().getAs<ArrayAttr>("ops");
  auto args = kernel.getParams().getAs<DenseI64ArrayAttr>("args");
  if (!ops || !args || kernel.getOutputs().size() != 1)
    return kernel.emitOpError() << "is not a fused expression the CUDA generator reads";
  auto out = cast<MemRefType>(kernel.getOutputs()[0].getType());
  if (!out.getElementType().isF32())
    return kernel.emitOpError() << "fuses " << out.getElementType() << "; CUDA code is float32";
  std::string text;
  llvm::raw_string_ostream os(text);
  size_t inputs = kernel.getInputs().size();
  os << "extern \"C\" __global__ void " << name << "(";
  for (size_t index = 0; index < inputs; ++index)
    os << "const float *__restrict__ in" << index << ", ";
  os << "float *__restrict__ out) {\n";
  os << "  const long long n = " << out.getNumElements() << "LL;\n";
  os << "  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;\n"
     << "       i += (long long)gridDim.x * blockDim.x) {\n";
  for (auto [index, input] : llvm::enumerate(kernel.getInputs()))
    os << "    const float v" << index << " = in" << index << "["
       << offsetOf(cast<MemRefType>(input.getType()).getShape(), out.getShape()) << "];\n";
  ArrayRef<int64_t> operands = args.asArrayRef();
  size_t next = 0, value = inputs;
  for (Attribute attr : ops) {
    StringRef op = cast<StringAttr>(attr).getValue();
    int count = arity(op);
    if (next + count > operands.size())
      return kernel.emitOpError() << "has too few arguments for its ops";
    std::string a = "v" + std::to_string(operands[next]);
    std::string b = count > 1 ? "v" + std::to_string(operands[next + 1]) : "";
    next += count;
    std::optional<std::string> body = expression(op, a, b);
    if (!body)
      return kernel.emitOpError() << "fuses '" << op << "', which the CUDA generator does not know";
    os << "    const float v" << value++ << " = " << *body << ";\n";
  }
  os << "    out[i] = v" << value - 1 << ";\n  }\n}\n";
  return text;
}

struct GenerateCudaKernelsPass : impl::GenerateCudaKernelsPassBase<GenerateCudaKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string source = "// Generated by shardc: one kernel per fused elementwise step.\n";
    int64_t count = 0;
    WalkResult walk = module.walk([&](exec::KernelOp kernel) {
      if (kernel.getKernel() != "fused")
        return WalkResult::advance();
      std::string name = llvm::formatv("shardc_fused_{0}", count++).str();
      FailureOr<std::string> function = generate(kernel, name);
      if (failed(function))
        return WalkResult::interrupt();
      source += "\n" + *function;
      NamedAttrList params(kernel.getParams());
      params.set("cuda_kernel", StringAttr::get(&getContext(), name));
      kernel.setParamsAttr(params.getDictionary(&getContext()));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    if (count)
      module->setAttr(exec::kCudaSourceAttrName, StringAttr::get(&getContext(), source));
  }
};

} // namespace
} // namespace shardc::lowering
