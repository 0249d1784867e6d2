//===- Importer.cpp - ONNX model to the graph dialect ---------------------===//
//
// The graph-level half of the importer: opsets, the node order, inputs with
// their bound dims, initializers, outputs. The per-op half lives in Ops/.
//
//===----------------------------------------------------------------------===//
#include "compiler/Import/Importer.h"
#include "compiler/Import/GraphImporter.h"
#include "compiler/Import/ModulePath.h"
#include "compiler/Import/NodeContext.h"
#include "compiler/Import/OpRegistry.h"
#include "compiler/Import/TensorDecoding.h"
#include "compiler/Import/WeightReader.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/NodeLocation.h"
#include "dialects/Graph/TypeUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <queue>

using namespace mlir;

namespace shardc::import {
namespace {

/// Integer initializers up to this many elements stay inline as graph.constant:
/// they are shapes, axes and indices that folding needs to see, not weights.
constexpr int64_t kInlineIntegerElements = 4096;
/// Float initializers this small are scalars (eps, scales), not weights;
/// when training, only single values are (a small bias is trained).
constexpr int64_t kInlineFloatElements = 16;

bool inlineInitializer(RankedTensorType type, bool training) {
  int64_t limit = isa<FloatType>(type.getElementType())
                      ? (training ? 1 : kInlineFloatElements)
                      : kInlineIntegerElements;
  return type.getNumElements() <= limit;
}

/// Unrolled loops (nested ones multiply) may import at most this many nodes.
constexpr int64_t kMaxImportedNodes = 1000000;

/// How many node names an error lists before summarizing the rest.
constexpr size_t kNamesListed = 5;

std::string nodeDisplayName(const onnx::NodeProto &node, size_t index) {
  if (!node.name().empty())
    return node.name();
  return node.op_type() + "_" + std::to_string(index);
}

std::string quotedList(llvm::ArrayRef<std::string> names) {
  std::string text;
  for (size_t i = 0; i < names.size() && i < kNamesListed; ++i)
    text += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > kNamesListed)
    text += " and " + std::to_string(names.size() - kNamesListed) + " more";
  return text;
}

/// Calls `visit` on every node of `graph` and of the subgraphs (Loop bodies,
/// If branches) its nodes hold, stopping at the first failure.
LogicalResult forEachNode(const onnx::GraphProto &graph,
                          llvm::function_ref<LogicalResult(const onnx::NodeProto &, int)> visit) {
  for (auto [index, node] : llvm::enumerate(graph.node())) {
    if (failed(visit(node, static_cast<int>(index))))
      return failure();
    for (const onnx::AttributeProto &attribute : node.attribute()) {
      if (attribute.has_g() && failed(forEachNode(attribute.g(), visit)))
        return failure();
      for (const onnx::GraphProto &subgraph : attribute.graphs())
        if (failed(forEachNode(subgraph, visit)))
          return failure();
    }
  }
  return success();
}

/// Adds to `names` the names `graph` reads from the scopes around it: what its
/// nodes (and their own subgraphs) use that it does not define itself.
void collectOuterNames(const onnx::GraphProto &graph, llvm::StringSet<> &names) {
  llvm::StringSet<> local;
  for (const onnx::ValueInfoProto &input : graph.input())
    local.insert(input.name());
  for (const onnx::TensorProto &tensor : graph.initializer())
    local.insert(tensor.name());
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &output : node.output())
      local.insert(output);
  auto use = [&](llvm::StringRef name) {
    if (!name.empty() && !local.contains(name))
      names.insert(name);
  };
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &input : node.input())
      use(input);
    for (const onnx::AttributeProto &attribute : node.attribute()) {
      llvm::StringSet<> inner;
      if (attribute.has_g())
        collectOuterNames(attribute.g(), inner);
      for (const onnx::GraphProto &subgraph : attribute.graphs())
        collectOuterNames(subgraph, inner);
      for (const auto &name : inner)
        use(name.getKey());
    }
  }
  for (const onnx::ValueInfoProto &output : graph.output())
    use(output.name());
}

} // namespace

