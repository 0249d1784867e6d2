//===- PackedLinearTest.cpp - a linear step's GEMM, prepared once ---------===//
#include "TestUtil.h"

#include "runtime/cpu/CpuBackend.h"
#include "runtime/cpu/Fused.h"
#include "runtime/cpu/PackedLinear.h"
#include "runtime/kernels/LinearEpilogueOps.h"

#include <tuple>

#include <sys/mman.h>
#include <unistd.h>

namespace shardc::rt::cpu::test {
namespace {

/// The prepared GEMM of these operands; fails the test where none is made.
std::unique_ptr<PackedLinear> prepared(HostTensor &x, HostTensor &w, HostTensor *bias,
                                       bool transposed, HostTensor &out) {
  auto packed = PackedLinear::prepare(x.view(), w.view(), bias ? ptr(bias->view()) : nullptr,
                                      transposed, out.view(), /*constantWeight=*/true);
  EXPECT_TRUE(packed.ok()) << packed.status().message();
  return packed.ok() ? std::move(*packed) : nullptr;
}

// The packed path and sgemm's (linear) compute the same product: both are
// checked against the product in double, and against each other within
// fp32 rounding.
TEST(CpuPackedLinearTest, MatchesTheUnpackedLinear) {
  Rng rng(31);
  for (bool transposed : {false, true})
    for (bool withBias : {false, true})
      for (const Shape &xs : {Shape{2, 5, 19}, Shape{19}, Shape{128, 64}}) {
        const int64_t k = xs.back(), n = 37;
        HostTensor x = random(DType::F32, xs, rng);
        HostTensor w = random(DType::F32, transposed ? Shape{n, k} : Shape{k, n}, rng);
        HostTensor b = random(DType::F32, {n}, rng);
        Shape shape = xs;
        shape.back() = n;
        HostTensor packedOut(DType::F32, shape), plainOut(DType::F32, shape);
        HostTensor *bias = withBias ? &b : nullptr;
        auto packed = prepared(x, w, bias, transposed, packedOut);
        ASSERT_TRUE(packed);
        ASSERT_TRUE(
            succeeded(packed->run(x.view(), bias ? ptr(b.view()) : nullptr, packedOut.view())));
        ASSERT_TRUE(succeeded(linear(x.view(), w.view(), bias ? ptr(b.view()) : nullptr, transposed,
                                     plainOut.view())));
        EXPECT_TRUE(closeTo(packedOut, shape, valuesOf(plainOut), 1e-5, 1e-5))
            << "transposed=" << transposed << " bias=" << withBias << " " << formatShape(xs);
      }
}

// The packed weight is a copy: the step reads new inputs each run, and a
// later change of the stored weight is not seen (the executor only packs
// constant weights).
TEST(CpuPackedLinearTest, RunsOnEachRunsInputFromThePackedCopy) {
  HostTensor x = make(DType::F32, {1, 2}, {1, 2});
  HostTensor w = make(DType::F32, {2, 2}, {1, 0, 0, 1});
  HostTensor out(DType::F32, {1, 2});
  auto packed = prepared(x, w, nullptr, false, out);
  ASSERT_TRUE(packed);
  w = make(DType::F32, {2, 2}, {5, 5, 5, 5}); // the original, changed after packing
  ASSERT_TRUE(succeeded(packed->run(x.view(), nullptr, out.view())));
  EXPECT_TRUE(closeTo(out, {1, 2}, {1, 2}, 0));
  x = make(DType::F32, {1, 2}, {3, -4});
  ASSERT_TRUE(succeeded(packed->run(x.view(), nullptr, out.view())));
  EXPECT_TRUE(closeTo(out, {1, 2}, {3, -4}, 0));
}

// The executor may let a packed weight's stored bytes leave memory
// (PrepareInput::hold): the step holds them while it packs, and lets go;
// a step that finds its block packed by another does not hold them at all.
// A hold that fails (the file changed since the load) fails the prepare
// with its message.
TEST(CpuPackedLinearTest, HoldsTheStoredWeightOnlyWhileItPacksIt) {
  ThreadScope threads(1);
  Rng rng(31);
  HostTensor x = random(DType::F32, {4, 8}, rng), w = random(DType::F32, {8, 24}, rng);
  HostTensor out(DType::F32, {4, 24}), other(DType::F32, {4, 24});
  int holds = 0, holding = 0;
  HoldWeight hold = [&]() -> StatusOr<WeightHold> {
    ++holds;
    ++holding;
    return WeightHold(w.bytes.data(), [&](const void *) { --holding; });
  };
  auto packed = PackedLinear::prepare(x.view(), w.view(), nullptr, false, out.view(), true, {},
                                      {nullptr, 0}, hold);
  ASSERT_TRUE(packed.ok() && *packed) << packed.status().message();
  EXPECT_EQ(holds, 1);
  EXPECT_EQ(holding, 0) << "let go once packed";
  auto sharing = PackedLinear::prepare(x.view(), w.view(), nullptr, false, other.view(), true, {},
                                       {nullptr, 0}, hold);
  ASSERT_TRUE(sharing.ok() && *sharing) << sharing.status().message();
  EXPECT_EQ(holds, 1) << "the block was packed already";
  ASSERT_TRUE(succeeded((*packed)->run(x.view(), nullptr, out.view())));
  EXPECT_TRUE(closeTo(out, {4, 24}, naiveLinear(x, w, nullptr, false), 1e-5, 1e-5));

  HostTensor fresh = random(DType::F32, {8, 24}, rng);
  auto failed = PackedLinear::prepare(
      x.view(), fresh.view(), nullptr, false, out.view(), true, {}, {nullptr, 0},
      []() -> StatusOr<WeightHold> {
        return Status::error("w.safetensors: changed since it was loaded");
      });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "w.safetensors: changed since it was loaded");
}

// Where the stored weight is out of memory between holds, the step reads it
// only under one: packing at prepare, and packing again for another thread
// count (if the layout or panels change: on oneDNN's AVX2 path, which
// CpuPackedLinearTest.OnTheAvx2Path runs on any x86 machine), once for all
// its panels. Here the weight's pages are unreadable while nothing holds
// them, so a read outside a hold faults.
TEST(CpuPackedLinearTest, ReadsTheStoredWeightOnlyUnderItsHold) {
  Rng rng(37);
  HostTensor x = random(DType::F32, {64, 48}, rng), w = random(DType::F32, {48, 5000}, rng);
  HostTensor one(DType::F32, {64, 5000}), two(DType::F32, {64, 5000});
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  const size_t bytes = (w.bytes.size() + page - 1) / page * page;
  void *pages = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(pages, MAP_FAILED);
  std::memcpy(pages, w.bytes.data(), w.bytes.size());
  ASSERT_EQ(::mprotect(pages, bytes, PROT_NONE), 0);
  const TensorView stored{pages, DType::F32, {48, 5000}};
  int holds = 0, holding = 0;
  HoldWeight hold = [&]() -> StatusOr<WeightHold> {
    ++holds;
    if (holding++ == 0) {
      EXPECT_EQ(::mprotect(pages, bytes, PROT_READ), 0);
    }
    return WeightHold(pages, [&](const void *) {
      if (--holding == 0) {
        EXPECT_EQ(::mprotect(pages, bytes, PROT_NONE), 0);
      }
    });
  };
  std::unique_ptr<PackedLinear> packed;
  {
    ThreadScope threads(1);
    auto made = PackedLinear::prepare(x.view(), stored, nullptr, false, one.view(), true, {},
                                      {nullptr, 0}, hold);
    ASSERT_TRUE(made.ok() && *made) << made.status().message();
    packed = std::move(*made);
    EXPECT_EQ(holds, 1);
    ASSERT_TRUE(succeeded(packed->run(x.view(), nullptr, one.view())));
  }
  {
    ThreadScope threads(2);
    ASSERT_TRUE(succeeded(packed->run(x.view(), nullptr, two.view())));
  }
  EXPECT_EQ(holding, 0);
  EXPECT_LE(holds, 2) << "one hold for every panel packed again";
  EXPECT_TRUE(closeTo(one, {64, 5000}, naiveLinear(x, w, nullptr, false), 1e-5, 1e-5));
  EXPECT_TRUE(closeTo(two, {64, 5000}, naiveLinear(x, w, nullptr, false), 1e-5, 1e-5));
  packed.reset();
  ::munmap(pages, bytes);
}

// A repack whose hold fails (the file changed since the load) fails that
// run with the hold's message, and leaves the step to build again in the
// next run, even one back on the thread count it was built for.
TEST(CpuPackedLinearTest, AFailedRepackIsTriedAgain) {
  Rng rng(41);
  HostTensor x = random(DType::F32, {64, 48}, rng), w = random(DType::F32, {48, 5000}, rng);
  HostTensor out(DType::F32, {64, 5000});
  bool readable = true;
  HoldWeight hold = [&]() -> StatusOr<WeightHold> {
    if (!readable)
      return Status::error("w.safetensors: changed since it was loaded");
    return WeightHold(w.bytes.data(), [](const void *) {});
  };
  std::unique_ptr<PackedLinear> packed;
  {
    ThreadScope threads(1);
    auto made = PackedLinear::prepare(x.view(), w.view(), nullptr, false, out.view(), true, {},
                                      {nullptr, 0}, hold);
    ASSERT_TRUE(made.ok() && *made) << made.status().message();
    packed = std::move(*made);
  }
  readable = false;
  {
    ThreadScope threads(2);
    // Only where the panels or layout change with the threads (AVX2).
    Status repacked = packed->run(x.view(), nullptr, out.view());
    if (!repacked.ok()) {
      EXPECT_EQ(repacked.message(), "w.safetensors: changed since it was loaded");
    }
  }
  readable = true;
  {
    ThreadScope threads(1);
    ASSERT_TRUE(succeeded(packed->run(x.view(), nullptr, out.view())));
  }
  EXPECT_TRUE(closeTo(out, {64, 5000}, naiveLinear(x, w, nullptr, false), 1e-5, 1e-5));
}

// A primitive is sized for the threads there were when it was made; after
// setNumThreads it is made again (here: the result split over two threads,
// each with its own slice of the weight) and still gives the product.
TEST(CpuPackedLinearTest, FollowsAChangeOfThreadCount) {
  Rng rng(5);
  HostTensor x = random(DType::F32, {64, 48}, rng), w = random(DType::F32, {48, 200}, rng);
  HostTensor one(DType::F32, {64, 200}), two(DType::F32, {64, 200});
  std::unique_ptr<PackedLinear> packed;
  {
    ThreadScope threads(1);
    packed = prepared(x, w, nullptr, false, one);
    ASSERT_TRUE(packed);
    ASSERT_TRUE(succeeded(packed->run(x.view(), nullptr, one.view())));
  }
  {
    ThreadScope threads(2);
    ASSERT_TRUE(succeeded(packed->run(x.view(), nullptr, two.view())));
  }
  EXPECT_TRUE(closeTo(two, {64, 200}, naiveLinear(x, w, nullptr, false), 1e-5, 1e-5));
  EXPECT_TRUE(closeTo(one, {64, 200}, naiveLinear(x, w, nullptr, false), 1e-5, 1e-5));
}

// Not prepared: a weight computed at run time, other element types, and
// empty products; those steps keep the sgemm path.
TEST(CpuPackedLinearTest, LeavesOtherStepsUnprepared) {
  HostTensor x(DType::F32, {4, 8}), w(DType::F32, {8, 3}), out(DType::F32, {4, 3});
  auto dynamic = PackedLinear::prepare(x.view(), w.view(), nullptr, false, out.view(), false);
  ASSERT_TRUE(dynamic.ok());
  EXPECT_EQ(*dynamic, nullptr);
  HostTensor xh(DType::F16, {4, 8}), wh(DType::F16, {8, 3}), outh(DType::F16, {4, 3});
  auto half = PackedLinear::prepare(xh.view(), wh.view(), nullptr, false, outh.view(), true);
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(*half, nullptr);
  HostTensor x0(DType::F32, {0, 8}), out0(DType::F32, {0, 3});
  auto empty = PackedLinear::prepare(x0.view(), w.view(), nullptr, false, out0.view(), true);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, nullptr);
}

