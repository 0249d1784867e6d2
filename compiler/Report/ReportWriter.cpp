//===- ReportWriter.cpp - collectives, memory and time of a plan ----------===//
#include "compiler/Report/ReportWriter.h"

#include "compiler/Report/ModelLayers.h"

#include "passes/Sharding/ShardingConversion.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/NodeLocation.h"
#include "runtime/core/MeshAxes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;
using namespace shardc::sharding;

namespace shardc::report {
namespace {

RankedTensorType tensorType(Value value) { return cast<RankedTensorType>(value.getType()); }

struct Collective {
  CollectiveStep step;
  int64_t elementBytes;
  std::string source;
  std::string module; ///< the torch module of the source, when known
  size_t position;    ///< op index in the program
  std::optional<unsigned> layer;
  double seconds;
};

class ReportBuilder {
public:
  ReportBuilder(func::FuncOp function, dist::MeshOp meshOp, const DeviceModel &device)
      : function(function), mesh(meshOp ? meshShapeOf(meshOp) : MeshShape{}), device(device) {}

  LogicalResult run() {
    for (BlockArgument argument : function.getArguments())
      sharding[argument] = ValueSharding::replicated(tensorType(argument).getRank());
    size_t position = 0;
    for (Operation &op : function.getBody().front()) {
      ++position;
      if (failed(visit(op, position)))
        return failure();
    }
    assignLayers();
    return success();
  }

  llvm::json::Value json() const;
  std::string summary(bool priced) const;

private:
  LogicalResult visit(Operation &op, size_t position) {
    if (isa<func::ReturnOp>(op))
      return success();
    if (auto reshard = dyn_cast<dist::ReshardOp>(op)) {
      std::optional<ValueSharding> to = fromAttr(reshard.getSharding(), mesh);
      auto steps = to ? planReshard(sharding.lookup(reshard.getInput()), *to,
                                    reshard.getType().getShape(), mesh)
                      : std::nullopt;
      if (!steps)
        return reshard.emitOpError() << "cannot be planned";
      int64_t width = graph::elementByteWidth(reshard.getType().getElementType());
      // Gathering what the program returns belongs to no layer, even when
      // the last layer's op (a post-LN norm) computed it.
      bool returned = llvm::all_of(reshard->getUsers(),
                                   [](Operation *user) { return isa<func::ReturnOp>(user); });
      std::string module = returned ? std::string() : graph::onnxModuleOf(reshard.getLoc());
      for (const CollectiveStep &step : *steps) {
        if (step.kind == CollectiveKind::AllSlice)
          continue;
        collectives.push_back({step, width, graph::onnxNodeNames(reshard.getLoc()), module,
                               position, std::nullopt,
                               collectiveSeconds(step, width, mesh, device)});
      }
      sharding[reshard.getResult()] = *to;
      live(reshard.getResult(), op);
      return success();
    }
    auto annotated = op.getAttrOfType<ArrayAttr>(dist::kShardingsAttrName);
    int64_t shards = 1;
    for (auto [index, result] : llvm::enumerate(op.getResults())) {
      ValueSharding value = ValueSharding::replicated(tensorType(result).getRank());
      if (annotated) {
        std::optional<ValueSharding> parsed =
            fromAttr(cast<dist::ShardingAttr>(annotated[index]), mesh);
        if (!parsed)
          return op.emitOpError() << "has a sharding the mesh does not fit";
        value = *parsed;
      }
      sharding[result] = value;
      if (index == 0) {
        for (const AxisList &axes : value.dims)
          shards *= mesh.groupSize(axes);
        shards *= mesh.groupSize(value.partial);
      }
    }
    if (isa<graph::WeightOp>(op)) {
      Value result = op.getResult(0);
      paramBytes += tensorBytes(sharding[result].localShape(tensorType(result).getShape(), mesh),
                                tensorType(result).getElementType());
      return success();
    }
    if (isa<graph::ConstantOp>(op))
      return success();
    modules.push_back(graph::onnxModuleOf(op.getLoc()));
    if (isa<graph::AttentionOp>(op))
      attentions.push_back({position, &op});
    double opFlopsLocal = opFlops(&op) / double(shards);
    flops += opFlopsLocal;
    int64_t bytes = 0;
    for (Value value : op.getOperands())
      bytes += localBytes(value);
    for (Value value : op.getResults())
      bytes += localBytes(value);
    computeSeconds += opSeconds(&op, shards, bytes, device);
    for (Value result : op.getResults())
      live(result, op);
    return success();
  }

  int64_t localBytes(Value value) const {
    auto found = sharding.find(value);
    ValueSharding of = found != sharding.end()
                           ? found->second
                           : ValueSharding::replicated(tensorType(value).getRank());
    return tensorBytes(of.localShape(tensorType(value).getShape(), mesh),
                       tensorType(value).getElementType());
  }