GraphImporter::GraphImporter(MLIRContext &context, const LoadedModel &model,
                             const ImportOptions &options)
    : context_(context), model_(model), options_(options), builder_(&context),
      fileLocation_(FileLineColLoc::get(&context, model.path, 0, 0)) {}

InFlightDiagnostic GraphImporter::fileError() { return emitError(fileLocation_); }

Location GraphImporter::nodeLocation(const onnx::NodeProto &node, int index) {
  return graph::nodeLocation(context_, model_.path, nodeDisplayName(node, index), node.op_type(),
                             modulePathOf(node));
}

LogicalResult GraphImporter::checkOpsets() {
  for (const onnx::OperatorSetIdProto &opset : model_.proto.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      opset_ = opset.version();
  if (opset_ == 0)
    return fileError() << "the model imports no opset of the default ONNX domain";
  if (opset_ > kMaxOpset)
    return fileError() << "opset " << opset_ << " is newer than supported; expected at most "
                       << kMaxOpset;
  return success();
}

LogicalResult GraphImporter::checkNodesSupported() {
  llvm::MapVector<StringRef, std::vector<std::string>> unsupported;
  auto check = [&](const onnx::NodeProto &node, int index) -> LogicalResult {
    std::string name = nodeDisplayName(node, index);
    Location location = nodeLocation(node, index);
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      return emitError(location) << "unknown domain '" << node.domain()
                                 << "'; expected the default ONNX domain";
    auto found = opImporters().find(node.op_type());
    if (found == opImporters().end()) {
      unsupported[node.op_type()].push_back(name);
      return success();
    }
    if (found->second.minOpset > opset_)
      return emitError(location) << node.op_type() << " of opset " << opset_
                                 << " is not supported; expected opset " << found->second.minOpset
                                 << " or newer (onnx.version_converter can convert the model)";
    return success();
  };
  if (failed(forEachNode(model_.proto.graph(), check)))
    return failure();
  if (unsupported.empty())
    return success();
  std::string list;
  for (auto &[opType, names] : unsupported)
    list += (list.empty() ? "" : ", ") + opType.str() + " (node" + (names.size() > 1 ? "s " : " ") +
            quotedList(names) + ")";
  return fileError() << "unsupported ops: " << list;
}

FailureOr<std::vector<int>>
GraphImporter::sortNodes(const onnx::GraphProto &graph,
                         const std::function<bool(StringRef)> &definedOutside) {
  llvm::StringSet<> available;
  for (const onnx::ValueInfoProto &input : graph.input())
    available.insert(input.name());
  for (const onnx::TensorProto &tensor : graph.initializer())
    available.insert(tensor.name());

  llvm::StringMap<int> producer;
  for (auto [index, node] : llvm::enumerate(graph.node()))
    for (const std::string &output : node.output()) {
      if (output.empty())
        continue;
      if (available.contains(output) || producer.count(output))
        return emitError(nodeLocation(node, index))
               << "output '" << output << "' is already defined; expected each name defined once";
      producer[output] = static_cast<int>(index);
    }

  // Kahn's algorithm taking the lowest ready index first: a file already in
  // topological order keeps its order, and any other gets a deterministic one.
  // A node holding subgraphs also waits for the names they read from here.
  int count = graph.node_size();
  std::vector<int> pending(count, 0);
  std::vector<std::vector<int>> consumers(count);
  for (auto [index, node] : llvm::enumerate(graph.node())) {
    auto dependOn = [&, index = index](StringRef name) {
      auto found = producer.find(name);
      if (found == producer.end())
        return false;
      ++pending[index];
      consumers[found->second].push_back(static_cast<int>(index));
      return true;
    };
    for (const std::string &input : node.input()) {
      if (input.empty() || available.contains(input) || dependOn(input) || definedOutside(input))
        continue;
      return emitError(nodeLocation(node, index))
             << "input '" << input
             << "' is not defined; expected a graph input, an initializer or a node output";
    }
    // Names a subgraph reads but nobody defines are reported when it is imported.
    llvm::StringSet<> outer;
    for (const onnx::AttributeProto &attribute : node.attribute()) {
      if (attribute.has_g())
        collectOuterNames(attribute.g(), outer);
      for (const onnx::GraphProto &subgraph : attribute.graphs())
        collectOuterNames(subgraph, outer);
    }
    for (const auto &name : outer)
      if (!available.contains(name.getKey()))
        dependOn(name.getKey());
  }
  std::vector<int> order;
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < count; ++i)
    if (pending[i] == 0)
      ready.push(i);
  while (!ready.empty()) {
    int next = ready.top();
    ready.pop();
    order.push_back(next);
    for (int consumer : consumers[next])
      if (--pending[consumer] == 0)
        ready.push(consumer);
  }
  if (static_cast<int>(order.size()) != count) {
    std::vector<std::string> cyclic;
    for (int i = 0; i < count; ++i)
      if (pending[i] > 0)
        cyclic.push_back(nodeDisplayName(graph.node(i), i));
    return fileError() << "the graph has a cycle; nodes " << quotedList(cyclic)
                       << " depend on each other";
  }
  for (const onnx::ValueInfoProto &output : graph.output())
    if (!available.contains(output.name()) && !producer.count(output.name()) &&
        !definedOutside(output.name()))
      return fileError() << "graph output '" << output.name()
                         << "' is not defined; expected a graph input, an initializer or a node "
                            "output";
  return order;
}

