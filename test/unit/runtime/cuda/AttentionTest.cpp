//===- AttentionTest.cpp - attention and rotary embedding -----------------===//
#include "CudaTestUtil.h"

#include <cmath>
#include <limits>

namespace shardc::rt::cuda::test {
namespace {

struct Case {
  const char *name;
  Shape batch;
  int64_t headsQ, headsKv, seqQ, seqK, headDim, valueDim;
  bool causal;
};

const Case kCases[] = {{"self, causal", {2}, 4, 4, 37, 37, 64, 64, true},
                       {"grouped query heads", {2}, 8, 2, 20, 20, 64, 64, true},
                       {"multi-query, not causal", {1}, 4, 1, 17, 45, 32, 32, false},
                       {"KV cache: fewer queries", {1}, 2, 2, 5, 40, 64, 64, true},
                       {"more queries than keys", {1}, 2, 2, 40, 5, 64, 64, true},
                       {"one query", {3}, 2, 2, 1, 100, 128, 128, true},
                       {"odd head sizes", {2}, 3, 3, 19, 23, 80, 48, false},
                       {"tiny head size", {1}, 1, 1, 9, 9, 3, 5, true},
                       {"head size 256", {1}, 2, 2, 33, 33, 256, 256, true},
                       {"no batch dims", {}, 2, 1, 16, 70, 16, 16, false},
                       {"two batch dims", {2, 2}, 2, 2, 8, 8, 64, 64, true},
                       // From 32 query rows F16/BF16 run on tensor cores (head sizes <= 128).
                       {"long causal", {2}, 4, 4, 256, 256, 64, 64, true},
                       {"long, grouped, odd sizes", {1}, 6, 2, 70, 90, 40, 24, false},
                       {"long, head size 128", {1}, 2, 2, 64, 200, 128, 128, true}};

Shape withBatch(const Shape &batch, std::initializer_list<int64_t> dims) {
  Shape shape = batch;
  shape.insert(shape.end(), dims);
  return shape;
}

TEST(CudaAttention, MatchesTheCpu) {
  SHARDC_REQUIRE_GPU();
  Rng rng(1);
  for (const Case &c : kCases)
    for (DType dtype : {DType::F32, DType::F16, DType::BF16}) {
      Params params;
      params.set("scale", number(1.0 / std::sqrt(double(c.headDim))));
      params.set("causal", ints({c.causal}));
      const Shape out = withBatch(c.batch, {c.headsQ, c.seqQ, c.valueDim});
      expectSameAsCpu(
          "attention",
          {random(dtype, withBatch(c.batch, {c.headsQ, c.seqQ, c.headDim}), rng, -2, 2),
           random(dtype, withBatch(c.batch, {c.headsKv, c.seqK, c.headDim}), rng, -2, 2),
           random(dtype, withBatch(c.batch, {c.headsKv, c.seqK, c.valueDim}), rng, -2, 2)},
          {{dtype, out}}, params, std::string(c.name) + " " + dtypeName(dtype));
    }
}

TEST(CudaAttention, Masks) {
  SHARDC_REQUIRE_GPU();
  Rng rng(2);
  const int64_t B = 2, H = 4, Sk = 33, D = 64;
  // 21 query rows: the CUDA-core kernel; 45: tensor cores for bf16.
  for (int64_t Sq : {21, 45})
    for (DType dtype : {DType::F32, DType::BF16}) {
      const HostTensor q = random(dtype, {B, H, Sq, D}, rng, -2, 2);
      const HostTensor k = random(dtype, {B, H, Sk, D}, rng, -2, 2);
      const HostTensor v = random(dtype, {B, H, Sk, D}, rng, -2, 2);
      for (bool causal : {false, true}) {
        Params params;
        params.set("scale", number(0.125));
        params.set("causal", ints({causal}));
        const std::string what =
            std::string(dtypeName(dtype)) + " Sq=" + std::to_string(Sq) + (causal ? " causal" : "");
        // A padding mask per batch and key, broadcast over heads and queries;
        // some rows see nothing at all when causal.
        HostTensor padding = random(DType::Bool, {B, 1, 1, Sk}, rng);
        expectSameAsCpu("attention", {q, k, v, padding}, {{dtype, {B, H, Sq, D}}}, params,
                        "bool mask " + what);
        // An additive mask over [Sq, Sk], with -inf entries.
        HostTensor additive = random(dtype, {Sq, Sk}, rng, -3, 1);
        for (int64_t i = 0; i < additive.numel(); i += 5)
          set(additive, i, -std::numeric_limits<double>::infinity());
        expectSameAsCpu("attention", {q, k, v, additive}, {{dtype, {B, H, Sq, D}}}, params,
                        "float mask " + what);
      }
    }
}

TEST(CudaAttention, MaskedValuesNeverReachTheOutput) {
  SHARDC_REQUIRE_GPU();
  // A KV cache whose unused slots hold NaN, masked out: the output is finite.
  Rng rng(3);
  const int64_t Sk = 40, used = 25;
  HostTensor v = random(DType::F32, {1, 2, Sk, 32}, rng);
  HostTensor k = random(DType::F32, {1, 2, Sk, 32}, rng);
  HostTensor mask(DType::Bool, {1, 1, 1, Sk});
  for (int64_t j = 0; j < Sk; ++j)
    set(mask, j, j < used);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t j = used; j < Sk; ++j)
      for (int64_t e = 0; e < 32; ++e) {
        set(v, (h * Sk + j) * 32 + e, std::numeric_limits<double>::quiet_NaN());
        set(k, (h * Sk + j) * 32 + e, std::numeric_limits<double>::quiet_NaN());
      }
  Params params;
  params.set("scale", number(0.2));
  expectSameAsCpu("attention", {random(DType::F32, {1, 2, 3, 32}, rng), k, v, mask},
                  {{DType::F32, {1, 2, 3, 32}}}, params, "NaN in masked slots");
}

TEST(CudaRotary, HalvesAndPairs) {
  SHARDC_REQUIRE_GPU();
  Rng rng(4);
  const int64_t B = 2, H = 3, S = 7, F = 64;
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    for (int64_t rotated : {F, int64_t(32)})
      for (bool interleaved : {false, true}) {
        Params params;
        params.set("interleaved", ints({interleaved}));
        // A table per position, broadcast over batch and heads.
        expectSameAsCpu("rotary",
                        {random(dtype, {B, H, S, F}, rng, -2, 2),
                         random(dtype, {S, rotated}, rng, -1, 1),
                         random(dtype, {S, rotated}, rng, -1, 1)},
                        {{dtype, {B, H, S, F}}}, params,
                        std::string("rotary ") + dtypeName(dtype) +
                            " R=" + std::to_string(rotated) + (interleaved ? " interleaved" : ""));
      }
}

} // namespace
} // namespace shardc::rt::cuda::test
