//===- PackedLinear.cpp - a linear step's GEMM, prepared once -------------===//
#include "runtime/cpu/PackedLinear.h"

#include "runtime/cpu/Checks.h"
#include "runtime/cpu/KernelSupport.h"
#include "runtime/cpu/SharedPackedWeights.h"
#include "runtime/cpu/Threading.h"
#include "runtime/kernels/LinearEpilogueOps.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <optional>
#include <unordered_map>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace shardc::rt::cpu {
namespace {

using namespace detail;
using dnnl::memory;
using Tag = memory::format_tag;

const dnnl::engine &cpuEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

Status dnnlFailure(const std::string &what) {
  return fail("linear", "oneDNN's matmul failed: " + what);
}

/// One op of the epilogue as a oneDNN post-op: an eltwise one, or a binary
/// one reading extra input `extra` of the result's shape.
struct PostOp {
  dnnl::algorithm algorithm;
  float alpha = 0.0f;
  std::optional<size_t> extra;
};

/// The oneDNN post-op that computes each op of kLinearEpilogueOps
/// (LinearEpilogueOps.h), and its alpha.
struct PostOpAlgorithm {
  std::string_view name;
  dnnl::algorithm algorithm;
  float alpha; // swish's alpha is the sigmoid's scale: 1 gives silu
};

const PostOpAlgorithm kPostOpAlgorithms[] = {
    {"gelu", dnnl::algorithm::eltwise_gelu_erf, 0.0f},
    {"gelu_tanh", dnnl::algorithm::eltwise_gelu_tanh, 0.0f},
    {"relu", dnnl::algorithm::eltwise_relu, 0.0f},
    {"silu", dnnl::algorithm::eltwise_swish, 1.0f},
    {"sigmoid", dnnl::algorithm::eltwise_logistic, 0.0f},
    {"tanh", dnnl::algorithm::eltwise_tanh, 0.0f},
    {"add", dnnl::algorithm::binary_add, 0.0f},
    {"mul", dnnl::algorithm::binary_mul, 0.0f},
    {"max", dnnl::algorithm::binary_max, 0.0f},
    {"min", dnnl::algorithm::binary_min, 0.0f},
    {"sub", dnnl::algorithm::binary_sub, 0.0f},
    {"div", dnnl::algorithm::binary_div, 0.0f},
};

const PostOpAlgorithm *postOpAlgorithm(std::string_view name) {
  for (const PostOpAlgorithm &candidate : kPostOpAlgorithms)
    if (candidate.name == name)
      return &candidate;
  return nullptr;
}

/// `epilogue` as oneDNN post-ops with `extras` extra inputs; an error
/// unless it is a chain post-ops can run.
Status postOpsOf(const LinearEpilogue &epilogue, size_t extras, std::vector<PostOp> &postOps) {
  auto broken = [](const std::string &why) {
    return fail("linear", "the epilogue is not a chain of post-ops: " + why);
  };
  size_t next = 0;
  int64_t running = 0;
  for (size_t s = 0; s < epilogue.ops.size(); ++s) {
    const std::string &op = epilogue.ops[s];
    const kernels::EpilogueOp *known = kernels::linearEpilogueOp(op);
    const PostOpAlgorithm *spelling = known ? postOpAlgorithm(op) : nullptr;
    if (!spelling)
      return broken("no post-op computes '" + op + "'");
    const bool binary = known->kind != kernels::EpilogueOpKind::Unary;
    const size_t arity = binary ? 2 : 1;
    if (next + arity > epilogue.args.size() || epilogue.args[next] != running)
      return broken("step " + std::to_string(s) + " does not read the running value first");
    if (!binary) {
      postOps.push_back({spelling->algorithm, spelling->alpha, std::nullopt});
    } else {
      const int64_t extra = epilogue.args[next + 1];
      if (extra < 1 || extra > int64_t(extras))
        return broken("step " + std::to_string(s) + " reads no extra input");
      postOps.push_back({spelling->algorithm, 0.0f, size_t(extra - 1)});
    }
    next += arity;
    running = 1 + int64_t(extras) + int64_t(s);
  }
  if (next != epilogue.args.size())
    return broken("more arguments than its ops read");
  return Status::success();
}

} // namespace

int64_t paddedRowStride(int64_t n) {
  constexpr int64_t lineFloats = 64 / sizeof(float);
  const int64_t lines = (n + lineFloats - 1) / lineFloats;
  return (lines | 1) * lineFloats;
}

