//===- Ops.cpp - the kernels' op names ------------------------------------===//
#include "runtime/kernels/Ops.h"

#include <cstddef>
#include <utility>

namespace shardc::rt::kernels {
namespace {

template <typename E> using NameTable = std::pair<E, const char *>;

constexpr NameTable<UnaryOp> kUnaryNames[] = {{UnaryOp::Neg, "neg"},
                                              {UnaryOp::Abs, "abs"},
                                              {UnaryOp::Sqrt, "sqrt"},
                                              {UnaryOp::Rsqrt, "rsqrt"},
                                              {UnaryOp::Reciprocal, "reciprocal"},
                                              {UnaryOp::Exp, "exp"},
                                              {UnaryOp::Log, "log"},
                                              {UnaryOp::Cos, "cos"},
                                              {UnaryOp::Sin, "sin"},
                                              {UnaryOp::Erf, "erf"},
                                              {UnaryOp::Tanh, "tanh"},
                                              {UnaryOp::Sigmoid, "sigmoid"},
                                              {UnaryOp::Relu, "relu"},
                                              {UnaryOp::Gelu, "gelu"},
                                              {UnaryOp::GeluTanh, "gelu_tanh"},
                                              {UnaryOp::Silu, "silu"},
                                              {UnaryOp::Not, "not"},
                                              {UnaryOp::Floor, "floor"},
                                              {UnaryOp::Ceil, "ceil"},
                                              {UnaryOp::Round, "round"},
                                              {UnaryOp::Sign, "sign"}};
constexpr NameTable<BinaryOp> kBinaryNames[] = {
    {BinaryOp::Add, "add"}, {BinaryOp::Sub, "sub"}, {BinaryOp::Mul, "mul"},  {BinaryOp::Div, "div"},
    {BinaryOp::Pow, "pow"}, {BinaryOp::Max, "max"}, {BinaryOp::Min, "min"},  {BinaryOp::And, "and"},
    {BinaryOp::Or, "or"},   {BinaryOp::Mod, "mod"}, {BinaryOp::FMod, "fmod"}};
constexpr NameTable<ComparePredicate> kPredicateNames[] = {{ComparePredicate::Eq, "eq"},
                                                           {ComparePredicate::Lt, "lt"},
                                                           {ComparePredicate::Le, "le"},
                                                           {ComparePredicate::Gt, "gt"},
                                                           {ComparePredicate::Ge, "ge"}};
constexpr NameTable<ReduceOp> kReduceNames[] = {{ReduceOp::Sum, "reduce_sum"},
                                                {ReduceOp::Mean, "reduce_mean"},
                                                {ReduceOp::Max, "reduce_max"},
                                                {ReduceOp::Min, "reduce_min"}};
constexpr NameTable<ScatterReduction> kScatterNames[] = {{ScatterReduction::None, "none"},
                                                         {ScatterReduction::Add, "add"},
                                                         {ScatterReduction::Mul, "mul"},
                                                         {ScatterReduction::Max, "max"},
                                                         {ScatterReduction::Min, "min"}};

template <typename E, size_t N> const char *nameIn(const NameTable<E> (&table)[N], E value) {
  for (const auto &[entry, name] : table)
    if (entry == value)
      return name;
  return "?";
}

template <typename E, size_t N>
std::optional<E> valueIn(const NameTable<E> (&table)[N], std::string_view name) {
  for (const auto &[entry, known] : table)
    if (name == known)
      return entry;
  return std::nullopt;
}

} // namespace

const char *unaryOpName(UnaryOp op) { return nameIn(kUnaryNames, op); }
const char *binaryOpName(BinaryOp op) { return nameIn(kBinaryNames, op); }
const char *comparePredicateName(ComparePredicate p) { return nameIn(kPredicateNames, p); }
const char *reduceOpName(ReduceOp op) { return nameIn(kReduceNames, op); }
const char *scatterReductionName(ScatterReduction r) { return nameIn(kScatterNames, r); }

std::optional<UnaryOp> unaryOpFromName(std::string_view name) { return valueIn(kUnaryNames, name); }
std::optional<BinaryOp> binaryOpFromName(std::string_view name) {
  return valueIn(kBinaryNames, name);
}
std::optional<ComparePredicate> comparePredicateFromName(std::string_view name) {
  return valueIn(kPredicateNames, name);
}
std::optional<ReduceOp> reduceOpFromName(std::string_view name) {
  return valueIn(kReduceNames, name);
}
std::optional<ScatterReduction> scatterReductionFromName(std::string_view name) {
  return valueIn(kScatterNames, name);
}

bool isIntegerUnary(UnaryOp op) {
  return op == UnaryOp::Neg || op == UnaryOp::Abs || op == UnaryOp::Relu || op == UnaryOp::Sign;
}

} // namespace shardc::rt::kernels