// A row of a plain packed weight is a whole number of cache lines, an odd
// number: the 3072-wide rows of GPT-2's MLP (12 KiB, three 4 KiB pages) got
// one line more, which doubled sgemm's speed on them.
TEST(CpuPackedLinearTest, PadsRowsToAnOddNumberOfCacheLines) {
  EXPECT_EQ(paddedRowStride(1), 16);
  EXPECT_EQ(paddedRowStride(16), 16);
  EXPECT_EQ(paddedRowStride(17), 48);
  EXPECT_EQ(paddedRowStride(32), 48);
  EXPECT_EQ(paddedRowStride(768), 784);
  EXPECT_EQ(paddedRowStride(3072), 3088);
  EXPECT_EQ(paddedRowStride(50257), 50288);
}

/// The panels of an n-wide result over `threads` as (begin, width).
std::vector<std::pair<int64_t, int64_t>> spans(int64_t n, int threads) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const ColumnPanel &panel : columnPanels(n, threads))
    out.push_back({panel.begin, panel.width});
  return out;
}
using Spans = std::vector<std::pair<int64_t, int64_t>>;

/// Whether `panels` tile [0, n) in order, each starting on a cache line and
/// at most `widest` wide.
void expectTiling(const std::vector<ColumnPanel> &panels, int64_t n, int64_t widest) {
  int64_t next = 0;
  for (const ColumnPanel &panel : panels) {
    EXPECT_EQ(panel.begin, next);
    EXPECT_EQ(panel.begin % 16, 0);
    EXPECT_GT(panel.width, 0);
    EXPECT_LE(panel.width, widest);
    next += panel.width;
  }
  EXPECT_EQ(next, n);
}