FailureOr<RankedTensorType> GraphImporter::inputType(const onnx::ValueInfoProto &input) {
  const std::string &name = input.name();
  if (!input.type().has_tensor_type())
    return fileError() << "input '" << name << "' is not a tensor; expected tensor inputs only";
  const onnx::TypeProto::Tensor &tensor = input.type().tensor_type();
  Type element = elementTypeOf(tensor.elem_type(), &context_);
  if (!element)
    return fileError() << "input '" << name << "' has unsupported element type "
                       << dataTypeName(tensor.elem_type());

  // Later phases count elements and bytes in int64 (memory plans, kernels).
  auto sized = [&](ArrayRef<int64_t> shape) -> FailureOr<RankedTensorType> {
    std::optional<int64_t> bytes = graph::elementByteWidth(element);
    for (int64_t dim : shape)
      if (bytes)
        bytes = llvm::checkedMul(*bytes, dim);
    if (!bytes)
      return fileError() << "input '" << name << "' of shape " << graph::formatShape(shape)
                         << " has more bytes than 64-bit sizes can count";
    return RankedTensorType::get(shape, element);
  };
  auto given = options_.inputShapes.find(name);
  if (given != options_.inputShapes.end()) {
    const std::vector<int64_t> &shape = given->second;
    if (tensor.has_shape()) {
      const auto &dims = tensor.shape().dim();
      if (dims.size() != static_cast<int>(shape.size()))
        return fileError() << "--input-shape gives input '" << name << "' rank " << shape.size()
                           << "; expected rank " << dims.size() << " as the model declares";
      for (int d = 0; d < dims.size(); ++d)
        if (dims[d].has_dim_value() && dims[d].dim_value() != shape[d])
          return fileError() << "--input-shape gives input '" << name << "' dimension " << d
                             << " size " << shape[d] << "; expected " << dims[d].dim_value()
                             << " as the model declares";
    }
    return sized(shape);
  }
  if (!tensor.has_shape())
    return fileError() << "input '" << name << "' has no shape; give it with --input-shape "
                       << name << "=D0xD1...";
  SmallVector<int64_t> shape;
  for (auto [d, dim] : llvm::enumerate(tensor.shape().dim())) {
    if (dim.has_dim_value()) {
      if (dim.dim_value() < 0)
        return fileError() << "input '" << name << "' dimension " << d << " has negative size "
                           << dim.dim_value();
      shape.push_back(dim.dim_value());
      continue;
    }
    if (dim.has_dim_param() && !dim.dim_param().empty()) {
      auto bound = options_.dims.find(dim.dim_param());
      if (bound == options_.dims.end())
        return fileError() << "input '" << name << "' dimension " << d << " is symbolic '"
                           << dim.dim_param() << "'; bind it with --dim " << dim.dim_param()
                           << "=N";
      usedDims_.insert(dim.dim_param());
      shape.push_back(bound->second);
      continue;
    }
    return fileError() << "input '" << name << "' dimension " << d
                       << " has no size; give the shape with --input-shape " << name
                       << "=D0xD1...";
  }
  return sized(shape);
}