std::vector<ColumnPanel> columnPanels(int64_t n, int threads) {
  constexpr int64_t lineFloats = 64 / sizeof(float), minWidth = 4 * lineFloats;
  auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  int64_t count = 1;
  if (threads <= 1) {
    count = n <= 4096 ? 1 : ceilDiv(n, 1024);
  } else {
    // About 384 wide, a multiple of the threads so that an even machine
    // gives every thread the same share.
    count = ceilDiv(ceilDiv(n, 384), threads) * threads;
    count = std::clamp<int64_t>(n / minWidth, 1, count);
  }
  // Equal panels of whole cache lines rather than full ones and a sliver.
  const int64_t width = ceilDiv(ceilDiv(n, count), lineFloats) * lineFloats;
  std::vector<ColumnPanel> panels;
  for (int64_t begin = 0; begin < n; begin += width)
    panels.push_back({begin, std::min(width, n - begin)});
  return panels;
}

namespace {

/// One primitive over the output columns [begin, begin + width) of an
/// [m, n] result: its slice of the weight, packed (shared with the steps of
/// the process that pack the same slice alike), and the memory objects
/// whose data handles each run points at the slices of its operands.
struct Panel {
  ColumnPanel columns;
  dnnl::matmul primitive;
  std::shared_ptr<const memory> packed;
  memory dst, bias;
  std::vector<memory> extras; // one per binary post-op
};

} // namespace

struct PackedLinear::Impl {
  int64_t m = 0, k = 0, n = 0;
  bool hasBias = false;
  const float *weight = nullptr; // the step's weight as stored, [K, N] or [N, K]
  bool transposeWeight = false;  // [N, K]
  // Keeps the stored weight in memory while it is packed (prepare's
  // holdWeight); unset, it always is.
  HoldWeight holdWeight;
  // oneDNN sizes a primitive's work split by the threads there are when it
  // is made; a later change of numThreads() makes it again (run). Set once
  // a build succeeds (0 until then), so that a failed one is tried again by
  // the next run, whatever its thread count.
  int threads = 0;
  dnnl::stream stream{cpuEngine()};
  std::vector<Panel> panels;
  // Where our threads share out the panels, each runs single-threaded
  // primitives on a stream and source memory of its own; with one worker
  // the calling thread runs every panel on oneDNN's threads.
  std::vector<dnnl::stream> workerStreams;
  std::vector<memory> workerSources;
  std::vector<PostOp> postOps; // the epilogue

  /// The matmul primitive of `columns` of the result, whose weight slice is
  /// laid out as `weightDesc` (Tag::any lets oneDNN choose). The result and
  /// the binary post-ops' inputs are column slices of row-major [m, n].
  dnnl::matmul::primitive_desc primitiveFor(const ColumnPanel &columns,
                                            const memory::desc &weightDesc) const {
    const int64_t width = columns.width;
    const memory::desc srcDesc({m, k}, memory::data_type::f32, Tag::ab);
    const memory::desc sliceDesc({m, width}, memory::data_type::f32, memory::dims{n, 1});
    dnnl::post_ops sliceOps;
    for (const PostOp &op : postOps) {
      if (op.extra)
        sliceOps.append_binary(op.algorithm, sliceDesc);
      else
        sliceOps.append_eltwise(1.0f, op.algorithm, op.alpha, 0.0f);
    }
    dnnl::primitive_attr attributes;
    attributes.set_post_ops(sliceOps);
    const memory::desc biasDesc({1, width}, memory::data_type::f32, Tag::ab);
    return dnnl::matmul::primitive_desc(
        hasBias ? dnnl::matmul::desc(srcDesc, weightDesc, biasDesc, sliceDesc)
                : dnnl::matmul::desc(srcDesc, weightDesc, sliceDesc),
        attributes, cpuEngine());
  }

