//===- VjpFiniteDifferenceTest.cpp - every gradient rule in float64 -------===//
//
// Each rule of the registry (passes/Autodiff/VjpRules.h) against central
// differences of its op (VjpCheck.h says how and why the bound): on small
// shapes, with broadcasting, and with each attribute that changes the math
// (axes, transposes, causal and explicit masks, scales, strides, grouped
// heads, interleaving, capacity). The gradient is checked with every
// differentiable operand needed at once and with each one alone, since
// rules take other paths then. Every op the registry has a rule for must
// have a case here: the coverage test asks the registry of every op of the
// graph dialect without one.
//
//===----------------------------------------------------------------------===//
#include "test/unit/passes/Autodiff/VjpCheck.h"

#include "mlir/IR/OperationSupport.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <set>

namespace shardc::autodiff::check {
namespace {

/// A module whose @f takes `arguments` and returns what `body` computes as
/// %y (of type `results`; several results are %y#0, %y#1, ...).
std::string function(const std::string &arguments, const std::string &body,
                     const std::string &results, const std::string &returned = "%y") {
  return "func.func @f(" + arguments + ") -> (" + results + ") {\n" + body + "\n  return " +
         returned + " : " + results + "\n}";
}

/// An elementwise op of one operand of type `type`.
VjpCase unary(const std::string &title, const std::string &mnemonic,
              Sampling sampling = Sampling::Signed, const std::string &attributes = "",
              const std::string &type = "tensor<2x3xf64>") {
  return {title,
          function("%x: " + type,
                   "  %y = graph." + mnemonic + " %x " + attributes + " : " + type, type),
          {}, sampling};
}

/// A binary op whose operands broadcast from `lhs` and `rhs` to `result`.
VjpCase binary(const std::string &title, const std::string &mnemonic, const std::string &lhs,
               const std::string &rhs, const std::string &result,
               Sampling sampling = Sampling::Signed, std::vector<unsigned> held = {}) {
  return {title,
          function("%a: " + lhs + ", %b: " + rhs,
                   "  %y = graph." + mnemonic + " %a, %b : (" + lhs + ", " + rhs + ") -> " + result,
                   result),
          held, sampling};
}

std::vector<VjpCase> elementwiseCases() {
  const std::string m23 = "tensor<2x3xf64>", v3 = "tensor<3xf64>";
  return {
      binary("AddBroadcast", "add", m23, v3, m23),
      binary("SubBothBroadcast", "sub", "tensor<2x1x3xf64>", "tensor<4x1xf64>",
             "tensor<2x4x3xf64>"),
      binary("MulByScalar", "mul", m23, "tensor<f64>", m23),
      binary("DivBroadcastNumerator", "div", v3, m23, m23),
      binary("PowConstantExponent", "pow", m23, v3, m23, Sampling::Positive, {1}),
      binary("MaxBroadcast", "max", m23, v3, m23),
      binary("Min", "min", m23, m23, m23),
      {"WhereBroadcast",
       function("%a: tensor<2x3xf64>, %b: tensor<3xf64>",
                "  %c = graph.constant dense<[[true, false, true], [false, true, true]]> : "
                "tensor<2x3xi1>\n"
                "  %y = graph.where %c, %a, %b : (tensor<2x3xi1>, tensor<2x3xf64>, "
                "tensor<3xf64>) -> tensor<2x3xf64>",
                m23)},
      unary("Neg", "neg"),
      unary("Exp", "exp"),
      unary("Log", "log", Sampling::Positive),
      unary("Sqrt", "sqrt", Sampling::Positive),
      unary("Rsqrt", "rsqrt", Sampling::Positive),
      unary("Reciprocal", "reciprocal"),
      unary("Tanh", "tanh"),
      unary("Sigmoid", "sigmoid"),
      unary("Silu", "silu"),
      unary("Gelu", "gelu"),
      unary("GeluTanh", "gelu", Sampling::Signed, "{approximate_tanh = true}"),
      unary("Erf", "erf"),
      unary("Relu", "relu"),
      unary("Abs", "abs"),
      {"Cast", function("%x: tensor<2x3xf64>",
                        "  %y = graph.cast %x : tensor<2x3xf64> to tensor<2x3xf64>", m23)},
  };
}

std::vector<VjpCase> contractionCases() {
  return {
      {"LinearBatched",
       function("%x: tensor<2x3x4xf64>, %w: tensor<4x5xf64>",
                "  %y = graph.linear %x, %w : (tensor<2x3x4xf64>, tensor<4x5xf64>) -> "
                "tensor<2x3x5xf64>",
                "tensor<2x3x5xf64>")},
      {"LinearTransposedWithBias",
       function("%x: tensor<3x4xf64>, %w: tensor<5x4xf64>, %b: tensor<5xf64>",
                "  %y = graph.linear %x, %w, %b {transpose_weight = true} : (tensor<3x4xf64>, "
                "tensor<5x4xf64>, tensor<5xf64>) -> tensor<3x5xf64>",
                "tensor<3x5xf64>")},
      binary("MatMulMatrixRhs", "matmul", "tensor<2x3x4xf64>", "tensor<4x5xf64>",
             "tensor<2x3x5xf64>"),
      binary("MatMulBatchBroadcast", "matmul", "tensor<2x1x3x4xf64>", "tensor<3x4x2xf64>",
             "tensor<2x3x3x2xf64>"),
  };
}

std::vector<VjpCase> normalizationCases() {
  const std::string x = "tensor<2x3x4xf64>";
  return {
      {"LayerNormLastDimWithBias",
       function("%x: " + x + ", %g: tensor<4xf64>, %b: tensor<4xf64>",
                "  %y = graph.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 0.1 : f64} : (" +
                    x + ", tensor<4xf64>, tensor<4xf64>) -> " + x,
                x)},
      {"LayerNormTwoDims",
       function("%x: " + x + ", %g: tensor<3x4xf64>",
                "  %y = graph.layer_norm %x, %g {axis = 1 : i64, epsilon = 0.1 : f64} : (" + x +
                    ", tensor<3x4xf64>) -> " + x,
                x)},
      {"RmsNormLastDim",
       function("%x: " + x + ", %g: tensor<4xf64>",
                "  %y = graph.rms_norm %x, %g {axis = 2 : i64, epsilon = 0.1 : f64} : (" + x +
                    ", tensor<4xf64>) -> " + x,
                x)},
      {"RmsNormTwoDims",
       function("%x: " + x + ", %g: tensor<3x4xf64>",
                "  %y = graph.rms_norm %x, %g {axis = 1 : i64, epsilon = 0.1 : f64} : (" + x +
                    ", tensor<3x4xf64>) -> " + x,
                x)},
      unary("SoftmaxLastAxis", "softmax", Sampling::Signed, "{axis = 2 : i64}", x),
      unary("SoftmaxMiddleAxis", "softmax", Sampling::Signed, "{axis = 1 : i64}", x),
  };
}

std::vector<VjpCase> attentionCases() {
  return {
      {"AttentionMultiHead",
       function("%q: tensor<1x2x3x4xf64>, %k: tensor<1x2x3x4xf64>, %v: tensor<1x2x3x5xf64>",
                "  %y = graph.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<1x2x3x4xf64>, "
                "tensor<1x2x3x4xf64>, tensor<1x2x3x5xf64>) -> tensor<1x2x3x5xf64>",
                "tensor<1x2x3x5xf64>")},
      // Four query heads read two kv heads; two queries see the last of three
      // keys aligned at the bottom right (a KV cache of one position).
      {"AttentionGroupedCausalKvCache",
       function("%q: tensor<2x4x2x3xf64>, %k: tensor<2x2x3x3xf64>, %v: tensor<2x2x3x2xf64>",
                "  %y = graph.attention %q, %k, %v {scale = 0.7 : f64, causal = true} : "
                "(tensor<2x4x2x3xf64>, tensor<2x2x3x3xf64>, tensor<2x2x3x2xf64>) -> "
                "tensor<2x4x2x2xf64>",
                "tensor<2x4x2x2xf64>")},
      {"AttentionBooleanMask",
       function("%q: tensor<1x2x3x4xf64>, %k: tensor<1x2x4x4xf64>, %v: tensor<1x2x4x4xf64>",
                "  %m = graph.constant dense<[[true, false, true, true], [false, true, false, "
                "true], [true, true, true, false]]> : tensor<3x4xi1>\n"
                "  %y = graph.attention %q, %k, %v, %m {scale = 0.5 : f64} : "
                "(tensor<1x2x3x4xf64>, tensor<1x2x4x4xf64>, tensor<1x2x4x4xf64>, "
                "tensor<3x4xi1>) -> tensor<1x2x3x4xf64>",
                "tensor<1x2x3x4xf64>")},
      // Queries that see no key output zeros: three queries, two keys,
      // causal (the first query sees none); a mask row of every key masked.
      {"AttentionCausalQueryWithoutKeys",
       function("%q: tensor<1x2x3x4xf64>, %k: tensor<1x2x2x4xf64>, %v: tensor<1x2x2x3xf64>",
                "  %y = graph.attention %q, %k, %v {scale = 0.5 : f64, causal = true} : "
                "(tensor<1x2x3x4xf64>, tensor<1x2x2x4xf64>, tensor<1x2x2x3xf64>) -> "
                "tensor<1x2x3x3xf64>",
                "tensor<1x2x3x3xf64>")},
      {"AttentionMaskRowWithoutKeys",
       function("%q: tensor<1x2x3x4xf64>, %k: tensor<1x2x4x4xf64>, %v: tensor<1x2x4x4xf64>",
                "  %m = graph.constant dense<[[true, false, true, true], [false, false, false, "
                "false], [true, true, true, false]]> : tensor<3x4xi1>\n"
                "  %y = graph.attention %q, %k, %v, %m {scale = 0.5 : f64, causal = true} : "
                "(tensor<1x2x3x4xf64>, tensor<1x2x4x4xf64>, tensor<1x2x4x4xf64>, "
                "tensor<3x4xi1>) -> tensor<1x2x3x4xf64>",
                "tensor<1x2x3x4xf64>")},
      // A float mask is added to the scores (a trained relative position
      // bias): it has a gradient, summed over the heads it broadcast to.
      {"AttentionTrainedBiasCausal",
       function("%q: tensor<1x2x3x4xf64>, %k: tensor<1x2x3x4xf64>, %v: tensor<1x2x3x4xf64>, "
                "%m: tensor<1x1x3x3xf64>",
                "  %y = graph.attention %q, %k, %v, %m {scale = 0.5 : f64, causal = true} : "
                "(tensor<1x2x3x4xf64>, tensor<1x2x3x4xf64>, tensor<1x2x3x4xf64>, "
                "tensor<1x1x3x3xf64>) -> tensor<1x2x3x4xf64>",
                "tensor<1x2x3x4xf64>")},
      // Random tables, not true cosines and sines: the rule must be the
      // transpose of the op as defined, not only of a rotation. Features past
      // the rotated four pass through.
      {"RotaryHalvesPassThrough",
       function("%x: tensor<1x2x3x6xf64>, %c: tensor<3x4xf64>, %s: tensor<3x4xf64>",
                "  %y = graph.rotary %x, %c, %s : (tensor<1x2x3x6xf64>, tensor<3x4xf64>, "
                "tensor<3x4xf64>) -> tensor<1x2x3x6xf64>",
                "tensor<1x2x3x6xf64>"),
       {1, 2}},
      {"RotaryInterleaved",
       function("%x: tensor<2x3x4xf64>, %c: tensor<3x4xf64>, %s: tensor<3x4xf64>",
                "  %y = graph.rotary %x, %c, %s {interleaved = true} : (tensor<2x3x4xf64>, "
                "tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<2x3x4xf64>",
                "tensor<2x3x4xf64>"),
       {1, 2}},
  };
}

std::vector<VjpCase> movementCases() {
  const std::string x = "tensor<2x3x4xf64>";
  auto single = [&](const std::string &title, const std::string &op, const std::string &input,
                    const std::string &result) {
    return VjpCase{title, function("%x: " + input,
                                   "  %y = graph." + op + " : (" + input + ") -> " + result,
                                   result)};
  };
  return {
      single("Reshape", "reshape %x", x, "tensor<6x4xf64>"),
      single("Transpose", "transpose %x {perm = array<i64: 2, 0, 1>}", x, "tensor<4x2x3xf64>"),
      single("Expand", "expand %x", "tensor<3x1xf64>", x),
      single("SliceStartAndStride",
             "slice %x {starts = array<i64: 1, 0>, ends = array<i64: 3, 5>, "
             "steps = array<i64: 1, 2>}",
             "tensor<4x6xf64>", "tensor<2x3xf64>"),
      single("SliceStrideThreeOffset",
             "slice %x {starts = array<i64: 0, 1, 1>, ends = array<i64: 2, 7, 3>, "
             "steps = array<i64: 1, 3, 1>}",
             "tensor<2x7x3xf64>", "tensor<2x2x2xf64>"),
      {"ConcatThree",
       function("%a: tensor<2x1xf64>, %b: tensor<2x3xf64>, %c: tensor<2x2xf64>",
                "  %y = graph.concat %a, %b, %c {axis = 1 : i64} : (tensor<2x1xf64>, "
                "tensor<2x3xf64>, tensor<2x2xf64>) -> tensor<2x6xf64>",
                "tensor<2x6xf64>")},
      {"SplitTwo",
       function("%x: tensor<2x3x2xf64>",
                "  %y:2 = graph.split %x {axis = 1 : i64, sizes = array<i64: 1, 2>} : "
                "(tensor<2x3x2xf64>) -> (tensor<2x1x2xf64>, tensor<2x2x2xf64>)",
                "tensor<2x1x2xf64>, tensor<2x2x2xf64>", "%y#0, %y#1")},
      // Rows read twice get both contributions.
      {"GatherEmbeddingRepeatedRows",
       function("%t: tensor<5x4xf64>",
                "  %i = graph.constant dense<[[0, 2, 2], [4, 0, 1]]> : tensor<2x3xi64>\n"
                "  %y = graph.gather %t, %i {axis = 0 : i64} : (tensor<5x4xf64>, "
                "tensor<2x3xi64>) -> tensor<2x3x4xf64>",
                "tensor<2x3x4xf64>")},
      {"GatherMiddleAxis",
       function("%t: tensor<2x5x3xf64>",
                "  %i = graph.constant dense<[3, 0, 3, 1]> : tensor<4xi64>\n"
                "  %y = graph.gather %t, %i {axis = 1 : i64} : (tensor<2x5x3xf64>, "
                "tensor<4xi64>) -> tensor<2x4x3xf64>",
                "tensor<2x4x3xf64>")},
      single("ReduceSumOuterAxes", "reduce_sum %x {axes = array<i64: 0, 2>, keepdims = false}",
             x, "tensor<3xf64>"),
      single("ReduceSumKeepDims", "reduce_sum %x {axes = array<i64: 1>, keepdims = true}", x,
             "tensor<2x1x4xf64>"),
      single("ReduceMean", "reduce_mean %x {axes = array<i64: 2>, keepdims = false}", x,
             "tensor<2x3xf64>"),
  };
}

std::vector<VjpCase> routingCases() {
  // Four tokens choose two of three experts each; experts 0 and 1 get three
  // entries, so a capacity of 2 drops the last of each.
  const std::string indices =
      "  %i = graph.constant dense<[[0, 2], [1, 0], [2, 1], [0, 1]]> : tensor<4x2xi64>\n";
  return {
      {"TopKLargestSorted",
       function("%x: tensor<3x4xf64>",
                "  %y:2 = graph.topk %x {axis = 1 : i64, k = 2 : i64, largest = true, "
                "sorted = true} : (tensor<3x4xf64>) -> (tensor<3x2xf64>, tensor<3x2xi64>)",
                "tensor<3x2xf64>, tensor<3x2xi64>", "%y#0, %y#1")},
      {"TopKSmallestFirstAxis",
       function("%x: tensor<4x3xf64>",
                "  %y:2 = graph.topk %x {axis = 0 : i64, k = 2 : i64, largest = false, "
                "sorted = false} : (tensor<4x3xf64>) -> (tensor<2x3xf64>, tensor<2x3xi64>)",
                "tensor<2x3xf64>, tensor<2x3xi64>", "%y#0, %y#1")},
      {"MoeGatedSiluDropless",
       function("%x: tensor<4x3xf64>, %g: tensor<4x2xf64>, %wg: tensor<3x3x5xf64>, "
                "%wu: tensor<3x3x5xf64>, %wd: tensor<3x5x3xf64>",
                indices +
                    "  %y = graph.moe %x, %i, %g, experts(%wg, %wu, %wd) {experts = 3 : i64, "
                    "activation = \"silu\"} : (tensor<4x3xf64>, tensor<4x2xi64>, "
                    "tensor<4x2xf64>, tensor<3x3x5xf64>, tensor<3x3x5xf64>, "
                    "tensor<3x5x3xf64>) -> tensor<4x3xf64>",
                "tensor<4x3xf64>")},
      {"MoeUngatedGeluTransposedCapacity",
       function("%x: tensor<4x3xf64>, %g: tensor<4x2xf64>, %wu: tensor<3x5x3xf64>, "
                "%wd: tensor<3x3x5xf64>",
                indices +
                    "  %y = graph.moe %x, %i, %g, experts(%wu, %wd) {experts = 3 : i64, "
                    "activation = \"gelu\", transpose_weights = true, capacity = 2 : i64} : "
                    "(tensor<4x3xf64>, tensor<4x2xi64>, tensor<4x2xf64>, tensor<3x5x3xf64>, "
                    "tensor<3x3x5xf64>) -> tensor<4x3xf64>",
                "tensor<4x3xf64>")},
      {"MoeGatedGeluTanhCapacity",
       function("%x: tensor<4x3xf64>, %g: tensor<4x2xf64>, %wg: tensor<3x3x5xf64>, "
                "%wu: tensor<3x3x5xf64>, %wd: tensor<3x5x3xf64>",
                indices +
                    "  %y = graph.moe %x, %i, %g, experts(%wg, %wu, %wd) {experts = 3 : i64, "
                    "activation = \"gelu_tanh\", capacity = 2 : i64} : (tensor<4x3xf64>, "
                    "tensor<4x2xi64>, tensor<4x2xf64>, tensor<3x3x5xf64>, tensor<3x3x5xf64>, "
                    "tensor<3x5x3xf64>) -> tensor<4x3xf64>",
                "tensor<4x3xf64>")},
  };
}

std::vector<VjpCase> allCases() {
  std::vector<VjpCase> cases;
  for (auto family : {elementwiseCases, contractionCases, normalizationCases, attentionCases,
                      movementCases, routingCases})
    for (VjpCase &each : family())
      cases.push_back(std::move(each));
  return cases;
}

/// Checks a report, and prints each operand's error (the margin is a figure
/// worth seeing, not only pass or fail).
void expectWithinTolerance(const VjpReport &report, const std::string &which) {
  ASSERT_EQ(report.error, "") << which;
  ASSERT_FALSE(report.operands.empty()) << which << ": no operand was checked";
  std::string line = "  " + report.opName + ", " + which + ":";
  for (const OperandResult &operand : report.operands) {
    char figure[64];
    std::snprintf(figure, sizeof figure, " d%u %.1e", operand.operand, operand.relativeError);
    line += figure;
    // A gradient of zeros would pass any rule that also gives zeros.
    EXPECT_GT(operand.largest, 1e-3) << which << ", operand " << operand.operand;
    EXPECT_LE(operand.relativeError, kTolerance)
        << which << ", operand " << operand.operand << " of " << report.opName
        << ": the rule's gradient is off by " << operand.relativeError
        << " of its largest entry " << operand.largest;
  }
  std::printf("%s\n", line.c_str());
}

class VjpFiniteDifference : public ::testing::TestWithParam<VjpCase> {};

TEST_P(VjpFiniteDifference, MatchesCentralDifferences) {
  mlir::MLIRContext context;
  prepareContext(context);
  const VjpCase &vjpCase = GetParam();
  VjpReport together = checkVjp(context, vjpCase);
  expectWithinTolerance(together, "every operand needed");
  if (together.differentiable.size() < 2)
    return;
  for (unsigned operand : together.differentiable)
    expectWithinTolerance(checkVjp(context, vjpCase, operand),
                          "operand " + std::to_string(operand) + " alone");
}

INSTANTIATE_TEST_SUITE_P(Rules, VjpFiniteDifference, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<VjpCase> &info) {
                           return info.param.title;
                         });

TEST(VjpRegistryProbe, TellsARuleFromNone) {
  mlir::MLIRContext context;
  prepareContext(context);
  EXPECT_TRUE(registryHasRule(context, mlir::OperationName("graph.neg", &context)));
  EXPECT_FALSE(registryHasRule(context, mlir::OperationName("graph.sin", &context)));
}

/// Every op of the graph dialect without a case is asked whether the
/// registry has a rule for it; one that has is a rule nobody checked. A
/// rule reading the attributes a bare op lacks may crash the child process:
/// the test fails then too, the probed op's name the last line it wrote.
TEST(VjpRegistryCoverage, EveryRuleHasAFiniteDifferenceCase) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  mlir::MLIRContext context;
  prepareContext(context);
  std::set<std::string> covered;
  for (const VjpCase &vjpCase : allCases()) {
    std::string name = testedOpName(context, vjpCase);
    EXPECT_NE(name, "") << vjpCase.title << " does not parse";
    covered.insert(name);
  }
  auto probeTheRest = [&] {
    for (mlir::RegisteredOperationName name : context.getRegisteredOperations()) {
      if (name.getDialectNamespace() != "graph" || covered.count(name.getStringRef().str()))
        continue;
      std::fprintf(stderr, "probing %s\n", name.getStringRef().str().c_str());
      if (registryHasRule(context, name)) {
        std::fprintf(stderr, "%s has a gradient rule but no finite-difference case\n",
                     name.getStringRef().str().c_str());
        std::exit(1);
      }
    }
    std::exit(0);
  };
  EXPECT_EXIT(probeTheRest(), ::testing::ExitedWithCode(0), "");
}

} // namespace
} // namespace shardc::autodiff::check