  /// Activation memory: a value lives from its op to its last use.
  void live(Value value, Operation &op) {
    liveBytes += localBytes(value);
    peakActivation = std::max(peakActivation, liveBytes);
    for (Value operand : op.getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (!producer || isa<graph::WeightOp, graph::ConstantOp>(producer))
        continue;
      bool lastUse = llvm::all_of(operand.getUsers(), [&](Operation *user) {
        return user == &op || user->isBeforeInBlock(&op);
      });
      if (lastUse && released.insert(operand).second)
        liveBytes -= localBytes(operand);
    }
  }

  /// The model's layers are its repeated modules when the exporter named
  /// them; otherwise layer k runs from attention k to attention k+1, the
  /// last taking as many collectives as the one before it.
  void assignLayers() {
    layers = ModelLayers::fromModules(modules);
    if (!layers.empty()) {
      layerAttention.assign(layers.size(), nullptr);
      for (auto &[position, attention] : attentions)
        if (std::optional<unsigned> layer =
                layers.layerOf(graph::onnxModuleOf(attention->getLoc())))
          if (!layerAttention[*layer])
            layerAttention[*layer] = attention;
      for (Collective &collective : collectives)
        collective.layer = layers.layerOf(collective.module);
      return;
    }
    for (auto &[position, attention] : attentions)
      layerAttention.push_back(attention);
    if (attentions.empty())
      return;
    size_t perLayer = 0;
    for (Collective &collective : collectives) {
      auto next = llvm::find_if(attentions,
                                [&](auto &anchor) { return anchor.first > collective.position; });
      if (next == attentions.begin())
        continue;
      unsigned layer = unsigned(next - attentions.begin()) - 1;
      if (layer + 1 < attentions.size()) {
        collective.layer = layer;
        if (layer == 0)
          ++perLayer;
        continue;
      }
      size_t taken = llvm::count_if(collectives,
                                    [&](const Collective &other) { return other.layer == layer; });
      if (attentions.size() == 1 || taken < perLayer)
        collective.layer = layer;
    }
  }

  /// The layer's module path, or "" for layers found by attention ops.
  std::string layerName(unsigned layer) const {
    return layers.empty() ? std::string() : layers.name(layer);
  }

  /// Megatron-LM's forward traffic per device for one layer: 2 all-reduces
  /// of b*s*h, b the batch of one data-parallel replica.
  std::optional<double> megatronTraffic(unsigned layer) const {
    std::optional<unsigned> tp = mesh.axis(rt::kTensorAxis);
    if (!tp || !layerAttention[layer])
      return std::nullopt;
    // b*s*h as one tp group holds it: the attention output's local
    // elements, times its split over tp (data parallelism divides b, when
    // the batch could be split).
    Value output = layerAttention[layer]->getResult(0);
    const ValueSharding &split = sharding.find(output)->second;
    double t = double(mesh.sizes[*tp]);
    double bsh = double(localBytes(output)) /
                 double(graph::elementByteWidth(tensorType(output).getElementType()));
    for (const AxisList &axes : split.dims)
      if (llvm::is_contained(axes, *tp))
        bsh *= t;
    return 2 * 2 * (t - 1) / t * bsh *
           double(graph::elementByteWidth(tensorType(output).getElementType()));
  }

  double layerTraffic(unsigned layer, std::map<std::string, int> *kinds = nullptr) const {
    double traffic = 0;
    std::optional<unsigned> tp = mesh.axis(rt::kTensorAxis);
    for (const Collective &collective : collectives) {
      if (collective.layer != layer || !tp || collective.step.axes != AxisList{*tp})
        continue;
      traffic += double(collectiveTrafficBytes(collective.step, collective.elementBytes, mesh));
      if (kinds)
        ++(*kinds)[collectiveName(collective.step.kind)];
    }
    return traffic;
  }

