//===- PackedLinear.cpp - a linear step's GEMM, prepared once -------------===//
#include "runtime/cpu/PackedLinear.h"

#include "runtime/cpu/Checks.h"
#include "runtime/cpu/KernelSupport.h"
#include "runtime/cpu/Threading.h"

#include <oneapi/dnnl/dnnl.hpp>

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

} // namespace

struct PackedLinear::Impl {
  int64_t m, k, n;
  bool hasBias;
  const float *weight;  // the step's weight as stored, [K, N] or [N, K]
  bool transposeWeight; // [N, K]
  // oneDNN sizes a primitive's work split by the threads there are when it
  // is made; a later change of numThreads() makes it again (run).
  int threads = 0;
  dnnl::stream stream{cpuEngine()};
  dnnl::matmul primitive;
  memory::desc packedDesc;
  memory packed, src, dst, biasMemory;

  /// (Re)makes the primitive for the current thread count, and packs the
  /// weight when the layout it wants is not the one already packed.
  void build() {
    threads = numThreads();
    const memory::desc srcDesc({m, k}, memory::data_type::f32, Tag::ab);
    const memory::desc anyWeight({k, n}, memory::data_type::f32, Tag::any);
    const memory::desc biasDesc({1, n}, memory::data_type::f32, Tag::ab);
    const memory::desc dstDesc({m, n}, memory::data_type::f32, Tag::ab);
    const dnnl::matmul::desc desc = hasBias ? dnnl::matmul::desc(srcDesc, anyWeight, biasDesc, dstDesc)
                                            : dnnl::matmul::desc(srcDesc, anyWeight, dstDesc);
    const dnnl::matmul::primitive_desc pd(desc, cpuEngine());
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
  }
};

PackedLinear::PackedLinear(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PackedLinear::~PackedLinear() = default;

StatusOr<std::unique_ptr<PackedLinear>>
PackedLinear::prepare(const TensorView &input, const TensorView &weight, const TensorView *bias,
                      bool transposeWeight, const TensorView &out, bool constantWeight) {
  LinearDims dims;
  if (Status status = checkLinear(input, weight, bias, transposeWeight, out, dims); !status)
    return status;
  if (!constantWeight || input.dtype != DType::F32 || dims.m == 0 || dims.n == 0 || dims.k == 0)
    return std::unique_ptr<PackedLinear>();
  auto impl = std::make_unique<Impl>(Impl{dims.m, dims.k, dims.n, bias != nullptr,
                                          weight.as<const float>(), transposeWeight});
  try {
    impl->build();
  } catch (const dnnl::error &error) {
    return dnnlFailure(error);
  }
  return std::unique_ptr<PackedLinear>(new PackedLinear(std::move(impl)));
}

Status PackedLinear::run(const TensorView &input, const TensorView *bias, const TensorView &out) {
  Impl &impl = *impl_;
  if (input.numel() != impl.m * impl.k || out.numel() != impl.m * impl.n ||
      (bias != nullptr) != impl.hasBias)
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
    impl.primitive.execute(impl.stream, args);
    impl.stream.wait();
  } catch (const dnnl::error &error) {
    return dnnlFailure(error);
  }
  return Status::success();
}

} // namespace shardc::rt::cpu
