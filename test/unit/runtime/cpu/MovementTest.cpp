//===- MovementTest.cpp - copy, transpose, slice, concat, split, expand ---===//
#include "TestUtil.h"

namespace shardc::rt::cpu::test {
namespace {

const DType kTypes[] = {DType::F32, DType::F16, DType::F64, DType::I8, DType::Bool, DType::I64};

TEST(CpuMovementTest, TransposeMatchesReference) {
  ThreadScope threads(2);
  Rng rng(71);
  const std::pair<Shape, std::vector<int64_t>> cases[] = {
      {{2, 3, 4, 5}, {0, 2, 1, 3}}, // [B, S, H, D] -> [B, H, S, D]
      {{2, 3, 4, 5}, {3, 2, 1, 0}}, {{2, 3, 4, 5}, {0, 1, 3, 2}}, {{7, 9}, {1, 0}},
      {{1, 5, 1, 3}, {2, 3, 0, 1}}, {{6}, {0}},  {{}, {}},        {{300, 257}, {1, 0}},
      {{0, 3}, {1, 0}}};
  for (DType type : kTypes) {
    for (const auto &[shape, perm] : cases) {
      HostTensor x = random(type, shape, rng, -100, 100);
      CTensor want = expectOk(cf::transpose(toConst(x), perm));
      HostTensor out(type, want.shape);
      ASSERT_TRUE(succeeded(transpose(x.view(), perm, out.view())));
      EXPECT_TRUE(closeTo(out, want, 0)) << dtypeName(type) << " " << formatShape(shape);
    }
  }
}

TEST(CpuMovementTest, SliceMatchesReferenceWithNegativeSteps) {
  Rng rng(72);
  struct Case {
    Shape shape;
    std::vector<int64_t> starts, ends, steps;
  };
  const Case cases[] = {
      {{10, 8}, {0, 0}, {10, 8}, {1, 1}},         // everything
      {{10, 8}, {2, 1}, {9, 7}, {3, 2}},          // strided
      {{10, 8}, {9, 7}, {-1, -1}, {-1, -1}},      // reversed through index 0
      {{10, 8}, {8, 6}, {1, 0}, {-3, -2}},        // reversed, strided
      {{10, 8}, {5, 0}, {5, 8}, {1, 1}},          // empty
      {{4, 5, 6}, {1, 0, 5}, {3, 5, 0}, {1, 100, -4}}, // a step past the dim: one element
      {{3, 4, 64}, {0, 0, 32}, {3, 4, 64}, {1, 1, 1}}, // the second half of the last dim
  };
  for (DType type : kTypes) {
    for (const Case &c : cases) {
      HostTensor x = random(type, c.shape, rng, -100, 100);
      CTensor want = expectOk(cf::slice(toConst(x), c.starts, c.ends, c.steps));
      HostTensor out(type, want.shape);
      ASSERT_TRUE(succeeded(slice(x.view(), c.starts, c.ends, c.steps, out.view())));
      EXPECT_TRUE(closeTo(out, want, 0)) << dtypeName(type) << " " << formatShape(c.shape);
    }
  }
}

TEST(CpuMovementTest, SliceRejectsOutOfRangePicks) {
  HostTensor x(DType::F32, {4}), out(DType::F32, {2});
  EXPECT_TRUE(failsWith(slice(x.view(), {0}, {4}, {0}, out.view()), "has step 0"));
  EXPECT_TRUE(failsWith(slice(x.view(), {0}, {5}, {2}, out.view()), "expected values in [-1, 4]"));
  EXPECT_TRUE(failsWith(slice(x.view(), {4}, {0}, {-2}, out.view()), "reads outside the dim"));
  EXPECT_TRUE(failsWith(slice(x.view(), {0}, {4}, {1}, out.view()),
                        "slice: result shape differs; expected [4] but got [2]"));
  EXPECT_TRUE(failsWith(slice(x.view(), {0, 0}, {4}, {1}, out.view()), "one start, end and step"));
}

TEST(CpuMovementTest, ConcatAndSplitMatchReferenceOnEveryAxis) {
  ThreadScope threads(2);
  Rng rng(73);
  for (DType type : kTypes) {
    for (int64_t axis = 0; axis < 3; ++axis) {
      std::vector<HostTensor> parts;
      for (int64_t size : {3, 0, 5, 1}) {
        Shape shape = {4, 6, 7};
        shape[size_t(axis)] = size;
        parts.push_back(random(type, shape, rng, -100, 100));
      }
      std::vector<CTensor> consts;
      for (const HostTensor &p : parts)
        consts.push_back(toConst(p));
      std::vector<const CTensor *> pointers;
      for (const CTensor &c : consts)
        pointers.push_back(&c);
      CTensor want = expectOk(cf::concat(pointers, axis));
      HostTensor joined(type, want.shape);
      std::vector<TensorView> views;
      for (HostTensor &p : parts)
        views.push_back(p.view());
      ASSERT_TRUE(succeeded(concat(views, axis, joined.view())));
      EXPECT_TRUE(closeTo(joined, want, 0)) << dtypeName(type) << " axis " << axis;

      // Split undoes it.
      std::vector<HostTensor> pieces;
      for (const HostTensor &p : parts)
        pieces.emplace_back(type, p.shape);
      std::vector<TensorView> outs;
      for (HostTensor &p : pieces)
        outs.push_back(p.view());
      ASSERT_TRUE(succeeded(split(joined.view(), axis, outs)));
      for (size_t i = 0; i < parts.size(); ++i)
        EXPECT_TRUE(sameBits(pieces[i], parts[i])) << "piece " << i;
    }
  }
}

TEST(CpuMovementTest, ConcatAndSplitRejectMismatches) {
  HostTensor a(DType::F32, {2, 3}), b(DType::F32, {3, 3}), out(DType::F32, {5, 3});
  std::vector<TensorView> views = {a.view(), b.view()};
  EXPECT_TRUE(failsWith(concat(views, 1, out.view()),
                        "concat: input [3, 3] does not match [2, 3] outside axis 1"));
  HostTensor wrong(DType::F32, {4, 3});
  EXPECT_TRUE(failsWith(concat(views, 0, wrong.view()), "expected [5, 3] but got [4, 3]"));
  HostTensor i(DType::I32, {3, 3});
  std::vector<TensorView> mixed = {a.view(), i.view()};
  EXPECT_TRUE(failsWith(concat(mixed, 0, out.view()), "input element type differs"));
  std::vector<TensorView> pieces = {a.view(), a.view()};
  EXPECT_TRUE(failsWith(split(out.view(), 0, pieces),
                        "split: result sizes add up to 4 but axis 0 of [5, 3] has 5"));
}

TEST(CpuMovementTest, ExpandMatchesReference) {
  ThreadScope threads(2);
  Rng rng(74);
  const std::pair<Shape, Shape> cases[] = {{{3, 1}, {2, 3, 4}}, {{}, {5}},      {{1, 4}, {3, 4}},
                                           {{2, 1, 3}, {2, 5, 3}}, {{4}, {4}}, {{1}, {0, 2}},
                                           {{512, 1}, {512, 200}}};
  for (DType type : kTypes) {
    for (const auto &[from, to] : cases) {
      HostTensor x = random(type, from, rng, -100, 100);
      CTensor want = expectOk(cf::expand(toConst(x), to));
      HostTensor out(type, to);
      ASSERT_TRUE(succeeded(expand(x.view(), out.view())));
      EXPECT_TRUE(closeTo(out, want, 0)) << formatShape(from) << " -> " << formatShape(to);
    }
  }
  HostTensor x(DType::F32, {3}), out(DType::F32, {2, 4});
  EXPECT_TRUE(failsWith(expand(x.view(), out.view()),
                        "expand: input [3] does not broadcast to the result [2, 4]"));
}

TEST(CpuMovementTest, ReshapeAndCopy) {
  Rng rng(75);
  HostTensor x = random(DType::I16, {3, 1000}, rng, -100, 100);
  HostTensor out(DType::I16, {30, 10, 10});
  ASSERT_TRUE(succeeded(reshape(x.view(), out.view())));
  EXPECT_EQ(x.bytes, out.bytes);
  ASSERT_TRUE(succeeded(reshape(x.view(), x.view())));
  HostTensor wrong(DType::I16, {7});
  EXPECT_TRUE(failsWith(reshape(x.view(), wrong.view()),
                        "reshape: element counts differ; [3, 1000] has 3000 but [7] has 7"));
  // copy keeps the shape: a state's new value written over the state.
  HostTensor same(DType::I16, {3, 1000});
  ASSERT_TRUE(succeeded(copy(x.view(), same.view())));
  EXPECT_EQ(x.bytes, same.bytes);
  ASSERT_TRUE(succeeded(copy(x.view(), x.view())));
  EXPECT_TRUE(failsWith(copy(x.view(), out.view()),
                        "copy: result shape differs; expected [3, 1000] but got [30, 10, 10]"));
  HostTensor floats(DType::F32, {3, 1000});
  EXPECT_TRUE(failsWith(copy(x.view(), floats.view()),
                        "copy: result element type differs; expected int16 but got float32"));
  EXPECT_TRUE(failsWith(transpose(x.view(), {0, 0}, out.view()),
                        "transpose: perm [0, 0] is not a permutation of the 2 dims of [3, 1000]"));
}

} // namespace
} // namespace shardc::rt::cpu::test