LogicalResult GraphImporter::checkDimFlagsUsed() {
  const onnx::GraphProto &graph = model_.proto.graph();
  for (const auto &[name, value] : options_.dims) {
    (void)value;
    if (usedDims_.contains(name))
      continue;
    std::vector<std::string> known;
    for (const onnx::ValueInfoProto &input : graph.input())
      for (const auto &dim : input.type().tensor_type().shape().dim())
        if (dim.has_dim_param() && !llvm::is_contained(known, dim.dim_param()))
          known.push_back(dim.dim_param());
    return fileError() << "--dim " << name << " names no symbolic dim of the model's inputs; "
                       << (known.empty() ? "they have none" : "expected one of " + quotedList(known));
  }
  return success();
}

LogicalResult GraphImporter::checkInputOutputNamesUnique() {
  const onnx::GraphProto &graph = model_.proto.graph();
  auto check = [&](const auto &values, StringRef kind) -> LogicalResult {
    llvm::StringSet<> seen;
    for (const onnx::ValueInfoProto &value : values)
      if (!seen.insert(value.name()).second)
        return fileError() << "graph " << kind << " '" << value.name()
                           << "' is listed twice; expected each " << kind << " named once";
    return success();
  };
  return success(succeeded(check(graph.input(), "input")) &&
                 succeeded(check(graph.output(), "output")));
}

void GraphImporter::warnAboutInputsWithInitializers() {
  // Before IR version 4 every initializer had to be listed as an input too.
  if (model_.proto.ir_version() < 4)
    return;
  std::vector<std::string> names;
  for (const onnx::ValueInfoProto &input : model_.proto.graph().input())
    if (scopes_.front().initializers.count(input.name()))
      names.push_back(input.name());
  if (names.empty())
    return;
  bool one = names.size() == 1;
  emitWarning(fileLocation_) << (one ? "input " : "inputs ") << quotedList(names)
                             << (one ? " is also an initializer: compiled as its constant value"
                                     : " are also initializers: compiled as their constant values")
                             << " (onnxruntime's when not fed); shardrun does not take "
                             << (one ? "it" : "them") << " as an input";
}

LogicalResult GraphImporter::checkInputFlagsNameInputs() {
  const onnx::GraphProto &graph = model_.proto.graph();
  auto isInput = [&](const std::string &name) {
    return llvm::any_of(graph.input(),
                        [&](const onnx::ValueInfoProto &input) { return input.name() == name; });
  };
  for (const auto &entry : options_.inputShapes)
    if (!isInput(entry.first))
      return fileError() << "--input-shape names '" << entry.first
                         << "', which is not a model input";
  for (const auto &entry : options_.constantInputs)
    if (!isInput(entry.first))
      return fileError() << "--constant-input names '" << entry.first
                         << "', which is not a model input";
  return success();
}

LogicalResult GraphImporter::checkOutputType(const onnx::ValueInfoProto &output, Value value) {
  if (!output.type().has_tensor_type())
    return success();
  const onnx::TypeProto::Tensor &declared = output.type().tensor_type();
  RankedTensorType actual = graph::tensorType(value);
  if (declared.elem_type() != 0) {
    Type element = elementTypeOf(declared.elem_type(), &context_);
    if (element != actual.getElementType()) {
      std::string computed;
      llvm::raw_string_ostream os(computed);
      os << actual.getElementType();
      return fileError() << "output '" << output.name() << "' is declared "
                         << dataTypeName(declared.elem_type()) << " but computes " << computed;
    }
  }
  // NonZero's declared count is whatever the exporter saw; the output is
  // refused after import (shardc-densify-selections) with the reason.
  if (!declared.has_shape() || value.getDefiningOp<graph::NonZeroOp>())
    return success();
  const auto &dims = declared.shape().dim();
  if (dims.size() != actual.getRank())
    return fileError() << "output '" << output.name() << "' is declared with rank " << dims.size()
                       << " but computes " << graph::formatShape(actual.getShape());
  for (int d = 0; d < dims.size(); ++d) {
    int64_t expected = -1;
    if (dims[d].has_dim_value())
      expected = dims[d].dim_value();
    else if (auto bound = options_.dims.find(dims[d].dim_param()); bound != options_.dims.end())
      expected = bound->second;
    if (expected >= 0 && expected != actual.getDimSize(d))
      return fileError() << "output '" << output.name() << "' dimension " << d << " is declared "
                         << expected << " but computes " << actual.getDimSize(d) << " (shape "
                         << graph::formatShape(actual.getShape()) << ")";
  }
  return success();
}

