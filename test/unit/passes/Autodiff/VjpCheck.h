//===- VjpCheck.h - a gradient rule against central differences -*- C++ -*-===//
//
// A rule's vector-Jacobian product is checked in float64 at a random point:
// with random result cotangents v, the rule's gradient g of an operand x must
// be, entry by entry, the central difference
//
//   g[k] = sum over results of <v, f(x + h e_k) - f(x - h e_k)> / 2h
//
// which is <v, J u> for every unit direction u = e_k, so the whole gradient
// is checked rather than its projection on one random direction. The op and
// the ops the rule writes are both computed by GraphEvaluator.h.
//
// h = 1e-5 on inputs of magnitude 0.25 to 1.5: the central difference's
// truncation error is about h^2 / 6 |f'''| ~ 1e-11 and its rounding error
// about 1e-16 |f| / h ~ 1e-11, so a correct rule lands near 1e-10. The bound,
// 1e-6 of the gradient's largest entry, leaves that four orders of margin and
// is still tight enough that a norm's epsilon (0.1 in the cases) left out of
// its rule fails; a rule off by a factor or with a transposed operand misses
// it by six orders.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TEST_UNIT_PASSES_AUTODIFF_VJPCHECK_H
#define SHARDC_TEST_UNIT_PASSES_AUTODIFF_VJPCHECK_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"

#include <optional>
#include <string>
#include <vector>

namespace shardc::autodiff::check {

/// Where the random inputs are drawn.
enum class Sampling {
  /// +-[0.25, 1.25]: away from the kinks of relu, abs and the like at 0.
  Signed,
  /// [0.5, 1.5]: inside the domain of log, sqrt, rsqrt and pow's base.
  Positive,
};

/// One op under test: `source` is a module with `func.func @f` whose return
/// values are all results of that one op (its last op). Every f64 argument
/// gets random values; integer and boolean operands (indices, masks) are
/// graph.constant inside @f. The gradient is taken for each operand that is
/// an argument, except those in `held` (argument numbers: tables and
/// exponents the rule refuses to differentiate).
struct VjpCase {
  std::string title;
  std::string source;
  std::vector<unsigned> held = {};
  Sampling sampling = Sampling::Signed;
};

struct OperandResult {
  unsigned operand = 0;
  /// max |g - central difference| / max |central difference|.
  double relativeError = 0;
  /// max |central difference|: far from 0, so the check is not vacuous.
  double largest = 0;
};

struct VjpReport {
  /// "" when the rule could be built and evaluated, else what went wrong.
  std::string error;
  std::string opName;
  /// The operands the gradient may be taken for.
  std::vector<unsigned> differentiable;
  /// One per operand checked.
  std::vector<OperandResult> operands;
};

constexpr double kStep = 1e-5;
constexpr double kTolerance = 1e-6;

/// Checks the rule of `vjpCase`'s op, with every differentiable operand
/// needed at once, or only `only` (a rule may take another path then).
VjpReport checkVjp(mlir::MLIRContext &context, const VjpCase &vjpCase,
                   std::optional<unsigned> only = std::nullopt);

/// The name of the op `vjpCase` tests; "" if its source does not parse.
std::string testedOpName(mlir::MLIRContext &context, const VjpCase &vjpCase);

/// Whether the rule registry (buildVjp) has a rule for ops named `name`,
/// asked of a bare instance of the op (three f64 operands, two results, no
/// attributes): an op without a rule is refused before anything reads it.
/// An op with a rule may crash on such an instance; run it where a crash is a
/// failure that is reported (a death test).
bool registryHasRule(mlir::MLIRContext &context, mlir::OperationName name);

/// A context with the graph and func dialects loaded, ops not printed in
/// diagnostics (a bare instance cannot be printed).
void prepareContext(mlir::MLIRContext &context);

} // namespace shardc::autodiff::check

#endif
