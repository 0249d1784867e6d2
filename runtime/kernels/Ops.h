//===- Ops.h - the kernels' op enums and their graph names ------*- C++ -*-===//
//
// The ops a kernel family takes as a parameter (unary, binary, compare,
// reduce, scatter reduction), as both backends' kernel tables decode them
// from a step's parameters and name them in messages. The names are the
// graph dialect's ("exp", "gelu_tanh" for gelu with approximate_tanh, "add",
// "eq", "reduce_sum", "none").
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_KERNELS_OPS_H
#define SHARDC_RUNTIME_KERNELS_OPS_H

#include <optional>
#include <string_view>

namespace shardc::rt::kernels {

// A few to a line, as the graph dialect lists them.
// clang-format off
enum class UnaryOp {
  Neg, Abs, Sqrt, Rsqrt, Reciprocal, Exp, Log, Cos, Sin, Erf, Tanh, Sigmoid,
  Relu, Gelu, GeluTanh, Silu, Not, Floor, Ceil, Round, Sign
};
// clang-format on

enum class BinaryOp { Add, Sub, Mul, Div, Pow, Max, Min, And, Or, Mod, FMod };

/// graph.compare's predicates.
enum class ComparePredicate { Eq, Lt, Le, Gt, Ge };

enum class ReduceOp { Sum, Mean, Max, Min };

/// graph.scatter_elements' and scatter_nd's `reduction`.
enum class ScatterReduction { None, Add, Mul, Max, Min };

const char *unaryOpName(UnaryOp op);
const char *binaryOpName(BinaryOp op);
const char *comparePredicateName(ComparePredicate predicate);
const char *reduceOpName(ReduceOp op);
const char *scatterReductionName(ScatterReduction reduction);
std::optional<UnaryOp> unaryOpFromName(std::string_view name);
std::optional<BinaryOp> binaryOpFromName(std::string_view name);
std::optional<ComparePredicate> comparePredicateFromName(std::string_view name);
std::optional<ReduceOp> reduceOpFromName(std::string_view name);
std::optional<ScatterReduction> scatterReductionFromName(std::string_view name);

/// Whether `op` takes integer inputs too (neg, abs, relu, sign).
bool isIntegerUnary(UnaryOp op);

} // namespace shardc::rt::kernels

#endif // SHARDC_RUNTIME_KERNELS_OPS_H