FailureOr<Value> GraphImporter::importInitializer(const onnx::TensorProto &tensor) {
  Location location = NameLoc::get(StringAttr::get(&context_, tensor.name()), fileLocation_);
  auto type = tensorTypeOf(tensor, location);
  if (failed(type))
    return failure();
  int64_t bytes = type->getNumElements() * graph::elementByteWidth(type->getElementType());
  auto weight = [&](StringRef file, int64_t offset) -> Value {
    return builder_.create<graph::WeightOp>(location, *type, tensor.name(), file, offset, bytes,
                                            DenseI64ArrayAttr(), DenseI64ArrayAttr(), TypeAttr(),
                                            DenseI64ArrayAttr(), DenseI64ArrayAttr());
  };

  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string file;
    int64_t offset = 0, length = bytes;
    for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
      if (entry.key() == "location")
        file = entry.value();
      else if ((entry.key() == "offset" || entry.key() == "length") &&
               StringRef(entry.value())
                   .getAsInteger(10, entry.key() == "offset" ? offset : length))
        return emitError(location) << "initializer '" << tensor.name() << "' has external data "
                                   << entry.key() << " '" << entry.value()
                                   << "'; expected a non-negative integer";
    }
    if (file.empty())
      return emitError(location) << "initializer '" << tensor.name()
                                 << "' has external data without a location";
    if (length != bytes || offset < 0)
      return emitError(location) << "initializer '" << tensor.name() << "' has external data of "
                                 << length << " bytes at offset " << offset << "; expected "
                                 << bytes << " bytes for " << graph::formatShape(type->getShape())
                                 << " " << type->getElementType();
    FailureOr<std::string> path = resolveExternalData(location, tensor.name(), model_.path, file);
    if (failed(path))
      return failure();
    // An absent file is fine until a phase needs the bytes; a short one is not.
    uint64_t size = 0;
    std::optional<int64_t> end = llvm::checkedAdd(offset, length);
    if (!llvm::sys::fs::file_size(*path, size) && (!end || static_cast<uint64_t>(*end) > size))
      return emitError(location) << "initializer '" << tensor.name() << "' runs past the end of '"
                                 << *path << "'; expected " << length << " bytes at offset "
                                 << offset << " but the file has " << size;
    return weight(*path, offset);
  }

  auto embedded = model_.embeddedWeights.find(tensor.name());
  if (embedded != model_.embeddedWeights.end() &&
      !inlineInitializer(*type, options_.training) && embedded->second.size == bytes) {
    // Absolute, as external data is (WeightReader.h): a printed graph reads
    // the same bytes from any folder.
    SmallString<256> modelFile(model_.path);
    llvm::sys::fs::make_absolute(modelFile);
    return weight(modelFile, embedded->second.offset);
  }

  auto value = decodeTensor(tensor, location);
  if (failed(value))
    return failure();
  return builder_.create<graph::ConstantOp>(location, *value).getResult();
}

