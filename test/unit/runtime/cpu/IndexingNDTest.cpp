//===- IndexingNDTest.cpp - gather_elements, gather_nd, scatter_nd ---------===//
#include "TestUtil.h"

namespace shardc::rt::cpu::test {
namespace {

/// Tuples of indices [..., k] whose entry j lies in [-dims[j], dims[j]).
HostTensor randomTuples(DType indexType, Shape shape, const Shape &dims, Rng &rng) {
  HostTensor t(indexType, shape);
  const int64_t k = shape.back();
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t dim = dims[size_t(i % k)];
    std::uniform_int_distribution<int64_t> entry(-dim, dim - 1);
    setInt(t, i, entry(rng));
  }
  return t;
}

TEST(CpuGatherElementsTest, MatchesReferenceWithNegativeIndices) {
  ThreadScope threads(2);
  Rng rng(91);
  struct Case {
    Shape data, indices;
    int64_t axis;
  };
  const Case cases[] = {{{3, 4}, {5, 4}, 0},        {{3, 4}, {3, 7}, 1},   {{2, 3, 5}, {2, 2, 5}, 1},
                        {{4, 6, 2}, {3, 6, 9}, 2}, {{300, 64}, {300, 80}, 1}, {{3, 4}, {0, 4}, 0}};
  for (DType type : {DType::F32, DType::F16, DType::I64, DType::Bool, DType::I8}) {
    for (DType indexType : {DType::I64, DType::I32}) {
      for (const Case &c : cases) {
        const int64_t dim = c.data[size_t(c.axis)];
        HostTensor data = random(type, c.data, rng, -100, 100);
        HostTensor indices = random(indexType, c.indices, rng, double(-dim), double(dim - 1));
        CTensor want = expectOk(cf::gatherElements(toConst(data), toConst(indices), c.axis));
        HostTensor out(type, c.indices);
        ASSERT_TRUE(succeeded(gatherElements(data.view(), indices.view(), c.axis, out.view())));
        EXPECT_TRUE(closeTo(out, want, 0)) << formatShape(c.data) << " axis " << c.axis;
      }
    }
  }
}

TEST(CpuGatherElementsTest, HandComputedAndErrors) {
  // torch.gather(x, 1, idx) on [[1, 2], [3, 4]] with [[0, 0], [-1, 0]].
  HostTensor data = make(DType::F32, {2, 2}, {1, 2, 3, 4}), out(DType::F32, {2, 2});
  HostTensor indices = make(DType::I64, {2, 2}, {0, 0, -1, 0});
  ASSERT_TRUE(succeeded(gatherElements(data.view(), indices.view(), 1, out.view())));
  EXPECT_TRUE(closeTo(out, {2, 2}, {1, 1, 4, 3}, 0));
  HostTensor high = make(DType::I32, {2, 2}, {0, 2, 0, 0});
  EXPECT_TRUE(failsWith(gatherElements(data.view(), high.view(), 1, out.view()),
                        "gather_elements: index 2 (element 1) is out of range for axis 1 of size 2"));
  HostTensor wide(DType::I64, {3, 1}), wideOut(DType::F32, {3, 1});
  EXPECT_TRUE(failsWith(gatherElements(data.view(), wide.view(), 1, wideOut.view()),
                        "indices [3, 1] do not fit data [2, 2] outside axis 1"));
  HostTensor floats(DType::F32, {2, 2});
  EXPECT_TRUE(failsWith(gatherElements(data.view(), floats.view(), 1, out.view()),
                        "indices must be int32 or int64 but got float32"));
  HostTensor wrongOut(DType::F32, {2, 3});
  EXPECT_TRUE(failsWith(gatherElements(data.view(), indices.view(), 1, wrongOut.view()),
                        "result shape differs"));
}

TEST(CpuGatherNDTest, MatchesReferenceWithBatchDims) {
  ThreadScope threads(2);
  Rng rng(92);
  struct Case {
    Shape data, indices;
    int64_t batchDims;
  };
  const Case cases[] = {{{4, 5}, {3, 2}, 0},          {{4, 5}, {3, 1}, 0},
                        {{2, 3, 4}, {5, 2, 2}, 0},    {{2, 3, 4}, {2, 6, 1}, 1},
                        {{2, 3, 4, 2}, {2, 3, 1}, 2}, {{64, 128}, {64, 1}, 1},
                        {{2, 3}, {0, 2}, 0}};
  for (DType type : {DType::F32, DType::BF16, DType::I32, DType::Bool}) {
    for (DType indexType : {DType::I64, DType::I32}) {
      for (const Case &c : cases) {
        const int64_t k = c.indices.back();
        const Shape dims(c.data.begin() + c.batchDims, c.data.begin() + c.batchDims + k);
        HostTensor data = random(type, c.data, rng, -100, 100);
        HostTensor indices = randomTuples(indexType, c.indices, dims, rng);
        CTensor want = expectOk(cf::gatherND(toConst(data), toConst(indices), c.batchDims));
        HostTensor out(type, want.shape);
        ASSERT_TRUE(succeeded(gatherND(data.view(), indices.view(), c.batchDims, out.view())));
        EXPECT_TRUE(closeTo(out, want, 0)) << formatShape(c.data) << " " << formatShape(c.indices);
      }
    }
  }
}

TEST(CpuGatherNDTest, HandComputedAndErrors) {
  // ONNX's example 5: batch_dims 1 on [2, 2, 2].
  HostTensor data = make(DType::I32, {2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  HostTensor indices = make(DType::I64, {2, 1}, {1, 0}), out(DType::I32, {2, 2});
  ASSERT_TRUE(succeeded(gatherND(data.view(), indices.view(), 1, out.view())));
  EXPECT_TRUE(closeTo(out, {2, 2}, {2, 3, 4, 5}, 0));
  // padding_mask[batch_idx, kv_idx], negative kv indices.
  HostTensor mask = make(DType::Bool, {2, 3}, {1, 1, 0, 1, 0, 0});
  HostTensor pairs = make(DType::I64, {3, 2}, {0, -1, -1, 0, 1, -2}), picked(DType::Bool, {3});
  ASSERT_TRUE(succeeded(gatherND(mask.view(), pairs.view(), 0, picked.view())));
  EXPECT_TRUE(closeTo(picked, {3}, {0, 1, 0}, 0));
  HostTensor bad = make(DType::I64, {2, 1}, {1, 2});
  EXPECT_TRUE(failsWith(gatherND(data.view(), bad.view(), 1, out.view()),
                        "gather_nd: index 2 (element 1) is out of range for a dim of size 2"));
  HostTensor long4(DType::I64, {1, 4}), out0(DType::I32, {1});
  EXPECT_TRUE(failsWith(gatherND(data.view(), long4.view(), 0, out0.view()),
                        "index tuples out of range; expected 1 <= indices.shape[-1] <= 3 but got 4"));
  HostTensor batch3(DType::I64, {3, 1}), out3(DType::I32, {3, 2});
  EXPECT_TRUE(failsWith(gatherND(data.view(), batch3.view(), 1, out3.view()),
                        "batch dims of data [2, 2, 2] and indices [3, 1] differ"));
  EXPECT_TRUE(failsWith(gatherND(data.view(), indices.view(), 2, out.view()),
                        "batch_dims out of range; expected 0 <= batch_dims < 2 but got 2"));
}

TEST(CpuScatterNDTest, MatchesReferenceForEveryReduction) {
  ThreadScope threads(2);
  Rng rng(93);
  struct Case {
    Shape data, indices;
  };
  // Few distinct tuples: repeats on purpose.
  const Case cases[] = {{{8}, {6, 1}},     {{4, 5}, {7, 1}},     {{4, 5}, {9, 2}},
                        {{3, 4, 5}, {2, 3, 2}}, {{2, 512}, {3, 1}}, {{3, 4}, {0, 1}},
                        {{3, 2}, {2, 0}}};
  for (DType type : {DType::F32, DType::I32, DType::I64, DType::F16, DType::U8}) {
    for (ScatterReduction r : {ScatterReduction::None, ScatterReduction::Add, ScatterReduction::Mul,
                               ScatterReduction::Max, ScatterReduction::Min}) {
      for (const Case &c : cases) {
        const int64_t k = c.indices.back();
        Shape updatesShape(c.indices.begin(), c.indices.end() - 1);
        updatesShape.insert(updatesShape.end(), c.data.begin() + k, c.data.end());
        HostTensor data = random(type, c.data, rng, 0, 9);
        HostTensor indices =
            randomTuples(DType::I64, c.indices, Shape(c.data.begin(), c.data.begin() + k), rng);
        HostTensor updates = random(type, updatesShape, rng, 0, 9);
        CTensor want = expectOk(
            cf::scatterND(toConst(data), toConst(indices), toConst(updates), scatterReduction(r)));
        HostTensor out(type, c.data);
        ASSERT_TRUE(
            succeeded(scatterND(data.view(), indices.view(), updates.view(), r, out.view())));
        EXPECT_TRUE(closeTo(out, want, type == DType::F16 ? 1e-3 : 1e-6))
            << dtypeName(type) << " " << scatterReductionName(r) << " " << formatShape(c.data)
            << " " << formatShape(c.indices);
        // In place gives the same.
        ASSERT_TRUE(
            succeeded(scatterND(data.view(), indices.view(), updates.view(), r, data.view())));
        EXPECT_TRUE(sameBits(data, out));
      }
    }
  }
}

TEST(CpuScatterNDTest, HandComputedAndErrors) {
  // transformers merges a padding mask into a 4-D causal mask by element
  // tuples; a repeated tuple keeps the last update.
  HostTensor mask = make(DType::F32, {1, 1, 2, 3}, {0, -9, -9, 0, 0, -9});
  HostTensor tuples = make(DType::I64, {3, 4}, {0, 0, 1, 1, 0, 0, 0, -3, 0, 0, -1, 1});
  HostTensor updates = make(DType::F32, {3}, {-1, -2, -3}), out(DType::F32, {1, 1, 2, 3});
  ASSERT_TRUE(succeeded(scatterND(mask.view(), tuples.view(), updates.view(),
                                  ScatterReduction::None, out.view())));
  EXPECT_TRUE(closeTo(out, {1, 1, 2, 3}, {-2, -9, -9, 0, -3, -9}, 0));
  ASSERT_TRUE(succeeded(scatterND(mask.view(), tuples.view(), updates.view(),
                                  ScatterReduction::Add, out.view())));
  EXPECT_TRUE(closeTo(out, {1, 1, 2, 3}, {-2, -9, -9, 0, -4, -9}, 0));
  HostTensor bad = make(DType::I32, {1, 4}, {0, 0, 2, 0}), one(DType::F32, {1});
  EXPECT_TRUE(failsWith(scatterND(mask.view(), bad.view(), one.view(), ScatterReduction::None,
                                  out.view()),
                        "scatter_nd: index 2 (element 2) is out of range for a dim of size 2"));
  HostTensor wrong(DType::F32, {3, 2});
  EXPECT_TRUE(failsWith(scatterND(mask.view(), tuples.view(), wrong.view(),
                                  ScatterReduction::None, out.view()),
                        "scatter_nd: updates shape differs; expected [3] but got [3, 2]"));
  HostTensor flags(DType::Bool, {4}), flagTuples = make(DType::I64, {1, 1}, {0});
  HostTensor flagUpdates(DType::Bool, {1});
  EXPECT_TRUE(failsWith(scatterND(flags.view(), flagTuples.view(), flagUpdates.view(),
                                  ScatterReduction::Mul, flags.view()),
                        "reduction mul needs integer or float data but got bool"));
}

TEST(CpuCumSumTest, MatchesReferenceInEveryDirection) {
  ThreadScope threads(2);
  Rng rng(94);
  const std::pair<Shape, int64_t> cases[] = {{{7}, 0},       {{3, 5}, 0},   {{3, 5}, 1},
                                             {{2, 3, 300}, 1}, {{4, 600}, 1}, {{2, 0, 3}, 2}};
  for (DType type : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64}) {
    for (const auto &[shape, axis] : cases) {
      for (int flags = 0; flags < 4; ++flags) {
        const bool exclusive = flags & 1, reverse = flags & 2;
        HostTensor x = random(type, shape, rng, -20, 20);
        CTensor want = expectOk(cf::cumSum(toConst(x), axis, exclusive, reverse));
        HostTensor out(type, shape);
        ASSERT_TRUE(succeeded(cumSum(x.view(), axis, exclusive, reverse, out.view())));
        EXPECT_TRUE(closeTo(out, want, type == DType::BF16 ? 1e-2 : type == DType::F16 ? 1e-3 : 1e-6,
                            1e-6))
            << dtypeName(type) << " " << formatShape(shape) << " axis " << axis << " flags "
            << flags;
        // In place gives the same.
        ASSERT_TRUE(succeeded(cumSum(x.view(), axis, exclusive, reverse, x.view())));
        EXPECT_TRUE(sameBits(x, out));
      }
    }
  }
}

TEST(CpuCumSumTest, HandComputedAndErrors) {
  // Position ids from an attention mask: cumsum along the sequence.
  HostTensor mask = make(DType::I64, {2, 4}, {0, 1, 1, 1, 1, 1, 0, 1}), ids(DType::I64, {2, 4});
  ASSERT_TRUE(succeeded(cumSum(mask.view(), 1, false, false, ids.view())));
  EXPECT_TRUE(closeTo(ids, {2, 4}, {0, 1, 2, 3, 1, 2, 2, 3}, 0));
  HostTensor x = make(DType::F32, {3}, {1, 2, 3}), out(DType::F32, {3});
  ASSERT_TRUE(succeeded(cumSum(x.view(), 0, true, true, out.view())));
  EXPECT_TRUE(closeTo(out, {3}, {5, 3, 0}, 0));
  HostTensor bytes(DType::I8, {3});
  EXPECT_TRUE(failsWith(cumSum(bytes.view(), 0, false, false, bytes.view()),
                        "cumsum: needs an int32, int64 or float input but got int8"));
  EXPECT_TRUE(failsWith(cumSum(x.view(), 1, false, false, out.view()), "axis"));
}

TEST(CpuClassifyTest, IsNaNAndIsInf) {
  const double inf = std::numeric_limits<double>::infinity();
  for (DType type : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    HostTensor x = make(type, {5}, {1, std::nan(""), inf, -inf, 0}), out(DType::Bool, {5});
    ASSERT_TRUE(succeeded(isNaN(x.view(), out.view())));
    EXPECT_TRUE(closeTo(out, {5}, {0, 1, 0, 0, 0}, 0)) << dtypeName(type);
    ASSERT_TRUE(succeeded(isInf(x.view(), true, true, out.view())));
    EXPECT_TRUE(closeTo(out, {5}, {0, 0, 1, 1, 0}, 0));
    ASSERT_TRUE(succeeded(isInf(x.view(), false, true, out.view())));
    EXPECT_TRUE(closeTo(out, {5}, {0, 0, 0, 1, 0}, 0));
    ASSERT_TRUE(succeeded(isInf(x.view(), true, false, out.view())));
    EXPECT_TRUE(closeTo(out, {5}, {0, 0, 1, 0, 0}, 0));
  }
  HostTensor ints(DType::I32, {2}), flags(DType::Bool, {2}), floats(DType::F32, {2});
  EXPECT_TRUE(failsWith(isNaN(ints.view(), flags.view()),
                        "is_nan: needs a float input but got int32"));
  EXPECT_TRUE(failsWith(isInf(floats.view(), true, true, floats.view()),
                        "result element type differs; expected bool but got float32"));
}

} // namespace
} // namespace shardc::rt::cpu::test
