//===- CostModel.cpp - device presets, collective and op costs ------------===//
#include "passes/Sharding/CostModel.h"
#include "dialects/Graph/TypeUtils.h"

#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

using namespace mlir;

namespace shardc::sharding {

std::optional<DeviceModel> DeviceModel::preset(llvm::StringRef name) {
  // Published peaks (SXM parts, dense): 989 TFLOP/s bf16, 495 TFLOP/s TF32;
  // NVLink 4 at 450 GB/s per direction; one 400 Gb/s NDR port per GPU.
  DeviceModel h100{
      "h100", 989e12, 495e12, 3.35e12, 80LL << 30, 8, Link{5e-6, 450e9}, Link{10e-6, 50e9}, 5e-6};
  // What kernels reach (docs/cost-model.md has the sources): cuBLAS's best
  // bf16 GEMM 794.5 of 989 TFLOP/s (the MAMF table of Bekman's ML
  // Engineering book), FlashAttention-2 35% of peak on an H100 (Shah et
  // al. 2024), streaming kernels about 90% of HBM bandwidth.
  h100.matmulEfficiency = 0.803;
  h100.multiprocessors = 132;
  h100.attentionEfficiency = 0.35;
  h100.memoryEfficiency = 0.9;
  if (name == "h100")
    return h100;
  if (name == "a100") {
    // A100 SXM4 80GB in a DGX A100 (the node of Megatron-LM's published
    // runs): 312 TFLOP/s bf16, 156 TF32, 2.04 TB/s HBM2e; NVLink 3 at 600
    // GB/s both ways (300 per direction); eight 200 Gb/s HDR InfiniBand
    // ports per node, one per GPU (25 GB/s). Its best GEMM reaches 271.2
    // TFLOP/s (MAMF), FlashAttention-2 50-73% of peak (Dao 2023), on 108
    // multiprocessors.
    DeviceModel a100{"a100",         312e12, 156e12, 2.039e12, 80LL << 30, 8,
                     Link{5e-6, 300e9}, Link{10e-6, 25e9}, 5e-6};
    a100.matmulEfficiency = 0.869;
    a100.multiprocessors = 108;
    a100.attentionEfficiency = 0.5;
    a100.memoryEfficiency = 0.9;
    return a100;
  }
  if (name == "h200") {
    // The H100's die with more and faster memory: the H100's kernels.
    DeviceModel h200 = h100;
    h200.name = "h200";
    h200.memoryBandwidth = 4.8e12;
    h200.memoryBytes = 141LL * 1000 * 1000 * 1000;
    return h200;
  }
  return std::nullopt;
}

llvm::Expected<DeviceModel> DeviceModel::load(llvm::StringRef nameOrFile) {
  if (auto model = preset(nameOrFile))
    return *model;
  auto fail = [&](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--device '" + nameOrFile + "': " + message);
  };
  auto buffer = llvm::MemoryBuffer::getFile(nameOrFile);
  if (!buffer)
    return fail("expected a100, h100, h200 or a JSON file (" + buffer.getError().message() + ")");
  auto json = llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return fail(llvm::toString(json.takeError()));
  const llvm::json::Object *object = json->getAsObject();
  if (!object)
    return fail("expected a JSON object");
  std::string base = object->getString("base").value_or("h100").str();
  std::optional<DeviceModel> model = preset(base);
  if (!model)
    return fail("\"base\": expected a100, h100 or h200, got '" + base + "'");
  model->name = object->getString("name").value_or(nameOrFile).str();
  struct Field {
    const char *key;
    double *target;
  };
  double memory = double(model->memoryBytes), perNode = double(model->devicesPerNode),
         multiprocessors = double(model->multiprocessors);
  Field fields[] = {{"peak_flops_16", &model->peakFlops16},
                    {"peak_flops_32", &model->peakFlops32},
                    {"memory_bandwidth", &model->memoryBandwidth},
                    {"memory_bytes", &memory},
                    {"devices_per_node", &perNode},
                    {"intra_node_latency", &model->intraNode.latencySeconds},
                    {"intra_node_bandwidth", &model->intraNode.bytesPerSecond},
                    {"inter_node_latency", &model->interNode.latencySeconds},
                    {"inter_node_bandwidth", &model->interNode.bytesPerSecond},
                    {"collective_launch", &model->collectiveLaunchSeconds},
                    {"matmul_efficiency", &model->matmulEfficiency},
                    {"multiprocessors", &multiprocessors},
                    {"attention_efficiency", &model->attentionEfficiency},
                    {"memory_efficiency", &model->memoryEfficiency}};
  for (const auto &[key, value] : *object) {
    if (key == "base" || key == "name")
      continue;
    Field *field = llvm::find_if(fields, [&](const Field &f) { return key == f.key; });
    if (field == std::end(fields))
      return fail("unknown key \"" + key.str() + "\"");
    std::optional<double> number = value.getAsNumber();
    // No multiprocessors: a device whose GEMMs lose nothing to waves.
    bool none = field->target == &multiprocessors && number && *number == 0;
    if (!number || (*number <= 0 && !none))
      return fail("\"" + key.str() + "\": expected a positive number");
    if (llvm::StringRef(key).ends_with("_efficiency") && *number > 1)
      return fail("\"" + key.str() + "\": expected a fraction of the peak, at most 1");
    if (field->target == &multiprocessors && *number != std::floor(*number))
      return fail("\"" + key.str() + "\": expected a whole number");
    *field->target = *number;
  }
  model->memoryBytes = int64_t(memory);
  model->devicesPerNode = int64_t(perNode);
  model->multiprocessors = int64_t(multiprocessors);
  return *model;
}

FailureOr<DeviceModel> DeviceModel::load(llvm::StringRef nameOrFile, Operation *at) {
  auto model = load(nameOrFile);
  if (!model)
    return at->emitError() << llvm::toString(model.takeError());
  return *model;
}

std::string formatBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  unsigned unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return llvm::formatv("{0:F2} {1}", bytes, units[unit]).str();
}