FailureOr<DenseElementsAttr> GraphImporter::constantInputValue(StringRef name,
                                                              RankedTensorType type) {
  StringRef text = options_.constantInputs.at(name.str());
  auto describe = [](RankedTensorType t) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << graph::formatShape(t.getShape()) << " " << t.getElementType();
    return s;
  };
  if (text.ends_with(".pb")) {
    auto buffer = llvm::MemoryBuffer::getFile(text);
    onnx::TensorProto tensor;
    if (!buffer || !tensor.ParseFromString((*buffer)->getBuffer().str()))
      return fileError() << "--constant-input " << name << ": cannot read '" << text
                         << "' as an ONNX TensorProto";
    auto value = decodeTensor(tensor, fileLocation_);
    if (failed(value))
      return failure();
    if (value->getType() != type)
      return fileError() << "--constant-input " << name << ": '" << text << "' holds "
                         << describe(cast<RankedTensorType>(value->getType())) << "; expected "
                         << describe(type);
    return *value;
  }
  SmallVector<StringRef> parts;
  text.split(parts, ',');
  if (static_cast<int64_t>(parts.size()) != type.getNumElements())
    return fileError() << "--constant-input " << name << ": " << parts.size()
                       << " values given; expected " << type.getNumElements() << " for "
                       << describe(type);
  Type element = type.getElementType();
  SmallVector<Attribute> values;
  for (StringRef part : parts) {
    part = part.trim();
    double number;
    int64_t integer = 0;
    if (isa<FloatType>(element) ? part.getAsDouble(number) : part.getAsInteger(10, integer))
      return fileError() << "--constant-input " << name << ": '" << part << "' is not "
                         << (isa<FloatType>(element) ? "a number" : "an integer");
    if (isa<FloatType>(element))
      values.push_back(builder_.getFloatAttr(element, number));
    else
      values.push_back(builder_.getIntegerAttr(element, integer));
  }
  return DenseElementsAttr::get(type, values);
}

Binding GraphImporter::lookupBinding(StringRef name) {
  for (Scope &scope : llvm::reverse(scopes_)) {
    auto found = scope.names.find(name);
    if (found != scope.names.end())
      return found->second;
    auto initializer = scope.initializers.find(name);
    if (initializer == scope.initializers.end())
      continue;
    auto value = importInitializer(*initializer->second);
    if (failed(value))
      return {};
    // Cached in the initializer's own scope: the op sits in the one block
    // before every later use, wherever the first use was.
    scope.names[name] = Binding::of(*value);
    return Binding::of(*value);
  }
  return {};
}

Value GraphImporter::lookup(StringRef name) { return lookupBinding(name).tensor; }

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node, int index) {
  Location location = nodeLocation(node, index);
  NodeContext context(*this, node, location, opset_);
  if (++importedNodes_ > kMaxImportedNodes)
    return context.error() << "the model unrolls to more than " << kMaxImportedNodes
                           << " nodes; expected fewer loop iterations";
  const OpImporter &importer = opImporters().find(node.op_type())->second;
  // Resolve every input first so an unreadable initializer is reported here.
  for (int i = 0; i < node.input_size(); ++i) {
    if (!context.hasInput(i))
      continue;
    Binding binding = lookupBinding(node.input(i));
    if (!binding)
      return failure();
    if (binding.isSequence() && !importer.takesSequences)
      return context.error() << "input " << i << " ('" << node.input(i)
                             << "') is a sequence; expected a tensor";
  }
  if (failed(importer.import(context)))
    return failure();
  for (int i = 0; i < node.output_size(); ++i)
    if (context.hasOutput(i) && !scopes_.back().names.count(node.output(i)))
      return context.error() << "output " << i << " ('" << node.output(i)
                             << "') is not supported by the importer";
  return success();
}

FailureOr<SmallVector<Binding>> GraphImporter::importSubgraph(const onnx::GraphProto &graph,
                                                              ArrayRef<Binding> inputs,
                                                              Location owner) {
  if (graph.input_size() != static_cast<int>(inputs.size()))
    return emitError(owner) << "subgraph '" << graph.name() << "' has " << graph.input_size()
                            << " inputs; expected " << inputs.size();
  // Whether an enclosing scope defines a name, asked before the subgraph's own
  // scope exists (its inputs and initializers are the sort's `available`).
  size_t enclosing = scopes_.size();
  auto definedOutside = [&](StringRef name) {
    for (size_t i = 0; i < enclosing; ++i)
      if (scopes_[i].names.count(name) || scopes_[i].initializers.count(name))
        return true;
    return false;
  };
  scopes_.emplace_back();
  auto leave = llvm::make_scope_exit([&] { scopes_.pop_back(); });
  for (auto [input, binding] : llvm::zip(graph.input(), inputs))
    define(input.name(), binding);
  for (const onnx::TensorProto &tensor : graph.initializer())
    scopes_.back().initializers[tensor.name()] = &tensor;
  auto order = sortNodes(graph, definedOutside);
  if (failed(order))
    return failure();
  for (int index : *order)
    if (failed(importNode(graph.node(index), index)))
      return failure();
  SmallVector<Binding> results;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    Binding binding = lookupBinding(output.name());
    if (!binding)
      return emitError(owner) << "subgraph '" << graph.name() << "' output '" << output.name()
                              << "' is not defined";
    results.push_back(std::move(binding));
  }
  return results;
}