  /// (Re)makes the primitives for the current thread count, and packs each
  /// weight slice whose columns or wanted layout changed. A panel keeps its
  /// columns and packed copy until its new ones are made.
  Status build() {
    const int wanted = numThreads();
    // No thread count matches until this build succeeds: one that fails
    // leaves panels half made, and the next run must build again.
    threads = 0;
    const memory::desc plain({k, n}, memory::data_type::f32, Tag::ab);
    const bool sgemm = primitiveFor({0, n}, memory::desc({k, n}, memory::data_type::f32, Tag::any))
                           .weights_desc() == plain;
    // Where oneDNN keeps the weight row-major (its sgemm, without AVX-512),
    // the result is cut into column panels (columnPanels) that our threads
    // share out, and the rows of each panel's weight are padded
    // (paddedRowStride). oneDNN's own threads run its blocked layouts.
    const int panelThreads = hasOpenMP() ? wanted : 1;
    const std::vector<ColumnPanel> columns =
        sgemm ? columnPanels(n, panelThreads) : std::vector<ColumnPanel>{{0, n}};
    const int workers =
        sgemm && columns.size() > 1 ? std::min(panelThreads, int(columns.size())) : 1;
    std::optional<SingleThreadScope> singleThreaded;
    if (workers > 1)
      singleThreaded.emplace();
    // Taken by the first panel packed, for them all: one read of the stored
    // weight, should it have left memory.
    WeightHold held;
    panels.resize(columns.size());
    for (size_t p = 0; p < columns.size(); ++p) {
      Panel &panel = panels[p];
      const bool moved =
          panel.columns.begin != columns[p].begin || panel.columns.width != columns[p].width;
      const int64_t width = columns[p].width;
      const memory::desc weightDesc =
          sgemm ? memory::desc({k, width}, memory::data_type::f32,
                               memory::dims{paddedRowStride(width), 1})
                : memory::desc({k, width}, memory::data_type::f32, Tag::any);
      const dnnl::matmul::primitive_desc pd = primitiveFor(columns[p], weightDesc);
      if (moved || !panel.packed || pd.weights_desc() != panel.packed->get_desc())
        if (Status status = pack(panel, columns[p], pd.weights_desc(), held); !status)
          return status;
      panel.columns = columns[p];
      panel.primitive = dnnl::matmul(pd);
      const memory::desc sliceDesc({m, width}, memory::data_type::f32, memory::dims{n, 1});
      panel.dst = memory(sliceDesc, cpuEngine(), DNNL_MEMORY_NONE);
      if (hasBias)
        panel.bias =
            memory({{1, width}, memory::data_type::f32, Tag::ab}, cpuEngine(), DNNL_MEMORY_NONE);
      panel.extras.clear();
      for (const PostOp &op : postOps)
        if (op.extra)
          panel.extras.push_back(memory(sliceDesc, cpuEngine(), DNNL_MEMORY_NONE));
    }
    workerStreams.clear();
    workerSources.clear();
    for (int w = 0; w < workers; ++w) {
      workerStreams.emplace_back(cpuEngine());
      workerSources.push_back(
          memory({{m, k}, memory::data_type::f32, Tag::ab}, cpuEngine(), DNNL_MEMORY_NONE));
    }
    threads = wanted;
    return Status::success();
  }

  /// Runs panel `p` on worker `w`'s stream, without waiting for it:
  /// its columns of out = epilogue(input x weight + bias, extras...).
  void runPanel(size_t p, size_t w, const TensorView *bias, float *result, ViewList extras) {
    Panel &panel = panels[p];
    const int64_t begin = panel.columns.begin;
    panel.dst.set_data_handle(result + begin);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, workerSources[w]},
                                         {DNNL_ARG_WEIGHTS, *panel.packed},
                                         {DNNL_ARG_DST, panel.dst}};
    if (hasBias) {
      panel.bias.set_data_handle(bias->as<float>() + begin);
      args.emplace(DNNL_ARG_BIAS, panel.bias);
    }
    for (size_t i = 0, b = 0; i < postOps.size(); ++i) {
      if (!postOps[i].extra)
        continue;
      memory &slice = panel.extras[b++];
      slice.set_data_handle(extras[*postOps[i].extra].as<float>() + begin);
      args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(int(i)) | DNNL_ARG_SRC_1, slice);
    }
    panel.primitive.execute(workerStreams[w], args);
  }

  /// `columns` of the stored weight reordered into `layout`, for `panel`:
  /// the copy the process already holds, or a new one, made while the
  /// stored weight is held (in `held`, if it is not yet).
  Status pack(Panel &panel, const ColumnPanel &columns, const memory::desc &layout,
              WeightHold &held) {
    const int64_t begin = columns.begin, width = columns.width;
    const WeightBlock block{weight, transposeWeight, k, n, begin, width};
    auto packed = sharedPackedBlock(block, layout, [&]() -> StatusOr<memory> {
      if (holdWeight && !held) {
        auto hold = holdWeight();
        if (!hold)
          return hold.status();
        held = std::move(*hold);
      }
      // The stored weight's columns seen as a [K, width] operand: row-major
      // with row stride n, or the rows of PyTorch's [N, K] read column-major.
      const memory::desc columnsDesc({k, width}, memory::data_type::f32,
                                     transposeWeight ? memory::dims{1, k} : memory::dims{n, 1});
      const float *first = transposeWeight ? weight + begin * k : weight + begin;
      memory stored(columnsDesc, cpuEngine(), const_cast<float *>(first));
      memory packed(layout, cpuEngine());
      dnnl::reorder(stored, packed).execute(stream, stored, packed);
      stream.wait();
      return packed;
    });
    if (!packed)
      return packed.status();
    panel.packed = std::move(*packed);
    return Status::success();
  }
};