int64_t tensorBytes(llvm::ArrayRef<int64_t> shape, Type elementType) {
  int64_t elements = 1;
  for (int64_t dim : shape)
    elements *= dim;
  return elements * graph::elementByteWidth(elementType);
}

namespace {

int64_t elements(llvm::ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

/// The link a group over `axes` uses: NVLink when its ranks share a node.
const Link &linkOf(llvm::ArrayRef<unsigned> axes, const MeshShape &mesh,
                   const DeviceModel &device) {
  int64_t span = 1;
  for (unsigned axis : axes)
    span = std::max(span, mesh.stride(axis) * mesh.sizes[axis]);
  return span <= device.devicesPerNode ? device.intraNode : device.interNode;
}

} // namespace

int64_t collectivePayloadBytes(const CollectiveStep &step, int64_t elementBytes) {
  int64_t in = elements(step.inputShape) * elementBytes;
  int64_t out = elements(step.outputShape) * elementBytes;
  switch (step.kind) {
  case CollectiveKind::AllGather:
    return out;
  case CollectiveKind::AllSlice:
    return 0;
  default:
    return in;
  }
}

int64_t collectiveTrafficBytes(const CollectiveStep &step, int64_t elementBytes,
                               const MeshShape &mesh) {
  int64_t n = mesh.groupSize(step.axes);
  int64_t payload = collectivePayloadBytes(step, elementBytes);
  if (step.kind == CollectiveKind::AllReduce)
    return 2 * (n - 1) * payload / n;
  return (n - 1) * payload / n;
}

double collectiveSeconds(const CollectiveStep &step, int64_t elementBytes, const MeshShape &mesh,
                         const DeviceModel &device) {
  if (step.kind == CollectiveKind::AllSlice)
    return 0;
  const Link &link = linkOf(step.axes, mesh, device);
  double n = double(mesh.groupSize(step.axes));
  double bytes = double(collectivePayloadBytes(step, elementBytes));
  double steps = step.kind == CollectiveKind::AllReduce ? 2 * (n - 1) : n - 1;
  double ring = steps * (link.latencySeconds + bytes / (n * link.bytesPerSecond));
  if (step.kind != CollectiveKind::AllReduce)
    return device.collectiveLaunchSeconds + ring;
  // Double binary tree: log-depth latency, the whole buffer twice per link.
  double tree = 2 * std::ceil(std::log2(n)) * link.latencySeconds + 2 * bytes / link.bytesPerSecond;
  return device.collectiveLaunchSeconds + std::min(ring, tree);
}

namespace {

llvm::ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// A contraction's flops: every product of a linear layer, matmul, routed
/// experts or attention (causal or not); nullopt for other ops.
std::optional<double> contractionFlops(Operation *op) {
  if (op->getNumResults() == 0 || !isa<RankedTensorType>(op->getResult(0).getType()))
    return std::nullopt;
  double out = double(elements(shapeOf(op->getResult(0))));
  if (auto linear = dyn_cast<graph::LinearOp>(op))
    return 2 * out * double(shapeOf(linear.getInput()).back());
  if (auto matmul = dyn_cast<graph::MatMulOp>(op))
    return 2 * out * double(shapeOf(matmul.getLhs()).back());
  if (auto moe = dyn_cast<graph::MoeOp>(op)) {
    // Each entry (token, slot) through one expert: every weight matrix once.
    double perExpert = 0;
    for (Value weight : moe.getWeights())
      perExpert += double(elements(shapeOf(weight))) / double(shapeOf(weight)[0]);
    return 2 * double(elements(shapeOf(moe.getIndices()))) * perExpert;
  }
  if (auto attention = dyn_cast<graph::AttentionOp>(op)) {
    auto q = shapeOf(attention.getQuery()), k = shapeOf(attention.getKey()),
         v = shapeOf(attention.getValue());
    return double(elements(q.drop_back())) * double(k[k.size() - 2]) * 2 *
           double(q.back() + v.back());
  }
  return std::nullopt;
}

} // namespace

double modelFlops(Operation *op) { return contractionFlops(op).value_or(0); }

double opFlops(Operation *op) {
  if (std::optional<double> flops = contractionFlops(op)) {
    auto attention = dyn_cast<graph::AttentionOp>(op);
    return attention && attention.getCausal() ? *flops / 2 : *flops;
  }
  if (op->getNumResults() == 0 || !isa<RankedTensorType>(op->getResult(0).getType()))
    return 0;
  double out = double(elements(shapeOf(op->getResult(0))));
  if (isa<graph::LayerNormOp, graph::RmsNormOp, graph::SoftmaxOp, graph::GeluOp>(op))
    return 8 * out;
  return out;
}

namespace {

/// The share of the multiprocessors a GEMM with this local result keeps
/// busy: its output cut in 128 x 128 tiles (a batched matmul's per batch),
/// run in waves of one tile per multiprocessor, the last wave partly idle
/// (what NVIDIA's GEMM performance guide calls wave quantization).
double waveEfficiency(Operation *op, llvm::ArrayRef<int64_t> localResult,
                      const DeviceModel &device) {
  if (device.multiprocessors <= 0 || localResult.empty())
    return 1;
  auto tilesOf = [](int64_t extent) { return (std::max<int64_t>(extent, 1) + 127) / 128; };
  // A matmul whose right side has batch dims runs a GEMM per batch;
  // otherwise (a linear layer) the leading dims are its rows.
  auto matmul = dyn_cast<graph::MatMulOp>(op);
  bool batched = matmul && shapeOf(matmul.getRhs()).size() > 2 && localResult.size() > 2;
  size_t batchDims = batched ? localResult.size() - 2 : 0;
  int64_t batch = elements(localResult.take_front(batchDims));
  int64_t rows = elements(localResult.drop_front(batchDims).drop_back());
  double tiles = double(batch) * double(tilesOf(rows)) * double(tilesOf(localResult.back()));
  double units = double(device.multiprocessors);
  return tiles / (std::ceil(tiles / units) * units);
}

} // namespace

double opSeconds(Operation *op, int64_t shards, int64_t localBytes,
                 llvm::ArrayRef<int64_t> localResult, const DeviceModel &device) {
  Type element = op->getNumResults() ? getElementTypeOrSelf(op->getResult(0).getType()) : Type();
  bool half = element && (element.isF16() || element.isBF16());
  double rate = half ? device.peakFlops16 : device.peakFlops32;
  if (isa<graph::AttentionOp>(op))
    rate *= device.attentionEfficiency;
  else if (isa<graph::LinearOp, graph::MatMulOp, graph::MoeOp>(op))
    rate *= device.matmulEfficiency * waveEfficiency(op, localResult, device);
  double flops = opFlops(op) / double(shards);
  return std::max(flops / rate,
                  double(localBytes) / (device.memoryBandwidth * device.memoryEfficiency));
}

} // namespace shardc::sharding