FailureOr<OwningOpRef<ModuleOp>> GraphImporter::run() {
  if (failed(checkOpsets()) || failed(checkNodesSupported()))
    return failure();
  const onnx::GraphProto &graph = model_.proto.graph();
  scopes_.emplace_back();
  for (const onnx::TensorProto &tensor : graph.initializer())
    scopes_.front().initializers[tensor.name()] = &tensor;
  auto order = sortNodes(graph, [](StringRef) { return false; });
  if (failed(order))
    return failure();

  // Graph inputs that are also initializers are weights with defaults: keep
  // them weights (the loop below skips them), so that old exports that list
  // every weight as an input still shard.
  if (failed(checkInputOutputNamesUnique()) || failed(checkInputFlagsNameInputs()))
    return failure();
  warnAboutInputsWithInitializers();
  SmallVector<Type> argumentTypes;
  SmallVector<const onnx::ValueInfoProto *> arguments;
  SmallVector<std::pair<StringRef, DenseElementsAttr>> fixedInputs;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (scopes_.front().initializers.count(input.name()))
      continue;
    auto type = inputType(input);
    if (failed(type))
      return failure();
    if (options_.constantInputs.count(input.name())) {
      auto value = constantInputValue(input.name(), *type);
      if (failed(value))
        return failure();
      fixedInputs.emplace_back(input.name(), *value);
      continue;
    }
    argumentTypes.push_back(*type);
    arguments.push_back(&input);
  }
  if (failed(checkDimFlagsUsed()))
    return failure();

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLocation_);
  (*module)->setAttr("graph.opset", builder_.getI64IntegerAttr(opset_));
  if (!model_.proto.producer_name().empty())
    (*module)->setAttr("graph.producer",
                       builder_.getStringAttr(model_.proto.producer_name() + " " +
                                              model_.proto.producer_version()));
  builder_.setInsertionPointToEnd(module->getBody());
  auto function = builder_.create<func::FuncOp>(fileLocation_, "main",
                                                builder_.getFunctionType(argumentTypes, {}));
  Block *body = function.addEntryBlock();
  for (auto [index, input] : llvm::enumerate(arguments)) {
    define(input->name(), body->getArgument(index));
    function.setArgAttr(index, graph::kNameAttrName, builder_.getStringAttr(input->name()));
  }
  builder_.setInsertionPointToEnd(body);
  for (auto [name, value] : fixedInputs) {
    Location location = NameLoc::get(builder_.getStringAttr(name), fileLocation_);
    define(name, builder_.create<graph::ConstantOp>(location, value).getResult());
  }

  for (int index : *order)
    if (failed(importNode(graph.node(index), index)))
      return failure();

  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    Binding binding = lookupBinding(output.name());
    if (binding.isSequence())
      return fileError() << "output '" << output.name()
                         << "' is a sequence; expected tensor outputs only";
    if (!binding || failed(checkOutputType(output, binding.tensor)))
      return failure();
    results.push_back(binding.tensor);
  }
  builder_.create<func::ReturnOp>(fileLocation_, results);
  function.setType(builder_.getFunctionType(argumentTypes, ValueRange(results).getTypes()));
  for (auto [index, output] : llvm::enumerate(graph.output()))
    function.setResultAttr(index, graph::kNameAttrName, builder_.getStringAttr(output.name()));
  return module;
}

FailureOr<OwningOpRef<ModuleOp>> importModel(MLIRContext &context, const LoadedModel &model,
                                             const ImportOptions &options) {
  context.loadDialect<graph::GraphDialect, func::FuncDialect>();
  return GraphImporter(context, model, options).run();
}

} // namespace shardc::import
