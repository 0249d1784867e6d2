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
  if (name == "h100")
    return h100;
  if (name == "a100") {
    // A100 SXM4 80GB in a DGX A100 (the node of Megatron-LM's published
    // runs): 312 TFLOP/s bf16, 156 TF32, 2.04 TB/s HBM2e; NVLink 3 at 600
    // GB/s both ways (300 per direction); eight 200 Gb/s HDR InfiniBand
    // ports per node, one per GPU (25 GB/s).
    return DeviceModel{"a100",         312e12, 156e12, 2.039e12, 80LL << 30, 8,
                       Link{5e-6, 300e9}, Link{10e-6, 25e9}, 5e-6};
  }
  if (name == "h200") {
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
  double memory = double(model->memoryBytes), perNode = double(model->devicesPerNode);
  Field fields[] = {{"peak_flops_16", &model->peakFlops16},
                    {"peak_flops_32", &model->peakFlops32},
                    {"memory_bandwidth", &model->memoryBandwidth},
                    {"memory_bytes", &memory},
                    {"devices_per_node", &perNode},
                    {"intra_node_latency", &model->intraNode.latencySeconds},
                    {"intra_node_bandwidth", &model->intraNode.bytesPerSecond},
                    {"inter_node_latency", &model->interNode.latencySeconds},
                    {"inter_node_bandwidth", &model->interNode.bytesPerSecond},
                    {"collective_launch", &model->collectiveLaunchSeconds}};
  for (const auto &[key, value] : *object) {
    if (key == "base" || key == "name")
      continue;
    Field *field = llvm::find_if(fields, [&](const Field &f) { return key == f.key; });
    if (field == std::end(fields))
      return fail("unknown key \"" + key.str() + "\"");
    std::optional<double> number = value.getAsNumber();
    if (!number || *number <= 0)
      return fail("\"" + key.str() + "\": expected a positive number");
    *field->target = *number;
  }
  model->memoryBytes = int64_t(memory);
  model->devicesPerNode = int64_t(perNode);
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

double opSeconds(Operation *op, int64_t shards, int64_t localBytes, const DeviceModel &device) {
  Type element = op->getNumResults() ? getElementTypeOrSelf(op->getResult(0).getType()) : Type();
  bool half = element && (element.isF16() || element.isBF16());
  double flops = opFlops(op) / double(shards);
  return std::max(flops / (half ? device.peakFlops16 : device.peakFlops32),
                  double(localBytes) / device.memoryBandwidth);
}

} // namespace shardc::sharding
