//===- OpsTest.cpp - the kernels' op names --------------------------------===//
#include "runtime/kernels/Ops.h"

#include <gtest/gtest.h>

#include <string>

namespace shardc::rt::kernels {
namespace {

/// Every value of the enum up to `last` names itself and is found by its name.
template <typename E>
void expectRoundTrip(E last, const char *(*name)(E),
                     std::optional<E> (*fromName)(std::string_view)) {
  for (int value = 0; value <= int(last); ++value)
    EXPECT_EQ(fromName(name(E(value))), E(value)) << name(E(value));
}

TEST(KernelOps, NamesRoundTrip) {
  expectRoundTrip(UnaryOp::Sign, unaryOpName, unaryOpFromName);
  expectRoundTrip(BinaryOp::FMod, binaryOpName, binaryOpFromName);
  expectRoundTrip(ComparePredicate::Ge, comparePredicateName, comparePredicateFromName);
  expectRoundTrip(ReduceOp::Min, reduceOpName, reduceOpFromName);
  expectRoundTrip(ScatterReduction::Min, scatterReductionName, scatterReductionFromName);
}

TEST(KernelOps, NamesAreTheGraphDialects) {
  EXPECT_EQ(std::string(unaryOpName(UnaryOp::GeluTanh)), "gelu_tanh");
  EXPECT_EQ(binaryOpFromName("pow"), BinaryOp::Pow);
  EXPECT_EQ(binaryOpFromName("fmod"), BinaryOp::FMod);
  EXPECT_EQ(comparePredicateFromName("ge"), ComparePredicate::Ge);
  EXPECT_EQ(unaryOpFromName("floor"), UnaryOp::Floor);
  EXPECT_EQ(std::string(reduceOpName(ReduceOp::Mean)), "reduce_mean");
  EXPECT_EQ(scatterReductionFromName("none"), ScatterReduction::None);
  EXPECT_FALSE(unaryOpFromName("trunc"));
  EXPECT_FALSE(reduceOpFromName("sum"));
}

TEST(KernelOps, OnlyNegAbsReluAndSignTakeIntegers) {
  for (int op = 0; op <= int(UnaryOp::Sign); ++op) {
    const UnaryOp unary = UnaryOp(op);
    EXPECT_EQ(isIntegerUnary(unary), unary == UnaryOp::Neg || unary == UnaryOp::Abs ||
                                         unary == UnaryOp::Relu || unary == UnaryOp::Sign)
        << unaryOpName(unary);
  }
}

} // namespace
} // namespace shardc::rt::kernels
