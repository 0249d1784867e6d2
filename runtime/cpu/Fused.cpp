//===- Fused.cpp - the "fused" elementwise kernel -------------------------===//
#include "runtime/cpu/Fused.h"
#include "runtime/cpu/Parallel.h"
#include "runtime/cpu/VectorMath.h"

#include <cmath>

namespace shardc::rt::cpu {
namespace {

/// Elements evaluated together: each step's operands and result stay in L1.
constexpr int64_t kBlock = 256;

enum class Op { Add, Sub, Mul, Div, Pow, Max, Min, Neg, Abs, Sqrt, Rsqrt, Reciprocal, Exp,
                Log, Cos, Sin, Erf, Tanh, Sigmoid, Relu, Silu, Gelu, GeluTanh, Floor, Ceil, Round,
                Sign, Mod, FMod };

struct Instruction {
  Op op;
  int arity;
  int64_t args[2];
};

std::optional<std::pair<Op, int>> decode(const std::string &name) {
  static const std::pair<const char *, std::pair<Op, int>> table[] = {
      {"add", {Op::Add, 2}},         {"sub", {Op::Sub, 2}},       {"mul", {Op::Mul, 2}},
      {"div", {Op::Div, 2}},         {"pow", {Op::Pow, 2}},       {"max", {Op::Max, 2}},
      {"min", {Op::Min, 2}},         {"neg", {Op::Neg, 1}},       {"abs", {Op::Abs, 1}},
      {"sqrt", {Op::Sqrt, 1}},       {"rsqrt", {Op::Rsqrt, 1}},   {"reciprocal", {Op::Reciprocal, 1}},
      {"exp", {Op::Exp, 1}},         {"log", {Op::Log, 1}},       {"cos", {Op::Cos, 1}},
      {"sin", {Op::Sin, 1}},         {"erf", {Op::Erf, 1}},       {"tanh", {Op::Tanh, 1}},
      {"sigmoid", {Op::Sigmoid, 1}}, {"relu", {Op::Relu, 1}},     {"silu", {Op::Silu, 1}},
      {"gelu", {Op::Gelu, 1}},       {"gelu_tanh", {Op::GeluTanh, 1}}, {"floor", {Op::Floor, 1}},
      {"ceil", {Op::Ceil, 1}},       {"round", {Op::Round, 1}},   {"sign", {Op::Sign, 1}},
      {"mod", {Op::Mod, 2}},         {"fmod", {Op::FMod, 2}}};
  for (const auto &[known, op] : table)
    if (name == known)
      return op;
  return std::nullopt;
}

/// Python's %: the truncated remainder moved into the divisor's sign.
float flooredMod(float a, float b) {
  const float r = std::fmod(a, b);
  if (r == 0.0f)
    return std::copysign(0.0f, b);
  return (r < 0.0f) != (b < 0.0f) ? r + b : r;
}

void apply(const Instruction &in, const float *a, const float *b, float *r, int64_t n) {
  switch (in.op) {
  case Op::Add: for (int64_t i = 0; i < n; ++i) r[i] = a[i] + b[i]; break;
  case Op::Sub: for (int64_t i = 0; i < n; ++i) r[i] = a[i] - b[i]; break;
  case Op::Mul: for (int64_t i = 0; i < n; ++i) r[i] = a[i] * b[i]; break;
  case Op::Div: for (int64_t i = 0; i < n; ++i) r[i] = a[i] / b[i]; break;
  case Op::Pow: for (int64_t i = 0; i < n; ++i) r[i] = std::pow(a[i], b[i]); break;
  case Op::Max: for (int64_t i = 0; i < n; ++i) r[i] = std::isnan(a[i]) || a[i] > b[i] ? a[i] : b[i]; break;
  case Op::Min: for (int64_t i = 0; i < n; ++i) r[i] = std::isnan(a[i]) || a[i] < b[i] ? a[i] : b[i]; break;
  case Op::Neg: for (int64_t i = 0; i < n; ++i) r[i] = -a[i]; break;
  case Op::Abs: for (int64_t i = 0; i < n; ++i) r[i] = std::fabs(a[i]); break;
  case Op::Sqrt: for (int64_t i = 0; i < n; ++i) r[i] = std::sqrt(a[i]); break;
  case Op::Rsqrt: for (int64_t i = 0; i < n; ++i) r[i] = 1.0f / std::sqrt(a[i]); break;
  case Op::Reciprocal: for (int64_t i = 0; i < n; ++i) r[i] = 1.0f / a[i]; break;
  case Op::Exp: for (int64_t i = 0; i < n; ++i) r[i] = vmath::exp(a[i]); break;
  case Op::Log: for (int64_t i = 0; i < n; ++i) r[i] = std::log(a[i]); break;
  case Op::Cos: for (int64_t i = 0; i < n; ++i) r[i] = std::cos(a[i]); break;
  case Op::Sin: for (int64_t i = 0; i < n; ++i) r[i] = std::sin(a[i]); break;
  case Op::Erf: for (int64_t i = 0; i < n; ++i) r[i] = std::erf(a[i]); break;
  case Op::Tanh: for (int64_t i = 0; i < n; ++i) r[i] = std::tanh(a[i]); break;
  case Op::Sigmoid: for (int64_t i = 0; i < n; ++i) r[i] = vmath::sigmoid(a[i]); break;
  case Op::Relu: for (int64_t i = 0; i < n; ++i) r[i] = a[i] < 0 ? 0.0f : a[i]; break;
  case Op::Silu: for (int64_t i = 0; i < n; ++i) r[i] = a[i] * vmath::sigmoid(a[i]); break;
  // The gelu forms as the unary kernels compute them (Unary.cpp): 1 + erf(z)
  // as erfc(-z) and 1 + tanh(u) as 2 sigmoid(2u), which keep the left tail.
  case Op::Gelu:
    for (int64_t i = 0; i < n; ++i)
      r[i] = 0.5f * a[i] * vmath::erfc(-a[i] * static_cast<float>(M_SQRT1_2));
    break;
  case Op::Floor: for (int64_t i = 0; i < n; ++i) r[i] = std::floor(a[i]); break;
  case Op::Ceil: for (int64_t i = 0; i < n; ++i) r[i] = std::ceil(a[i]); break;
  // nearbyint in the default rounding mode sends halves to even (ONNX Round).
  case Op::Round: for (int64_t i = 0; i < n; ++i) r[i] = std::nearbyint(a[i]); break;
  case Op::Sign:
    for (int64_t i = 0; i < n; ++i)
      r[i] = a[i] > 0.0f ? 1.0f : a[i] < 0.0f ? -1.0f : a[i] == 0.0f ? 0.0f : a[i];
    break;
  case Op::Mod: for (int64_t i = 0; i < n; ++i) r[i] = flooredMod(a[i], b[i]); break;
  case Op::FMod: for (int64_t i = 0; i < n; ++i) r[i] = std::fmod(a[i], b[i]); break;
  case Op::GeluTanh: {
    const float k = static_cast<float>(std::sqrt(2.0 / M_PI));
    for (int64_t i = 0; i < n; ++i)
      r[i] = a[i] * vmath::sigmoid(2.0f * k * (a[i] + 0.044715f * a[i] * a[i] * a[i]));
    break;
  }
  }
}

/// Element strides of `shape` seen from `outShape` (0 where it broadcasts).
std::vector<int64_t> broadcastStrides(const Shape &shape, const Shape &outShape) {
  std::vector<int64_t> strides(outShape.size(), 0);
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    int64_t outDim = d + static_cast<int64_t>(outShape.size() - shape.size());
    strides[outDim] = shape[d] == 1 ? 0 : stride;
    stride *= shape[d];
  }
  return strides;
}

} // namespace

