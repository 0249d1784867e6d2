//===- ReductionTest.cpp - reductions, softmax, topk ----------------------===//
#include "CudaTestUtil.h"

#include <limits>

namespace shardc::rt::cuda::test {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

/// The shape of a reduction's result.
Shape reducedShape(const Shape &shape, const std::vector<int64_t> &axes, bool keepdims) {
  Shape result;
  for (size_t d = 0; d < shape.size(); ++d) {
    const bool reduced = std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end();
    if (!reduced)
      result.push_back(shape[d]);
    else if (keepdims)
      result.push_back(1);
  }
  return result;
}

TEST(CudaReduction, EveryOpAxesAndType) {
  SHARDC_REQUIRE_GPU();
  Rng rng(1);
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;
  };
  const Case cases[] = {{{4, 5, 6}, {2}},    // rows, a thread per output
                        {{4, 5, 6}, {0}},    // columns
                        {{4, 5, 6}, {0, 2}}, // alternating
                        {{4, 5, 6}, {}},     // nothing reduced
                        {{3, 1, 2}, {1}},    // only a size-1 dim
                        {{2, 3000}, {1}},    // long rows, a block per output
                        {{700, 3}, {0}},     // long columns, a block per output
                        {{6, 50, 40}, {0, 1, 2}}};
  for (const Case &c : cases)
    for (bool keepdims : {true, false})
      for (DType dtype : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64, DType::U8})
        for (const char *kernel : {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min"}) {
          Params params;
          params.set("axes", ints(c.axes));
          params.set("keepdims", ints({keepdims}));
          expectSameAsCpu(kernel, {random(dtype, c.shape, rng, dtype == DType::U8 ? 0 : -50, 50)},
                          {{dtype, reducedShape(c.shape, c.axes, keepdims)}}, params,
                          std::string(kernel) + " " + dtypeName(dtype) + " " +
                              formatShape(c.shape) + " axes " + formatShape(c.axes));
        }
}

TEST(CudaReduction, EmptyAndNaN) {
  SHARDC_REQUIRE_GPU();
  Params params;
  params.set("axes", ints({1}));
  params.set("keepdims", ints({0}));
  for (DType dtype : {DType::F32, DType::I8})
    for (const char *kernel : {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min"})
      expectSameAsCpu(kernel, {HostTensor(dtype, {3, 0})}, {{dtype, {3}}}, params,
                      std::string(kernel) + " empty " + dtypeName(dtype));
  const HostTensor withNaN = values(DType::F32, {2, 3}, {1, kNaN, 3, -kInf, 2, 1});
  for (const char *kernel : {"reduce_sum", "reduce_max", "reduce_min"})
    expectSameAsCpu(kernel, {withNaN}, {{DType::F32, {2}}}, params, std::string(kernel) + " NaN");
}

TEST(CudaSoftmax, RowsAndColumns) {
  SHARDC_REQUIRE_GPU();
  Rng rng(2);
  struct Case {
    Shape shape;
    int64_t axis;
  };
  const Case cases[] = {{{6, 100}, 1},   // a warp per row
                        {{3, 3000}, 1},  // a block per row
                        {{4, 50, 6}, 1}, // columns
                        {{5, 7}, 0},
                        {{1, 1}, 1}};
  for (const Case &c : cases)
    for (DType dtype : {DType::F32, DType::F16, DType::BF16}) {
      Params params;
      params.set("axis", ints({c.axis}));
      expectSameAsCpu("softmax", {random(dtype, c.shape, rng, -10, 10)}, {{dtype, c.shape}}, params,
                      std::string("softmax ") + dtypeName(dtype) + " " + formatShape(c.shape));
    }
  // -inf entries take no weight; a row of -inf, or with a NaN, is NaN.
  Params last;
  last.set("axis", ints({1}));
  expectSameAsCpu("softmax",
                  {values(DType::F32, {3, 3}, {0, -kInf, 1, -kInf, -kInf, -kInf, 1, kNaN, 2})},
                  {{DType::F32, {3, 3}}}, last, "softmax specials");
}

TEST(CudaTopK, SortedLikeTheCpu) {
  SHARDC_REQUIRE_GPU();
  Rng rng(3);
  struct Case {
    Shape shape;
    int64_t axis, k;
  };
  const Case cases[] = {{{16, 8}, 1, 2},    // routing: few experts, many tokens
                        {{3, 100}, 1, 100}, // a full sort
                        {{4, 9, 5}, 1, 3},  // a middle axis
                        {{2, 5000}, 1, 7},  // long rows: selection passes
                        {{3, 2048}, 1, 5},  // the longest sorted row
                        {{4, 6}, 1, 0},
                        {{5, 1}, 1, 1}}; // an axis of 1: one warp, not 0 threads
  for (const Case &c : cases)
    for (DType dtype : {DType::F32, DType::F16, DType::I64, DType::Bool, DType::F64})
      for (bool largest : {true, false}) {
        Params params;
        params.set("axis", ints({c.axis}));
        params.set("k", ints({c.k}));
        params.set("largest", ints({largest}));
        Shape out = c.shape;
        out[size_t(c.axis)] = c.k;
        // Few distinct values, so that ties (lower index first) are common.
        expectSameAsCpu("topk", {random(dtype, c.shape, rng, -5, 5)},
                        {{dtype, out}, {DType::I64, out}}, params,
                        std::string("topk ") + dtypeName(dtype) + " " + formatShape(c.shape) +
                            (largest ? " largest" : " smallest"),
                        /*exact=*/true);
      }
  // NaN orders above every number.
  Params params;
  params.set("axis", ints({0}));
  params.set("k", ints({4}));
  for (int64_t largest : {0, 1}) {
    params.set("largest", ints({largest}));
    expectSameAsCpu("topk", {values(DType::F32, {6}, {1, kNaN, -kInf, kInf, kNaN, 0})},
                    {{DType::F32, {4}}, {DType::I64, {4}}}, params, "topk NaN", true);
  }
}

} // namespace
} // namespace shardc::rt::cuda::test