// On one thread, results up to 4096 wide stay whole; wider ones are cut into
// equal panels of whole cache lines, none wider than 1024.
TEST(CpuPackedLinearTest, CutsWideResultsIntoColumnPanels) {
  EXPECT_EQ(spans(37, 1), (Spans{{0, 37}}));
  EXPECT_EQ(spans(4096, 1), (Spans{{0, 4096}}));
  EXPECT_EQ(spans(4097, 1), (Spans{{0, 832}, {832, 832}, {1664, 832}, {2496, 832}, {3328, 769}}));
  EXPECT_EQ(spans(8192, 1).size(), 8u);
  const std::vector<ColumnPanel> head = columnPanels(50257, 1);
  EXPECT_EQ(head.size(), 50u);
  EXPECT_EQ(head.front().width, 1008);
  expectTiling(head, 50257, 1024);
  EXPECT_EQ(spans(37, 0), (Spans{{0, 37}}));
}

// On several threads, panels about 384 wide, as many as a multiple of the
// threads; none under 64 columns, down to one panel for a small result.
TEST(CpuPackedLinearTest, CutsIntoPanelsTheThreadsShareOut) {
  EXPECT_EQ(spans(768, 2), (Spans{{0, 384}, {384, 384}}));
  EXPECT_EQ(spans(1024, 2), (Spans{{0, 256}, {256, 256}, {512, 256}, {768, 256}}));
  EXPECT_EQ(spans(3072, 2).size(), 8u);
  expectTiling(columnPanels(3072, 2), 3072, 384);
  EXPECT_EQ(spans(770, 3), (Spans{{0, 272}, {272, 272}, {544, 226}}));
  EXPECT_EQ(spans(100, 2), (Spans{{0, 100}}));
  EXPECT_EQ(spans(128, 4), (Spans{{0, 64}, {64, 64}}));
  const std::vector<ColumnPanel> head = columnPanels(50257, 2);
  EXPECT_EQ(head.size(), 131u);
  expectTiling(head, 50257, 384);
}