PackedLinear::PackedLinear(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PackedLinear::~PackedLinear() = default;

StatusOr<std::unique_ptr<PackedLinear>>
PackedLinear::prepare(const TensorView &input, const TensorView &weight, const TensorView *bias,
                      bool transposeWeight, const TensorView &out, bool constantWeight,
                      const LinearEpilogue &epilogue, ViewList extras,
                      HoldWeight holdWeight) {
  LinearDims dims;
  if (Status status = checkLinear(input, weight, bias, transposeWeight, out, dims); !status)
    return status;
  if (!constantWeight || input.dtype != DType::F32 || dims.m == 0 || dims.n == 0 || dims.k == 0)
    return std::unique_ptr<PackedLinear>();
  for (const TensorView &extra : extras)
    if (extra.dtype != DType::F32 || extra.numel() != dims.m * dims.n)
      return fail("linear", "an epilogue input is not float32 of the result's " +
                                std::to_string(dims.m * dims.n) + " elements");
  auto impl = std::make_unique<Impl>();
  impl->m = dims.m, impl->k = dims.k, impl->n = dims.n;
  impl->hasBias = bias != nullptr;
  impl->weight = weight.as<const float>();
  impl->transposeWeight = transposeWeight;
  impl->holdWeight = std::move(holdWeight);
  try {
    if (Status status = postOpsOf(epilogue, extras.size(), impl->postOps); !status)
      return status;
    if (Status status = impl->build(); !status)
      return status;
  } catch (const dnnl::error &error) {
    return dnnlFailure(error.what());
  }
  return std::unique_ptr<PackedLinear>(new PackedLinear(std::move(impl)));
}

Status PackedLinear::run(const TensorView &input, const TensorView *bias, const TensorView &out,
                         ViewList extras) {
  Impl &impl = *impl_;
  bool same = input.numel() == impl.m * impl.k && out.numel() == impl.m * impl.n &&
              (bias != nullptr) == impl.hasBias;
  for (const PostOp &op : impl.postOps)
    same = same && (!op.extra ||
                    (*op.extra < extras.size() && extras[*op.extra].numel() == impl.m * impl.n));
  if (!same)
    return fail("linear", "the operands are not the ones the step was prepared for");
  try {
    if (numThreads() != impl.threads)
      if (Status status = impl.build(); !status)
        return status;
  } catch (const dnnl::error &error) {
    return dnnlFailure(error.what());
  }
  float *result = out.as<float>();
  for (memory &src : impl.workerSources)
    src.set_data_handle(input.data);
#ifdef _OPENMP
  const int workers = int(impl.workerStreams.size());
  if (workers > 1 && !omp_in_parallel()) {
    // Panels are handed out one at a time: a thread slowed by the rest of
    // the machine takes fewer. An exception must not leave the loop (the
    // other threads would wait for it), so each thread keeps its own.
    std::vector<std::string> errors(static_cast<size_t>(workers));
    const auto count = static_cast<int64_t>(impl.panels.size());
#pragma omp parallel num_threads(workers)
    {
      const auto worker = static_cast<size_t>(omp_get_thread_num());
      std::string &failure = errors[worker];
#pragma omp for schedule(dynamic, 1)
      for (int64_t p = 0; p < count; ++p) {
        try {
          if (failure.empty())
            impl.runPanel(size_t(p), worker, bias, result, extras);
        } catch (const dnnl::error &error) {
          failure = error.what();
        }
      }
      try {
        impl.workerStreams[worker].wait();
      } catch (const dnnl::error &error) {
        failure = error.what();
      }
    }
    for (const std::string &error : errors)
      if (!error.empty())
        return dnnlFailure(error);
    return Status::success();
  }
#endif
  try {
    for (size_t p = 0; p < impl.panels.size(); ++p)
      impl.runPanel(p, 0, bias, result, extras);
    impl.workerStreams[0].wait();
  } catch (const dnnl::error &error) {
    return dnnlFailure(error.what());
  }
  return Status::success();
}

} // namespace shardc::rt::cpu
