//===- MovementTest.cpp - copies, gather, scatter_elements, trilu ---------===//
#include "CudaTestUtil.h"

namespace shardc::rt::cuda::test {
namespace {

// One type per element size, and bf16 for 2 bytes of floats.
const DType kTypes[] = {DType::Bool, DType::BF16, DType::F32, DType::I64};

std::string describe(const std::string &kernel, DType dtype) {
  return kernel + " " + dtypeName(dtype);
}

TEST(CudaMovement, Transpose) {
  SHARDC_REQUIRE_GPU();
  Rng rng(1);
  const Shape shape = {2, 3, 4, 5};
  const std::vector<int64_t> perms[] = {{0, 2, 1, 3}, {3, 2, 1, 0}, {0, 1, 3, 2}, {0, 1, 2, 3}};
  for (DType dtype : kTypes)
    for (const auto &perm : perms) {
      Shape out(4);
      for (size_t i = 0; i < 4; ++i)
        out[i] = shape[size_t(perm[i])];
      Params params;
      params.set("perm", ints(perm));
      expectSameAsCpu("transpose", {random(dtype, shape, rng, -9, 9)}, {{dtype, out}}, params,
                      describe("transpose " + formatShape(perm), dtype), true);
    }
}

TEST(CudaMovement, Slice) {
  SHARDC_REQUIRE_GPU();
  Rng rng(2);
  struct Case {
    std::vector<int64_t> starts, ends, steps;
    Shape out;
  };
  const Case cases[] = {{{0, 1, 0}, {4, 5, 8}, {1, 1, 1}, {4, 4, 8}},
                        {{3, 4, 7}, {-1, -1, -1}, {-1, -2, -3}, {4, 3, 3}},
                        {{1, 0, 2}, {2, 6, 6}, {1, 5, 2}, {1, 2, 2}},
                        {{0, 0, 8}, {4, 6, 8}, {1, 1, 1}, {4, 6, 0}}};
  for (DType dtype : kTypes)
    for (const Case &c : cases) {
      Params params;
      params.set("starts", ints(c.starts));
      params.set("ends", ints(c.ends));
      params.set("steps", ints(c.steps));
      expectSameAsCpu("slice", {random(dtype, {4, 6, 8}, rng, -9, 9)}, {{dtype, c.out}}, params,
                      describe("slice to " + formatShape(c.out), dtype), true);
    }
}

TEST(CudaMovement, ConcatSplitExpand) {
  SHARDC_REQUIRE_GPU();
  Rng rng(3);
  for (DType dtype : kTypes) {
    // Axis 2 with 16-byte-divisible pieces (wide copies) and odd ones.
    for (int64_t axis : {0, 1, 2}) {
      std::vector<Shape> pieces = {{2, 3, 8}, {2, 3, 8}, {2, 3, 8}};
      for (size_t p = 0; p < pieces.size(); ++p)
        pieces[p][size_t(axis)] = int64_t(p * 3 + 1);
      Shape out = pieces[0];
      out[size_t(axis)] = 1 + 4 + 7;
      std::vector<HostTensor> inputs;
      std::vector<Output> outputs;
      for (const Shape &piece : pieces) {
        inputs.push_back(random(dtype, piece, rng, -9, 9));
        outputs.push_back({dtype, piece});
      }
      Params params;
      params.set("axis", ints({axis}));
      expectSameAsCpu("concat", inputs, {{dtype, out}}, params,
                      describe("concat axis " + std::to_string(axis), dtype), true);
      expectSameAsCpu("split", {random(dtype, out, rng, -9, 9)}, outputs, params,
                      describe("split axis " + std::to_string(axis), dtype), true);
    }
    expectSameAsCpu(
        "concat", {random(dtype, {4, 64}, rng, -9, 9), random(dtype, {4, 32}, rng, -9, 9)},
        {{dtype, {4, 96}}},
        [] {
          Params params;
          params.set("axis", ints({1}));
          return params;
        }(),
        describe("concat of aligned rows", dtype), true);
    expectSameAsCpu("expand", {random(dtype, {3, 1, 5}, rng, -9, 9)}, {{dtype, {2, 3, 4, 5}}},
                    Params(), describe("expand", dtype), true);
    expectSameAsCpu("copy", {random(dtype, {3, 7}, rng, -9, 9)}, {{dtype, {3, 7}}}, Params(),
                    describe("copy", dtype), true);
  }
}

TEST(CudaMovement, Gather) {
  SHARDC_REQUIRE_GPU();
  Rng rng(4);
  for (DType dtype : kTypes)
    for (DType indexType : {DType::I64, DType::I32}) {
      Params axis0, axis1;
      axis0.set("axis", ints({0}));
      axis1.set("axis", ints({1}));
      // An embedding lookup: whole rows, moved in 16-byte units.
      expectSameAsCpu(
          "gather", {random(dtype, {50, 64}, rng, -9, 9), random(indexType, {3, 7}, rng, -50, 49)},
          {{dtype, {3, 7, 64}}}, axis0, describe("embedding", dtype), true);
      expectSameAsCpu(
          "gather", {random(dtype, {4, 10, 3}, rng, -9, 9), random(indexType, {2, 5}, rng, -10, 9)},
          {{dtype, {4, 2, 5, 3}}}, axis1, describe("gather axis 1", dtype), true);
    }
}

TEST(CudaMovement, ScatterElements) {
  SHARDC_REQUIRE_GPU();
  Rng rng(5);
  for (DType dtype : {DType::F32, DType::BF16, DType::I32, DType::I64})
    for (int64_t reduction = 0; reduction < 5; ++reduction)
      for (int64_t axis : {0, 1}) {
        Params params;
        params.set("axis", ints({axis}));
        params.set("reduction", ints({reduction}));
        // Indices with repeats (the last update wins with none), negatives.
        expectSameAsCpu("scatter_elements",
                        {random(dtype, {5, 6}, rng, -9, 9), random(DType::I64, {3, 4}, rng, -5, 4),
                         random(dtype, {3, 4}, rng, -9, 9)},
                        {{dtype, {5, 6}}}, params,
                        describe("scatter_elements reduction " + std::to_string(reduction) +
                                     " axis " + std::to_string(axis),
                                 dtype));
      }
  Params params;
  params.set("axis", ints({0}));
  expectSameAsCpu("scatter_elements",
                  {random(DType::Bool, {4}, rng), values(DType::I32, {3}, {3, 0, 3}),
                   random(DType::Bool, {3}, rng)},
                  {{DType::Bool, {4}}}, params, "scatter_elements bool", true);
}

TEST(CudaMovement, Trilu) {
  SHARDC_REQUIRE_GPU();
  Rng rng(6);
  for (DType dtype : kTypes)
    for (int64_t k : {-1, 0, 2})
      for (int64_t upper : {0, 1}) {
        Params params;
        params.set("k", ints({k}));
        params.set("upper", ints({upper}));
        expectSameAsCpu("trilu", {random(dtype, {2, 5, 7}, rng, -9, 9)}, {{dtype, {2, 5, 7}}},
                        params, describe("trilu k " + std::to_string(k), dtype), true);
      }
}

} // namespace
} // namespace shardc::rt::cuda::test