// A result wide enough to be cut into panels, on one thread and split over
// three: each panel reads its own columns of the weight (either layout), of
// the bias and of the epilogue's extra inputs, and writes its own columns.
TEST(CpuPackedLinearTest, PanelsComputeTheWholeProduct) {
  Rng rng(43);
  const int64_t m = 3, k = 20, n = 5000;
  const LinearEpilogue swiglu{{"silu", "mul"}, {0, 2, 1}};
  for (int threads : {1, 3})
    for (bool transposed : {false, true}) {
      ThreadScope scope(threads);
      HostTensor x = random(DType::F32, {m, k}, rng);
      HostTensor w = random(DType::F32, transposed ? Shape{n, k} : Shape{k, n}, rng);
      HostTensor b = random(DType::F32, {n}, rng), up = random(DType::F32, {m, n}, rng);
      HostTensor plain(DType::F32, {m, n}), out(DType::F32, {m, n});
      auto bare = prepared(x, w, &b, transposed, plain);
      ASSERT_TRUE(bare);
      ASSERT_TRUE(succeeded(bare->run(x.view(), ptr(b.view()), plain.view())));
      EXPECT_TRUE(closeTo(plain, {m, n}, naiveLinear(x, w, &b, transposed), 1e-5, 1e-5))
          << "threads=" << threads << " transposed=" << transposed;

      const std::vector<TensorView> extras{up.view()};
      auto gated = PackedLinear::prepare(x.view(), w.view(), ptr(b.view()), transposed, out.view(),
                                         true, swiglu, extras);
      ASSERT_TRUE(gated.ok() && *gated) << gated.status().message();
      ASSERT_TRUE(succeeded((*gated)->run(x.view(), ptr(b.view()), out.view(), extras)));
      HostTensor want(DType::F32, {m, n});
      const std::vector<TensorView> inputs{plain.view(), up.view()};
      ASSERT_TRUE(succeeded(fused(inputs, swiglu.ops, swiglu.args, want.view())));
      EXPECT_TRUE(closeTo(out, {m, n}, valuesOf(want), 1e-5, 1e-5))
          << "threads=" << threads << " transposed=" << transposed;
    }
}

