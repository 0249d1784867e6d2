//===- PackedLinear.cpp - a linear step's GEMM, prepared once -------------===//
#include "runtime/cpu/PackedLinear.h"

#include "runtime/cpu/Checks.h"
#include "runtime/cpu/KernelSupport.h"
#include "runtime/cpu/Threading.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <optional>
#include <unordered_map>

namespace shardc::rt::cpu {
namespace {

using namespace detail;
using dnnl::memory;
using Tag = memory::format_tag;

const dnnl::engine &cpuEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

Status dnnlFailure(const dnnl::error &error) {
  return fail("linear", std::string("oneDNN's matmul failed: ") + error.what());
}

/// A binary post-op of the chain: its position among the post-ops (how its
/// operand is passed) and which extra input it reads.
struct BinaryPostOp {
  int position;
  size_t extra;
};

/// `epilogue` as oneDNN post-ops on an [m, n] result with `extras` extra
/// inputs; an error unless it is a chain post-ops can run.
Status postOpsOf(const LinearEpilogue &epilogue, size_t extras, int64_t m, int64_t n,
                 dnnl::post_ops &postOps, std::vector<BinaryPostOp> &binary) {
  using dnnl::algorithm;
  auto broken = [](const std::string &why) {
    return fail("linear", "the epilogue is not a chain of post-ops: " + why);
  };
  size_t next = 0;
  int64_t running = 0;
  for (size_t s = 0; s < epilogue.ops.size(); ++s) {
    const std::string &op = epilogue.ops[s];
    std::optional<algorithm> unary =
        op == "gelu"        ? algorithm::eltwise_gelu_erf
        : op == "gelu_tanh" ? algorithm::eltwise_gelu_tanh
        : op == "relu"      ? algorithm::eltwise_relu
        : op == "silu"      ? algorithm::eltwise_swish
        : op == "sigmoid"   ? algorithm::eltwise_logistic
        : op == "tanh"      ? std::optional(algorithm::eltwise_tanh)
                            : std::nullopt;
    std::optional<algorithm> binaryOp = op == "add"   ? algorithm::binary_add
                                        : op == "mul" ? algorithm::binary_mul
                                        : op == "max" ? algorithm::binary_max
                                        : op == "min" ? algorithm::binary_min
                                        : op == "sub" ? algorithm::binary_sub
                                        : op == "div" ? std::optional(algorithm::binary_div)
                                                      : std::nullopt;
    const size_t arity = unary ? 1 : binaryOp ? 2 : 0;
    if (!arity)
      return broken("no post-op computes '" + op + "'");
    if (next + arity > epilogue.args.size() || epilogue.args[next] != running)
      return broken("step " + std::to_string(s) + " does not read the running value first");
    if (unary) {
      // swish's alpha is the sigmoid's scale: 1 gives silu.
      postOps.append_eltwise(1.0f, *unary, op == "silu" ? 1.0f : 0.0f, 0.0f);
    } else {
      const int64_t extra = epilogue.args[next + 1];
      if (extra < 1 || extra > int64_t(extras))
        return broken("step " + std::to_string(s) + " reads no extra input");
      binary.push_back({int(s), size_t(extra - 1)});
      postOps.append_binary(*binaryOp, memory::desc({m, n}, memory::data_type::f32, Tag::ab));
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

struct PackedLinear::Impl {
  int64_t m = 0, k = 0, n = 0;
  bool hasBias = false;
  const float *weight = nullptr; // the step's weight as stored, [K, N] or [N, K]
  bool transposeWeight = false;  // [N, K]
  // oneDNN sizes a primitive's work split by the threads there are when it
  // is made; a later change of numThreads() makes it again (run).
  int threads = 0;
  dnnl::stream stream{cpuEngine()};
  dnnl::matmul primitive;
  memory::desc packedDesc;
  memory packed, src, dst, biasMemory;
  dnnl::post_ops postOps; // the epilogue
  std::vector<BinaryPostOp> binary;
  std::vector<memory> extraMemory; // one per binary post-op

  /// (Re)makes the primitive for the current thread count, and packs the
  /// weight when the layout it wants is not the one already packed.
  void build() {
    threads = numThreads();
    const memory::desc srcDesc({m, k}, memory::data_type::f32, Tag::ab);
    const memory::desc biasDesc({1, n}, memory::data_type::f32, Tag::ab);
    const memory::desc dstDesc({m, n}, memory::data_type::f32, Tag::ab);
    dnnl::primitive_attr attributes;
    attributes.set_post_ops(postOps);
    auto primitiveFor = [&](const memory::desc &weightDesc) {
      return dnnl::matmul::primitive_desc(
          hasBias ? dnnl::matmul::desc(srcDesc, weightDesc, biasDesc, dstDesc)
                  : dnnl::matmul::desc(srcDesc, weightDesc, dstDesc),
          attributes, cpuEngine());
    };
    dnnl::matmul::primitive_desc pd =
        primitiveFor(memory::desc({k, n}, memory::data_type::f32, Tag::any));
    // Where oneDNN keeps the weight row-major (its sgemm, without AVX-512),
    // the rows get padded (paddedRowStride).
    if (pd.weights_desc() == memory::desc({k, n}, memory::data_type::f32, Tag::ab))
      pd = primitiveFor(
          memory::desc({k, n}, memory::data_type::f32, memory::dims{paddedRowStride(n), 1}));
    primitive = dnnl::matmul(pd);
    if (!packed || pd.weights_desc() != packedDesc) {
      packedDesc = pd.weights_desc();
      // The stored weight seen as the [K, N] operand: row-major, or its
      // transpose (PyTorch's [N, K]) read column-major.
      memory stored({{k, n}, memory::data_type::f32, transposeWeight ? Tag::ba : Tag::ab},
                    cpuEngine(), const_cast<float *>(weight));
      packed = memory(packedDesc, cpuEngine());
      dnnl::reorder(stored, packed).execute(stream, stored, packed);
      stream.wait();
    }
    src = memory(srcDesc, cpuEngine(), DNNL_MEMORY_NONE);
    dst = memory(dstDesc, cpuEngine(), DNNL_MEMORY_NONE);
    if (hasBias)
      biasMemory = memory(biasDesc, cpuEngine(), DNNL_MEMORY_NONE);
    extraMemory.clear();
    for (size_t i = 0; i < binary.size(); ++i)
      extraMemory.push_back(memory(dstDesc, cpuEngine(), DNNL_MEMORY_NONE));
  }
};

PackedLinear::PackedLinear(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PackedLinear::~PackedLinear() = default;

StatusOr<std::unique_ptr<PackedLinear>>
PackedLinear::prepare(const TensorView &input, const TensorView &weight, const TensorView *bias,
                      bool transposeWeight, const TensorView &out, bool constantWeight,
                      const LinearEpilogue &epilogue, ViewList extras) {
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
  try {
    if (Status status =
            postOpsOf(epilogue, extras.size(), dims.m, dims.n, impl->postOps, impl->binary);
        !status)
      return status;
    impl->build();
  } catch (const dnnl::error &error) {
    return dnnlFailure(error);
  }
  return std::unique_ptr<PackedLinear>(new PackedLinear(std::move(impl)));
}

Status PackedLinear::run(const TensorView &input, const TensorView *bias, const TensorView &out,
                         ViewList extras) {
  Impl &impl = *impl_;
  bool same = input.numel() == impl.m * impl.k && out.numel() == impl.m * impl.n &&
              (bias != nullptr) == impl.hasBias;
  for (const BinaryPostOp &op : impl.binary)
    same = same && op.extra < extras.size() && extras[op.extra].numel() == impl.m * impl.n;
  if (!same)
    return fail("linear", "the operands are not the ones the step was prepared for");
  try {
    if (numThreads() != impl.threads)
      impl.build();
    impl.src.set_data_handle(input.data);
    impl.dst.set_data_handle(out.data);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, impl.src}, {DNNL_ARG_WEIGHTS, impl.packed}, {DNNL_ARG_DST, impl.dst}};
    if (impl.hasBias) {
      impl.biasMemory.set_data_handle(bias->data);
      args.emplace(DNNL_ARG_BIAS, impl.biasMemory);
    }
    for (size_t i = 0; i < impl.binary.size(); ++i) {
      impl.extraMemory[i].set_data_handle(extras[impl.binary[i].extra].data);
      args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(impl.binary[i].position) | DNNL_ARG_SRC_1,
                   impl.extraMemory[i]);
    }
    impl.primitive.execute(impl.stream, args);
    impl.stream.wait();
  } catch (const dnnl::error &error) {
    return dnnlFailure(error);
  }
  return Status::success();
}

} // namespace shardc::rt::cpu
