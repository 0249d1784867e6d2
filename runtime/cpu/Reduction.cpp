//===- Reduction.cpp - reduce_sum / mean / max / min -----------------------===//
//
// The input's dims are first simplified: size-1 dims dropped and neighbours
// of the same kind (kept or reduced) merged, which leaves alternating groups.
// Two loop shapes then cover every case with contiguous inner loops:
//  A. the last group is reduced (softmax-like "reduce the rows"): each output
//     element sums runs of contiguous input;
//  B. the last group is kept ("reduce over the rows", e.g. a column sum):
//     each output tile of up to kTile contiguous elements accumulates rows of
//     the input, so every input row is read contiguously too.
// Both are parallel over output elements (or tiles). A full reduction to one
// element therefore runs on one thread: fine for the small reductions of
// transformer graphs (the big ones are norms, which have their own kernels).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Reduction.h"

#include "runtime/cpu/Checks.h"
#include "runtime/cpu/KernelSupport.h"
#include "runtime/cpu/Parallel.h"

#include <cstring>
#include <limits>

namespace shardc::rt::cpu {

namespace {

using namespace detail;

constexpr int64_t kTile = 64;

/// How one op accumulates elements of storage type T:
///   Acc init(); void add(Acc &, T); T finish(Acc, count).
template <typename T, ReduceOp Op> struct Reducer;

/// Float sum/mean: double accumulator, one rounding at the end.
template <typename T, ReduceOp Op> struct FloatSum {
  using Acc = double;
  static Acc init() { return 0.0; }
  static void add(Acc &acc, T x) { acc += double(load(x)); }
  /// A contiguous run, reassociated into SIMD lanes (each lane still sums in
  /// double, so this only changes the order of exact-ish additions).
  static void addRun(Acc &acc, const T *x, int64_t n) {
    double sum = 0.0;
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < n; ++i)
      sum += double(load(x[i]));
    acc += sum;
  }
  static T finish(Acc acc, int64_t count) {
    using C = ComputeT<T>;
    return store<T>(C(Op == ReduceOp::Mean ? acc / double(count) : acc));
  }
};

/// Float max/min: NaN wins (once the accumulator is NaN, no comparison is
/// true and it stays NaN).
template <typename T, bool IsMax> struct FloatExtreme {
  using C = ComputeT<T>;
  using Acc = C;
  static Acc init() {
    return IsMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
  }
  static void add(Acc &acc, T value) {
    const C x = load(value);
    if ((IsMax ? x > acc : x < acc) || x != x)
      acc = x;
  }
  static void addRun(Acc &acc, const T *x, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      add(acc, x[i]);
  }
  static T finish(Acc acc, int64_t) { return store<T>(acc); }
};

/// Integer sum/mean: 64-bit wrapping sum; mean truncates toward zero.
template <typename T, ReduceOp Op> struct IntSum {
  using Acc = uint64_t;
  static Acc init() { return 0; }
  static void add(Acc &acc, T x) { acc += uint64_t(int64_t(x)); }
  static void addRun(Acc &acc, const T *x, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      add(acc, x[i]);
  }
  static T finish(Acc acc, int64_t count) {
    if (Op == ReduceOp::Mean)
      return count == 0 ? T(0) : wrapTo<T>(uint64_t(int64_t(acc) / count));
    return wrapTo<T>(acc);
  }
};

template <typename T, bool IsMax> struct IntExtreme {
  using Acc = T;
  static Acc init() {
    return IsMax ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
  }
  static void add(Acc &acc, T x) {
    if (IsMax ? x > acc : x < acc)
      acc = x;
  }
  static void addRun(Acc &acc, const T *x, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      add(acc, x[i]);
  }
  static T finish(Acc acc, int64_t) { return acc; }
};

template <typename T, ReduceOp Op>
using ReducerFor = std::conditional_t<
    kIsFloat<T>,
    std::conditional_t<Op == ReduceOp::Sum || Op == ReduceOp::Mean, FloatSum<T, Op>,
                       FloatExtreme<T, Op == ReduceOp::Max>>,
    std::conditional_t<Op == ReduceOp::Sum || Op == ReduceOp::Mean, IntSum<T, Op>,
                       IntExtreme<T, Op == ReduceOp::Max>>>;

/// The simplified problem: kept and reduced groups with their input strides.
struct Plan {
  Shape keptSizes, keptStrides;       // outer-to-inner
  Shape reducedSizes, reducedStrides; // outer-to-inner
  bool lastReduced = false;
  int64_t reducedCount = 1;
};

Plan makePlan(const Shape &shape, const std::vector<bool> &reduced) {
  // Groups of consecutive same-kind dims (size-1 dims ignored).
  Shape sizes;
  std::vector<bool> kinds;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1)
      continue;
    if (!kinds.empty() && kinds.back() == reduced[d])
      sizes.back() *= shape[d];
    else {
      sizes.push_back(shape[d]);
      kinds.push_back(reduced[d]);
    }
  }
  const Shape strides = rowMajorStrides(sizes);
  Plan plan;
  for (size_t g = 0; g < sizes.size(); ++g) {
    (kinds[g] ? plan.reducedSizes : plan.keptSizes).push_back(sizes[g]);
    (kinds[g] ? plan.reducedStrides : plan.keptStrides).push_back(strides[g]);
  }
  plan.lastReduced = !kinds.empty() && kinds.back();
  plan.reducedCount = numElements(plan.reducedSizes);
  return plan;
}