/// An epilogue over [result, extra] and its name for messages.
struct EpilogueCase {
  const char *name;
  LinearEpilogue epilogue;
  int extras;
};

const EpilogueCase kEpilogues[] = {
    {"gelu", {{"gelu"}, {0}}, 0},
    {"gelu_tanh", {{"gelu_tanh"}, {0}}, 0},
    {"relu, sigmoid", {{"relu", "sigmoid"}, {0, 1}}, 0},
    {"tanh", {{"tanh"}, {0}}, 0},
    {"residual add", {{"add"}, {0, 1}}, 1},
    {"swiglu", {{"silu", "mul"}, {0, 2, 1}}, 1},
    {"sub, div, max, min", {{"sub", "div", "max", "min"}, {0, 1, 3, 2, 4, 1, 5, 2}}, 2},
};

/// The result every path must give: the plain GEMM, then the fused kernel
/// on it (out of place).
HostTensor reference(HostTensor &x, HostTensor &w, HostTensor &b, std::vector<HostTensor> &extras,
                     const LinearEpilogue &epilogue, const Shape &shape) {
  HostTensor gemm(DType::F32, shape), out(DType::F32, shape);
  EXPECT_TRUE(succeeded(linear(x.view(), w.view(), ptr(b.view()), false, gemm.view())));
  std::vector<TensorView> inputs{gemm.view()};
  for (HostTensor &extra : extras)
    inputs.push_back(extra.view());
  EXPECT_TRUE(succeeded(fused(inputs, epilogue.ops, epilogue.args, out.view())));
  return out;
}

