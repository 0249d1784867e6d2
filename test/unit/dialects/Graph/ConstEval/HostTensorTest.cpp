//===- HostTensorTest.cpp - Element types, shapes, factories --------------===//

#include "TestUtil.h"

#include <limits>

namespace shardc::constfold::test {
namespace {

TEST(ScalarTypeTest, Classification) {
  EXPECT_TRUE(isFloat(T::F16));
  EXPECT_TRUE(isFloat(T::BF16));
  EXPECT_FALSE(isFloat(T::I32));
  EXPECT_TRUE(isInteger(T::U8));
  EXPECT_TRUE(isInteger(T::I64));
  EXPECT_FALSE(isInteger(T::Bool));
  EXPECT_FALSE(isInteger(T::F32));
  EXPECT_EQ(bitWidth(T::BF16), 16);
  EXPECT_STREQ(typeName(T::BF16), "bf16");
}

TEST(ScalarTypeTest, WrapIntKeepsTheTypesBits) {
  EXPECT_EQ(wrapInt(T::I32, uint64_t(1) << 31), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(wrapInt(T::I32, uint64_t(int64_t(-1))), -1);
  EXPECT_EQ(wrapInt(T::U8, 300), 44);
  EXPECT_EQ(wrapInt(T::U8, uint64_t(int64_t(-1))), 255);
  EXPECT_EQ(wrapInt(T::I8, 200), -56);
  EXPECT_EQ(wrapInt(T::I16, 40000), 40000 - 65536);
  EXPECT_EQ(wrapInt(T::I64, uint64_t(1) << 63), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(wrapInt(T::Bool, 2), 1);
}

TEST(ScalarTypeTest, IntToFloatRoundsOnce) {
  // 2^60 + 2^36 + 1 is just above the midpoint between two f32 neighbours.
  // Going through double loses the +1 and then ties to even (2^60); a single
  // rounding, like the hardware int64 -> float conversion, goes up.
  const int64_t x = (int64_t(1) << 60) + (int64_t(1) << 36) + 1;
  EXPECT_EQ(intToFloat(T::F32, x), double((int64_t(1) << 60) + (int64_t(1) << 37)));
  EXPECT_EQ(intToFloat(T::F32, x), double(static_cast<float>(x)));
  EXPECT_EQ(intToFloat(T::F32, -x), -double((int64_t(1) << 60) + (int64_t(1) << 37)));
  EXPECT_EQ(intToFloat(T::F64, 3), 3.0);
  EXPECT_EQ(intToFloat(T::F16, 65536), std::numeric_limits<double>::infinity());
  EXPECT_EQ(intToFloat(T::F32, std::numeric_limits<int64_t>::min()), -0x1p63);
}

TEST(FloatFormatsTest, F16RoundsToNearestEven) {
  EXPECT_EQ(roundToF16(1.0 / 3), 0.333251953125);
  EXPECT_EQ(f16Bits(1.0 / 3), 0x3555);
  EXPECT_EQ(roundToF16(0.1), 0.0999755859375);
  EXPECT_EQ(roundToF16(65504), 65504);
  EXPECT_EQ(roundToF16(65519), 65504); // below the overflow midpoint
  EXPECT_EQ(roundToF16(65520), std::numeric_limits<double>::infinity());
  EXPECT_EQ(roundToF16(1 + 0x1p-11), 1.0);              // tie -> even (down)
  EXPECT_EQ(roundToF16(1 + 3 * 0x1p-11), 1 + 0x1p-9);   // tie -> even (up)
  EXPECT_EQ(roundToF16(0x1p-24), 0x1p-24);              // smallest subnormal
  EXPECT_EQ(roundToF16(0x1p-25), 0.0);                  // tie -> even (zero)
  EXPECT_EQ(roundToF16(3 * 0x1p-26), 0x1p-24);
  EXPECT_EQ(roundToF16(6e-5), 6.002187728881836e-05);   // subnormal range
  EXPECT_TRUE(std::signbit(roundToF16(-1e-10)));        // -0 keeps its sign
  EXPECT_TRUE(std::isnan(roundToF16(std::nan(""))));
}

TEST(FloatFormatsTest, F16Bits) {
  EXPECT_EQ(f16Bits(65504), 0x7bff);
  EXPECT_EQ(f16Bits(1e9), 0x7c00);
  EXPECT_EQ(f16Bits(-2.5), 0xc100);
  EXPECT_EQ(f16Bits(0x1p-24), 0x0001);
  EXPECT_EQ(f16Bits(6e-5), 0x03ef);
  EXPECT_EQ(f16Bits(std::nan("")), 0x7e00);
  // Every pattern decodes to a value that encodes back to the same pattern.
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    bool isNaN = (bits & 0x7c00) == 0x7c00 && (bits & 0x3ff);
    if (isNaN)
      continue;
    ASSERT_EQ(f16Bits(f16FromBits(uint16_t(bits))), bits) << bits;
  }
}

TEST(FloatFormatsTest, BF16RoundsToNearestEven) {
  EXPECT_EQ(roundToBF16(1.0 / 3), 0.333984375);
  EXPECT_EQ(bf16Bits(1.0 / 3), 0x3eab);
  EXPECT_EQ(roundToBF16(0.1), 0.10009765625);
  EXPECT_EQ(roundToBF16(1 + 0x1p-8), 1.0);             // tie -> even (down)
  EXPECT_EQ(roundToBF16(1 + 3 * 0x1p-8), 1 + 0x1p-6);  // tie -> even (up)
  EXPECT_EQ(roundToBF16(65504), 65536);
  EXPECT_EQ(bf16Bits(3.39e38), 0x7f7f);                 // largest finite
  EXPECT_EQ(roundToBF16(3.4e38), std::numeric_limits<double>::infinity());
  EXPECT_EQ(roundToBF16(1e-40), 9.183549615799121e-41); // subnormal
  EXPECT_EQ(bf16Bits(1e-40), 0x0001);
  EXPECT_EQ(bf16Bits(-2.5), 0xc020);
  EXPECT_EQ(bf16FromBits(0x3f80), 1.0);
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    bool isNaN = (bits & 0x7f80) == 0x7f80 && (bits & 0x7f);
    if (isNaN)
      continue;
    ASSERT_EQ(bf16Bits(bf16FromBits(uint16_t(bits))), bits) << bits;
  }
}

TEST(FloatFormatsTest, F32HandlesOutOfRangeDoubles) {
  EXPECT_EQ(roundToF32(0.1), double(0.1f));
  EXPECT_EQ(roundToF32(1e300), std::numeric_limits<double>::infinity());
  EXPECT_EQ(roundToF32(-1e300), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(roundToF32(3.4028235e38), double(std::numeric_limits<float>::max()));
  EXPECT_EQ(roundToF32(1e-50), 0.0);
}

TEST(ShapeTest, Broadcasting) {
  EXPECT_EQ(*broadcastShapes({2, 1, 3}, {4, 1}), (Shape{2, 4, 3}));
  EXPECT_EQ(*broadcastShapes({}, {2, 3}), (Shape{2, 3}));
  EXPECT_EQ(*broadcastShapes({1}, {0}), (Shape{0}));
  EXPECT_EQ(*broadcastShapes({0, 1}, {1, 5}), (Shape{0, 5}));
  EXPECT_TRUE(failsWith(broadcastShapes({2, 3}, {4}),
                        "shapes [2,3] and [4] are not broadcast-compatible"));
  EXPECT_TRUE(failsWith(broadcastShapes({0}, {2}), "not broadcast-compatible"));
  EXPECT_TRUE(failsWith(broadcastShapes({-1}, {1}), "not broadcast-compatible"));
}

TEST(ShapeTest, ElementCounts) {
  EXPECT_EQ(shapeNumElements({}), 1);
  EXPECT_EQ(shapeNumElements({2, 0, 3}), 0);
  EXPECT_EQ(shapeNumElements({-1, 2}), -1);
  EXPECT_EQ(shapeNumElements({int64_t(1) << 40, int64_t(1) << 40}), -1);
  // Invalid even though it has no elements: its strides would overflow.
  EXPECT_EQ(shapeNumElements({0, int64_t(1) << 40, int64_t(1) << 40}), -1);
  EXPECT_EQ(rowMajorStrides({2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(formatShape({}), "[]");
}

TEST(HostTensorTest, FactoriesNormalize) {
  HostTensor wrapped = ints(T::U8, {3}, {255, 256, -1});
  EXPECT_EQ(wrapped.ints, (std::vector<int64_t>{255, 0, 255}));
  HostTensor flags = bools({2}, {0, 7});
  EXPECT_EQ(flags.ints, (std::vector<int64_t>{0, 1}));
  HostTensor half = floats(T::F16, {1}, {0.1});
  EXPECT_EQ(half.floats[0], 0.0999755859375);
  HostTensor converted = ints(T::F32, {2}, {1, 16777217});
  EXPECT_EQ(converted.floats, (std::vector<double>{1, 16777216}));
  EXPECT_TRUE(converted.ints.empty());
  HostTensor splat = HostTensor::splatInt(T::I8, {2, 2}, 130);
  EXPECT_EQ(splat.ints, (std::vector<int64_t>(4, -126)));
  EXPECT_EQ(HostTensor::scalarFloat(T::BF16, 1.0 / 3).floats,
            (std::vector<double>{0.333984375}));
  EXPECT_EQ(HostTensor::scalarInt(T::I64, 5).shape, Shape{});
}

TEST(HostTensorTest, ValidateFindsMalformedTensors) {
  EXPECT_EQ(i32({2, 2}, {1, 2, 3, 4}).validate(), "");
  EXPECT_EQ(i32({0, 3}, {}).validate(), "");
  EXPECT_EQ(i32({2, 2}, {1, 2, 3}).validate(),
            "shape [2,2] needs 4 i32 elements but 3 are stored");
  EXPECT_NE(i32({-1}, {}).validate(), "");
  // Float values for an integer type are refused, not converted.
  EXPECT_NE(floats(T::I32, {1}, {1.5}).validate(), "");
  EXPECT_NE(HostTensor::splatFloat(T::I32, {1}, 1.0).validate(), "");
  // Too large to fold: no storage is allocated.
  HostTensor huge = HostTensor::splatInt(T::I8, {int64_t(1) << 40}, 0);
  EXPECT_TRUE(huge.ints.empty());
  EXPECT_NE(huge.validate().find("folding limit"), std::string::npos);
  // A tensor with the wrong storage in use.
  HostTensor wrongStorage{T::F32, {1}, {}, {1}};
  EXPECT_NE(wrongStorage.validate(), "");
}

TEST(HostTensorTest, MalformedOperandsAreRejectedByOps) {
  HostTensor bad = i32({2, 2}, {1, 2, 3});
  HostTensor good = i32({2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(failsWith(binary(BinaryOp::Add, bad, good), "lhs is malformed"));
  EXPECT_TRUE(failsWith(binary(BinaryOp::Add, good, bad), "rhs is malformed"));
  EXPECT_TRUE(failsWith(unary(UnaryOp::Neg, bad), "malformed"));
  EXPECT_TRUE(failsWith(transpose(bad, {1, 0}), "malformed"));
  EXPECT_TRUE(failsWith(reduce(ReduceOp::Sum, bad, {}, false), "malformed"));
  EXPECT_TRUE(failsWith(matmul(bad, good), "malformed"));
  EXPECT_TRUE(failsWith(concat({&good, &bad}, 0), "concat input 1 is malformed"));
  EXPECT_TRUE(failsWith(gather(good, bad, 0), "indices is malformed"));
}

TEST(HostTensorTest, ToString) {
  EXPECT_EQ(i32({2}, {1, -2}).toString(), "i32[2]{1, -2}");
  EXPECT_EQ(i64({3}, {1, 2, 3}).toString(2), "i64[3]{1, 2, ...}");
  EXPECT_EQ(f32({}, {0.5}).toString(), "f32[]{0.5}");
}

} // namespace
} // namespace shardc::constfold::test
