//===- OpsTest.cpp - the kernels' op names --------------------------------===//
#include "runtime/kernels/Ops.h"

#include <gtest/gtest.h>

#include <string>

namespace shardc::rt::kernels {
namespace {

TEST(KernelOps, NamesRoundTrip) {
  for (int op = 0; op <= int(UnaryOp::Sign); ++op)
    EXPECT_EQ(unaryOpFromName(unaryOpName(UnaryOp(op))), UnaryOp(op)) << op;
  for (int op = 0; op <= int(BinaryOp::FMod); ++op)
    EXPECT_EQ(binaryOpFromName(binaryOpName(BinaryOp(op))), BinaryOp(op)) << op;
  for (int op = 0; op <= int(ComparePredicate::Ge); ++op)
    EXPECT_EQ(comparePredicateFromName(comparePredicateName(ComparePredicate(op))),
              ComparePredicate(op))
        << op;
  for (int op = 0; op <= int(ReduceOp::Min); ++op)
    EXPECT_EQ(reduceOpFromName(reduceOpName(ReduceOp(op))), ReduceOp(op)) << op;
  for (int op = 0; op <= int(ScatterReduction::Min); ++op)
    EXPECT_EQ(scatterReductionFromName(scatterReductionName(ScatterReduction(op))),
              ScatterReduction(op))
        << op;
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