// The epilogue as post-ops of the packed GEMM, and the kernel table's
// linear with the epilogue in its params on both paths (packed: a prepared
// state; a weight computed at run time: GEMM, then the fused kernel in place).
TEST(CpuPackedLinearTest, EpiloguesMatchTheFusedKernelOnTheResult) {
  Rng rng(17);
  const Shape shape{2, 3, 24};
  for (const EpilogueCase &c : kEpilogues) {
    HostTensor x = random(DType::F32, {2, 3, 20}, rng), w = random(DType::F32, {20, 24}, rng);
    HostTensor b = random(DType::F32, {24}, rng);
    std::vector<HostTensor> extras;
    for (int e = 0; e < c.extras; ++e) {
      extras.push_back(random(DType::F32, shape, rng));
      // Away from zero: "div" divides by extra 1.
      for (int64_t i = 0; i < extras.back().numel(); ++i)
        reinterpret_cast<float *>(extras.back().bytes.data())[i] += 3.0f;
    }
    const std::vector<double> want = valuesOf(reference(x, w, b, extras, c.epilogue, shape));

    std::vector<TensorView> extraViews;
    for (HostTensor &extra : extras)
      extraViews.push_back(extra.view());
    HostTensor packedOut(DType::F32, shape);
    auto packed = PackedLinear::prepare(x.view(), w.view(), ptr(b.view()), false, packedOut.view(),
                                        true, c.epilogue, extraViews);
    ASSERT_TRUE(packed.ok() && *packed) << c.name << ": " << packed.status().message();
    ASSERT_TRUE(succeeded((*packed)->run(x.view(), ptr(b.view()), packedOut.view(), extraViews)));
    EXPECT_TRUE(closeTo(packedOut, shape, want, 1e-5, 1e-5)) << c.name;

    Params params;
    params.set("transpose_weight", Param{{0}, {}, {}});
    params.set("epilogue_ops", Param{{}, {}, c.epilogue.ops});
    params.set("epilogue_args", Param{c.epilogue.args, {}, {}});
    params.set("epilogue_inputs", Param{{c.extras}, {}, {}});
    std::vector<TensorView> inputs{x.view(), w.view(), b.view()};
    inputs.insert(inputs.end(), extraViews.begin(), extraViews.end());
    HostTensor tableOut(DType::F32, shape);
    const std::vector<TensorView> outputs{tableOut.view()};
    KernelCall call{inputs, outputs, params};
    ASSERT_TRUE(succeeded(kernelTable().find("linear")(call))) << c.name;
    EXPECT_TRUE(closeTo(tableOut, shape, want, 1e-5, 1e-5)) << c.name << " (unprepared)";
    auto state = kernelTable().findPrepare("linear")(
        call, {{false, {}}, {true, {}}, {true, {}}, {true, {}}, {true, {}}});
    ASSERT_TRUE(state.ok() && *state) << c.name;
    HostTensor preparedOut(DType::F32, shape);
    const std::vector<TensorView> preparedOutputs{preparedOut.view()};
    KernelCall preparedCall{inputs, preparedOutputs, params};
    preparedCall.state = state->get();
    ASSERT_TRUE(succeeded(kernelTable().find("linear")(preparedCall))) << c.name;
    EXPECT_TRUE(closeTo(preparedOut, shape, want, 1e-5, 1e-5)) << c.name << " (prepared)";
  }
}

// Every op the compiler may put in an epilogue (LinearEpilogueOps.h) runs as
// a post-op and gives the fused kernel's result: an op added to the list
// without a post-op fails here, not in a user's run.
TEST(CpuPackedLinearTest, EveryListedEpilogueOpRunsAsAPostOp) {
  Rng rng(23);
  const Shape shape{4, 24};
  HostTensor x = random(DType::F32, {4, 20}, rng), w = random(DType::F32, {20, 24}, rng);
  HostTensor b = random(DType::F32, {24}, rng);
  for (const kernels::EpilogueOp &op : kernels::kLinearEpilogueOps) {
    const bool unary = op.kind == kernels::EpilogueOpKind::Unary;
    const LinearEpilogue epilogue{{std::string(op.name)},
                                  unary ? std::vector<int64_t>{0} : std::vector<int64_t>{0, 1}};
    std::vector<HostTensor> extras;
    if (!unary) {
      extras.push_back(random(DType::F32, shape, rng));
      for (int64_t i = 0; i < extras.back().numel(); ++i) // away from zero: "div"
        reinterpret_cast<float *>(extras.back().bytes.data())[i] += 3.0f;
    }
    const std::vector<double> want = valuesOf(reference(x, w, b, extras, epilogue, shape));
    std::vector<TensorView> extraViews;
    for (HostTensor &extra : extras)
      extraViews.push_back(extra.view());
    HostTensor out(DType::F32, shape);
    auto packed = PackedLinear::prepare(x.view(), w.view(), ptr(b.view()), false, out.view(), true,
                                        epilogue, extraViews);
    ASSERT_TRUE(packed.ok() && *packed) << op.name << ": " << packed.status().message();
    ASSERT_TRUE(succeeded((*packed)->run(x.view(), ptr(b.view()), out.view(), extraViews)));
    EXPECT_TRUE(closeTo(out, shape, want, 1e-5, 1e-5)) << op.name;
  }
}

