//===- KernelEvaluation.cpp - graph ops without a folder, in float64 ------===//
#include "test/unit/passes/Autodiff/KernelEvaluation.h"

#include "dialects/Graph/ConstantConversion.h"
#include "dialects/Graph/GraphOps.h"
#include "runtime/cpu/CpuKernels.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cstdint>

using namespace mlir;

namespace shardc::autodiff::check {
namespace {

using rt::TensorView;

std::string statusText(const rt::Status &status) { return status ? "" : status.message(); }

/// Views of an op's operands; bool masks are copied to the runtime's
/// one-byte storage (a HostTensor holds them as int64).
class OperandViews {
public:
  explicit OperandViews(const std::vector<HostTensor> &operands) {
    for (const HostTensor &operand : operands) {
      if (operand.type != constfold::ScalarType::Bool) {
        views.push_back(viewOf(operand));
        continue;
      }
      bytes.emplace_back(operand.ints.begin(), operand.ints.end());
      views.push_back({bytes.back().data(), rt::DType::Bool, operand.shape});
    }
  }
  const TensorView &operator[](size_t index) const { return views[index]; }
  /// The view of an optional operand at `index`, null when absent.
  const TensorView *optional(Value present, size_t index) const {
    return present ? &views[index] : nullptr;
  }

private:
  std::vector<TensorView> views;
  std::vector<std::vector<uint8_t>> bytes;
};

} // namespace

rt::TensorView viewOf(const HostTensor &tensor) {
  using constfold::ScalarType;
  if (tensor.type == ScalarType::F64)
    return {const_cast<double *>(tensor.floats.data()), rt::DType::F64, tensor.shape};
  if (tensor.type == ScalarType::I64)
    return {const_cast<int64_t *>(tensor.ints.data()), rt::DType::I64, tensor.shape};
  return {nullptr, rt::DType::F64, tensor.shape};
}

std::vector<HostTensor> allocateResults(Operation *op) {
  std::vector<HostTensor> results;
  for (Type type : op->getResultTypes()) {
    auto tensor = cast<RankedTensorType>(type);
    std::optional<constfold::ScalarType> element = graph::toScalarType(tensor.getElementType());
    constfold::Shape shape(tensor.getShape().begin(), tensor.getShape().end());
    results.push_back(element && constfold::isFloat(*element)
                          ? HostTensor::splatFloat(*element, shape, 0)
                          : HostTensor::splatInt(element.value_or(constfold::ScalarType::I64),
                                                 shape, 0));
  }
  return results;
}

bool hasKernelEvaluation(Operation *op) {
  return isa<graph::LinearOp, graph::LayerNormOp, graph::RmsNormOp, graph::AttentionOp,
             graph::RotaryOp, graph::TopKOp, graph::MoeOp>(op);
}

std::string evaluateWithKernel(Operation *op, const std::vector<HostTensor> &operands,
                               std::vector<HostTensor> &results) {
  if (isa<graph::MoeOp>(op))
    return evaluateMoe(op, operands, results);
  results = allocateResults(op);
  const OperandViews in(operands);
  const TensorView out = viewOf(results[0]);
  namespace cpu = rt::cpu;
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case([&](graph::LinearOp linear) {
        return statusText(cpu::linear(in[0], in[1], in.optional(linear.getBias(), 2),
                                      linear.getTransposeWeight(), out));
      })
      .Case([&](graph::LayerNormOp norm) {
        return statusText(cpu::layerNorm(in[0], in[1], in.optional(norm.getBias(), 2),
                                         norm.getAxis(), norm.getEpsilon().convertToDouble(), out));
      })
      .Case([&](graph::RmsNormOp norm) {
        return statusText(
            cpu::rmsNorm(in[0], in[1], norm.getAxis(), norm.getEpsilon().convertToDouble(), out));
      })
      .Case([&](graph::AttentionOp attention) {
        return statusText(cpu::attention(in[0], in[1], in[2], in.optional(attention.getMask(), 3),
                                         attention.getScale().convertToDouble(),
                                         attention.getCausal(), out));
      })
      .Case([&](graph::RotaryOp rotary) {
        return statusText(cpu::rotary(in[0], in[1], in[2], rotary.getInterleaved(), out));
      })
      .Case([&](graph::TopKOp topk) {
        return statusText(cpu::topk(in[0], topk.getK(), topk.getAxis(), topk.getLargest(),
                                    topk.getSorted(), out, viewOf(results[1])));
      })
      .Default([](Operation *op) {
        return "no kernel evaluates " + op->getName().getStringRef().str();
      });
}

} // namespace shardc::autodiff::check