  func::FuncOp function;
  MeshShape mesh;
  const DeviceModel &device;
  llvm::DenseMap<Value, ValueSharding> sharding;
  llvm::DenseSet<Value> released;
  std::vector<Collective> collectives;
  std::vector<std::pair<size_t, Operation *>> attentions;
  std::vector<std::string> modules; ///< of every op, for the layers
  ModelLayers layers;
  /// Each layer's first attention op (b*s*h for Megatron's traffic); null
  /// in a layer without one.
  std::vector<Operation *> layerAttention;
  int64_t paramBytes = 0, liveBytes = 0, peakActivation = 0;
  double flops = 0, computeSeconds = 0;
};

llvm::json::Value ReportBuilder::json() const {
  llvm::json::Object axes;
  for (auto [name, size] : llvm::zip(mesh.names, mesh.sizes))
    axes[name] = size;
  llvm::json::Array list;
  int64_t commBytes = 0, trafficBytes = 0;
  double commSeconds = 0;
  for (const Collective &collective : collectives) {
    llvm::json::Array axisList;
    for (unsigned axis : collective.step.axes)
      axisList.push_back(mesh.names[axis]);
    int64_t bytes = collectivePayloadBytes(collective.step, collective.elementBytes);
    int64_t traffic = collectiveTrafficBytes(collective.step, collective.elementBytes, mesh);
    commBytes += bytes;
    trafficBytes += traffic;
    commSeconds += collective.seconds;
    llvm::json::Object entry{{"kind", collectiveName(collective.step.kind)},
                             {"axes", std::move(axisList)},
                             {"bytes", bytes},
                             {"traffic_bytes", traffic},
                             {"seconds", collective.seconds},
                             {"source", collective.source}};
    if (!collective.module.empty())
      entry["module"] = collective.module;
    if (collective.layer)
      entry["layer"] = int64_t(*collective.layer);
    list.push_back(std::move(entry));
  }
  llvm::json::Array ranks;
  for (int64_t rank = 0; rank < mesh.devices(); ++rank)
    ranks.push_back(llvm::json::Object{
        {"rank", rank}, {"param_bytes", paramBytes}, {"peak_activation_bytes", peakActivation}});
  llvm::json::Array layers;
  for (unsigned layer = 0; layer < layerAttention.size(); ++layer) {
    std::map<std::string, int> kinds;
    double traffic = layerTraffic(layer, &kinds);
    llvm::json::Object counts;
    for (auto &[kind, count] : kinds)
      counts[kind] = count;
    llvm::json::Object entry{{"layer", int64_t(layer)},
                             {"tp_collectives", std::move(counts)},
                             {"tp_traffic_bytes", traffic}};
    if (std::string name = layerName(layer); !name.empty())
      entry["module"] = name;
    if (auto megatron = megatronTraffic(layer)) {
      entry["megatron_traffic_bytes"] = *megatron;
      entry["ratio"] = *megatron > 0 ? traffic / *megatron : 0.0;
    }
    layers.push_back(std::move(entry));
  }
  return llvm::json::Object{
      {"device", device.name},
      {"mesh", llvm::json::Object{{"axes", std::move(axes)}}},
      {"collectives", std::move(list)},
      {"ranks", std::move(ranks)},
      {"layers", std::move(layers)},
      {"totals", llvm::json::Object{{"flops", flops},
                                    {"comm_bytes", commBytes},
                                    {"traffic_bytes", trafficBytes},
                                    {"compute_seconds", computeSeconds},
                                    {"comm_seconds", commSeconds},
                                    {"est_step_seconds", computeSeconds + commSeconds}}}};
}

/// A time of microseconds to seconds, in the unit that shows its digits.
std::string formatSeconds(double seconds) {
  if (seconds < 1e-3)
    return llvm::formatv("{0:F1} us", seconds * 1e6).str();
  if (seconds < 1)
    return llvm::formatv("{0:F3} ms", seconds * 1e3).str();
  return llvm::formatv("{0:F3} s", seconds).str();
}

std::string ReportBuilder::summary(bool priced) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "plan on " << (mesh.numAxes() ? mesh.describe() : "one device") << " ("
     << (priced ? device.name : "cpu") << "): " << collectives.size()
     << " collectives per step; per device " << formatBytes(double(paramBytes)) << " weights, "
     << formatBytes(double(peakActivation)) << " peak activations; "
     << llvm::formatv("{0:E2}", flops) << " flop\n";
  for (unsigned layer = 0; layer < layerAttention.size(); ++layer) {
    std::map<std::string, int> kinds;
    double traffic = layerTraffic(layer, &kinds);
    os << "  layer " << layer;
    if (std::string name = layerName(layer); !name.empty())
      os << " (" << name << ")";
    os << ":";
    for (auto &[kind, count] : kinds)
      os << " " << count << " " << kind;
    os << ", tp traffic " << formatBytes(traffic);
    if (auto megatron = megatronTraffic(layer))
      os << " (Megatron " << formatBytes(*megatron) << ", ratio "
         << llvm::formatv("{0:F2}", *megatron > 0 ? traffic / *megatron : 0.0) << ")";
    os << "\n";
  }
  size_t outside = llvm::count_if(collectives, [](const Collective &c) { return !c.layer; });
  if (outside)
    os << "  outside layers: " << outside << " collectives\n";
  double commSeconds = 0;
  for (const Collective &collective : collectives)
    commSeconds += collective.seconds;
  if (priced)
    os << "  estimated step: " << formatSeconds(computeSeconds) << " compute + "
       << formatSeconds(commSeconds) << " communication\n";
  else
    os << "  estimated step: not priced for the CPU (--device h100|h200|FILE.json prices a GPU)\n";
  return text;
}

} // namespace

FailureOr<Report> buildReport(ModuleOp module, const DeviceModel &device, bool priced) {
  FailureOr<dist::MeshOp> mesh = findMesh(module);
  if (failed(mesh))
    return failure();
  auto functions = llvm::to_vector(module.getOps<func::FuncOp>());
  if (functions.size() != 1)
    return module.emitError() << "expected one function to report on, got " << functions.size();
  ReportBuilder builder(functions.front(), *mesh, device);
  if (failed(builder.run()))
    return failure();
  return Report{builder.json(), builder.summary(priced)};
}

} // namespace shardc::report