template <typename T, ReduceOp Op>
void reduceAs(const Plan &plan, const T *in, T *out, int64_t outCount) {
  using R = ReducerFor<T, Op>;
  using Acc = typename R::Acc;
  const int64_t count = plan.reducedCount;
  const Walk<1> reducedWalk = Walk<1>::make(plan.reducedSizes, {plan.reducedStrides});
  const int64_t runStride = reducedWalk.innerStride(0);

  if (plan.lastReduced) {
    // A: out[o] folds runs of contiguous input (runStride is 1 here).
    const Walk<1> keptWalk = Walk<1>::make(plan.keptSizes, {plan.keptStrides});
    parallelFor(outCount, count, [&](int64_t begin, int64_t end) {
      int64_t o = begin;
      keptWalk.run(begin, end, {0}, [&](const std::array<int64_t, 1> &at, int64_t n) {
        for (int64_t e = 0; e < n; ++e, ++o) {
          Acc acc = R::init();
          reducedWalk.run(0, count, {at[0] + e * keptWalk.innerStride(0)},
                          [&](const std::array<int64_t, 1> &r, int64_t len) {
                            R::addRun(acc, in + r[0], len);
                          });
          out[o] = R::finish(acc, count);
        }
      });
    });
    return;
  }

  // B: the innermost kept group (length `row`, contiguous) is tiled; each
  // tile accumulates one input row segment per reduced index.
  const int64_t row = plan.keptSizes.back();
  const Shape outerSizes(plan.keptSizes.begin(), plan.keptSizes.end() - 1);
  const Shape outerStrides(plan.keptStrides.begin(), plan.keptStrides.end() - 1);
  const Walk<1> outerWalk = Walk<1>::make(outerSizes, {outerStrides});
  const int64_t tiles = (row + kTile - 1) / kTile;
  parallelFor(outCount / row * tiles, count * kTile, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t outer = task / tiles, j0 = task % tiles * kTile;
      const int64_t width = std::min(kTile, row - j0);
      int64_t base = 0;
      outerWalk.run(outer, outer + 1, {0},
                    [&](const std::array<int64_t, 1> &at, int64_t) { base = at[0]; });
      Acc acc[kTile];
      for (int64_t j = 0; j < width; ++j)
        acc[j] = R::init();
      reducedWalk.run(0, count, {base + j0},
                      [&](const std::array<int64_t, 1> &r, int64_t len) {
                        for (int64_t e = 0; e < len; ++e) {
                          const T *x = in + r[0] + e * runStride;
                          for (int64_t j = 0; j < width; ++j)
                            R::add(acc[j], x[j]);
                        }
                      });
      for (int64_t j = 0; j < width; ++j)
        out[outer * row + j0 + j] = R::finish(acc[j], count);
    }
  });
}

} // namespace

Status reduce(ReduceOp op, const TensorView &input, const std::vector<int64_t> &axes,
              bool keepdims, const TensorView &out) {
  std::vector<bool> reduced;
  SHARDC_KERNEL_TRY(checkReduce(op, input, axes, keepdims, out, nullptr, reduced));
  const int64_t outCount = out.numel();
  if (outCount == 0)
    return Status::success();

  Plan plan = makePlan(input.shape, reduced);
  if (input.numel() > 0 && plan.reducedSizes.empty()) {
    // Only size-1 dims reduced (or none): every output is one input element.
    if (out.data != input.data)
      std::memcpy(out.data, input.data, input.bytes());
    return Status::success();
  }
  if (input.numel() == 0) {
    // Some reduced dim is 0: every output is the empty reduction. A plan
    // with one reduced group of size 0 gives exactly that.
    plan = Plan();
    plan.keptSizes = {outCount};
    plan.keptStrides = {0};
    plan.reducedSizes = {0};
    plan.reducedStrides = {1};
    plan.lastReduced = true;
    plan.reducedCount = 0;
  }
  dispatchNumber(input.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *in = input.as<const T>();
    T *result = out.as<T>();
    switch (op) {
    case ReduceOp::Sum: reduceAs<T, ReduceOp::Sum>(plan, in, result, outCount); break;
    case ReduceOp::Mean: reduceAs<T, ReduceOp::Mean>(plan, in, result, outCount); break;
    case ReduceOp::Max: reduceAs<T, ReduceOp::Max>(plan, in, result, outCount); break;
    case ReduceOp::Min: reduceAs<T, ReduceOp::Min>(plan, in, result, outCount); break;
    }
  });
  return Status::success();
}

} // namespace shardc::rt::cpu