Status fused(ViewList inputs, const std::vector<std::string> &ops,
             const std::vector<int64_t> &args, const TensorView &out) {
  if (out.dtype != DType::F32)
    return Status::error("fused: output must be float32");
  const int64_t count = static_cast<int64_t>(inputs.size());
  std::vector<Instruction> program;
  size_t next = 0;
  for (const std::string &name : ops) {
    auto decoded = decode(name);
    if (!decoded)
      return Status::error("fused: unknown op '" + name + "'");
    Instruction instruction{decoded->first, decoded->second, {0, 0}};
    for (int i = 0; i < instruction.arity; ++i) {
      if (next >= args.size())
        return Status::error("fused: too few arguments for the ops");
      int64_t arg = args[next++];
      if (arg < 0 || arg >= count + static_cast<int64_t>(program.size()))
        return Status::error("fused: argument " + std::to_string(arg) + " is out of range");
      instruction.args[i] = arg;
    }
    program.push_back(instruction);
  }
  if (program.empty() || next != args.size())
    return Status::error("fused: the ops and their arguments do not match");
  std::vector<std::vector<int64_t>> strides;
  for (const TensorView &input : inputs) {
    if (input.dtype != DType::F32)
      return Status::error("fused: inputs must be float32");
    if (input.shape.size() > out.shape.size())
      return Status::error("fused: an input has more dims than the output");
    const size_t offset = out.shape.size() - input.shape.size();
    for (size_t d = 0; d < input.shape.size(); ++d)
      if (input.shape[d] != 1 && input.shape[d] != out.shape[offset + d])
        return Status::error("fused: input " + std::to_string(strides.size()) + " of shape " +
                             formatShape(input.shape) + " does not broadcast to the result's " +
                             formatShape(out.shape));
    strides.push_back(broadcastStrides(input.shape, out.shape));
  }
  const int64_t total = out.numel(), rank = static_cast<int64_t>(out.shape.size());
  const int64_t blocks = (total + kBlock - 1) / kBlock;
  float *result = out.as<float>();

  // Each input's kind: one of the output's shape is read in place, a
  // one-element one is a constant row, any other is gathered per block.
  enum class Read { InPlace, Constant, Gathered };
  std::vector<Read> reads;
  for (const TensorView &input : inputs)
    reads.push_back(input.numel() == total ? Read::InPlace
                    : input.numel() == 1   ? Read::Constant
                                           : Read::Gathered);

  detail::parallelFor(blocks, kBlock * static_cast<int64_t>(program.size()), [&](int64_t first,
                                                                                int64_t last) {
    // Rows: one per input, then one per step; each kBlock wide. An input
    // read in place points into its tensor; the last step writes the result.
    std::vector<float> scratch((count + program.size()) * kBlock);
    std::vector<const float *> rows(count + program.size());
    std::vector<int64_t> index(rank);
    for (int64_t j = 0; j < count; ++j)
      if (reads[j] == Read::Constant)
        std::fill(&scratch[j * kBlock], &scratch[(j + 1) * kBlock], inputs[j].as<float>()[0]);
    for (int64_t block = first; block < last; ++block) {
      int64_t begin = block * kBlock, n = std::min(kBlock, total - begin);
      for (int64_t j = 0; j < count; ++j) {
        const float *data = inputs[j].as<float>();
        float *row = &scratch[j * kBlock];
        rows[j] = reads[j] == Read::InPlace ? data + begin : row;
        if (reads[j] != Read::Gathered)
          continue;
        // Broadcast by strides.
        int64_t linear = begin;
        for (int64_t d = rank - 1; d >= 0; --d) {
          index[d] = linear % out.shape[d];
          linear /= out.shape[d];
        }
        for (int64_t i = 0; i < n; ++i) {
          int64_t offset = 0;
          for (int64_t d = 0; d < rank; ++d)
            offset += index[d] * strides[j][d];
          row[i] = data[offset];
          for (int64_t d = rank - 1; d >= 0 && ++index[d] == out.shape[d]; --d)
            index[d] = 0;
        }
      }
      // The result may be an input's own storage (a state updated in place):
      // every step reads and writes element i at index i, so the last step
      // reads each element before it overwrites it.
      for (size_t s = 0; s < program.size(); ++s) {
        const Instruction &instruction = program[s];
        float *target =
            s + 1 == program.size() ? result + begin : &scratch[(count + s) * kBlock];
        rows[count + s] = target;
        apply(instruction, rows[instruction.args[0]],
              instruction.arity > 1 ? rows[instruction.args[1]] : nullptr, target, n);
      }
    }
  });
  return Status::success();
}

} // namespace shardc::rt::cpu