TEST(CpuPackedLinearTest, RefusesEpiloguesPostOpsCannotRun) {
  HostTensor x(DType::F32, {4, 8}), w(DType::F32, {8, 3}), out(DType::F32, {4, 3});
  HostTensor extra(DType::F32, {4, 3}), small(DType::F32, {3});
  auto prepare = [&](LinearEpilogue epilogue, std::vector<TensorView> extras) {
    return PackedLinear::prepare(x.view(), w.view(), nullptr, false, out.view(), true, epilogue,
                                 extras);
  };
  EXPECT_TRUE(failsWith(prepare({{"exp"}, {0}}, {}).status(), "no post-op computes 'exp'"));
  EXPECT_TRUE(failsWith(prepare({{"add", "gelu"}, {0, 1, 1}}, {extra.view()}).status(),
                        "step 1 does not read the running value first"));
  EXPECT_TRUE(failsWith(prepare({{"add"}, {1, 0}}, {extra.view()}).status(),
                        "step 0 does not read the running value first"));
  EXPECT_TRUE(failsWith(prepare({{"add"}, {0, 2}}, {extra.view()}).status(),
                        "step 0 reads no extra input"));
  EXPECT_TRUE(failsWith(prepare({{"add"}, {0, 1}}, {small.view()}).status(),
                        "an epilogue input is not float32 of the result's 12 elements"));
}

// The kernel table's linear reads its epilogue from a step's params, which
// a hostile artifact may get wrong: every such step fails with one message.
TEST(CpuPackedLinearTest, TheKernelRefusesBadEpilogueParams) {
  HostTensor x(DType::F32, {4, 8}), w(DType::F32, {8, 3}), out(DType::F32, {4, 3});
  HostTensor extra(DType::F32, {4, 3});
  const std::vector<TensorView> outputs{out.view()};
  auto call = [&](std::vector<TensorView> inputs, int64_t extras, std::vector<std::string> ops,
                  std::vector<int64_t> args) {
    Params params;
    params.set("epilogue_inputs", Param{{extras}, {}, {}});
    if (!ops.empty())
      params.set("epilogue_ops", Param{{}, {}, ops});
    params.set("epilogue_args", Param{args, {}, {}});
    return kernelTable().find("linear")(KernelCall{inputs, outputs, params});
  };
  EXPECT_TRUE(
      failsWith(call({x.view(), w.view()}, 5, {"gelu"}, {0}), "epilogue_inputs 5 is out of range"));
  EXPECT_TRUE(failsWith(call({x.view(), w.view()}, -1, {"gelu"}, {0}),
                        "epilogue_inputs -1 is out of range"));
  EXPECT_TRUE(failsWith(call({x.view(), w.view(), extra.view()}, 1, {}, {}),
                        "epilogue inputs without epilogue_ops"));
  EXPECT_TRUE(failsWith(call({x.view(), w.view(), extra.view()}, 1, {"add"}, {0, 7}),
                        "argument 7 is out of range"));
  EXPECT_TRUE(succeeded(call({x.view(), w.view(), extra.view()}, 1, {"add"}, {0, 1})));
}

TEST(CpuPackedLinearTest, RejectsBadOperands) {
  HostTensor x(DType::F32, {4, 8}), wt(DType::F32, {3, 8}), out(DType::F32, {4, 3});
  auto bad = PackedLinear::prepare(x.view(), wt.view(), nullptr, false, out.view(), true);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(failsWith(bad.status(), "input features differ from the weight's"));
  HostTensor w(DType::F32, {8, 3});
  auto packed = PackedLinear::prepare(x.view(), w.view(), nullptr, false, out.view(), true);
  ASSERT_TRUE(packed.ok() && *packed);
  HostTensor other(DType::F32, {5, 8}), otherOut(DType::F32, {5, 3});
  EXPECT_TRUE(failsWith((*packed)->run(other.view(), nullptr, otherOut.view()),
                        "not the ones the step was prepared for"));
}

} // namespace
} // namespace shardc::rt::cpu::test
