//===- PipelinePlan.cpp - a pipeline artifact's schedule ------------------===//
#include "runtime/core/PipelinePlan.h"

#include "runtime/io/ErrorText.h"

#include <nlohmann/json.hpp>

#include <limits>
#include <set>

namespace shardc::rt {
namespace {

/// A field that is wrong: where ("pipeline.transfers[2].to") and why. Thrown
/// by the readers below and turned into the one-line error at the top, so
/// that each check is one line rather than a return chain.
struct FieldError {
  std::string field, message;
};

[[noreturn]] void wrong(const std::string &field, const std::string &message) {
  throw FieldError{field, message};
}

const nlohmann::json &member(const nlohmann::json &object, const std::string &key,
                             const std::string &field) {
  if (!object.is_object())
    wrong(field, "expected an object");
  if (!object.contains(key))
    wrong(field + "." + key, "is missing");
  return object.at(key);
}

const nlohmann::json &array(const nlohmann::json &value, const std::string &field) {
  if (!value.is_array())
    wrong(field, "expected an array");
  return value;
}

int64_t integer(const nlohmann::json &value, const std::string &field, int64_t minimum,
                int64_t maximum) {
  if (!value.is_number_integer())
    wrong(field, std::string("expected an integer, got ") + value.type_name());
  // An unsigned value past int64 reads as negative: compare it as unsigned.
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    wrong(field, "is out of range");
  int64_t number = value.get<int64_t>();
  if (number < minimum || number > maximum)
    wrong(field, std::to_string(number) + " is out of range [" + std::to_string(minimum) + ", " +
                     std::to_string(maximum) + "]");
  return number;
}

std::string text(const nlohmann::json &value, const std::string &field) {
  if (!value.is_string())
    wrong(field, std::string("expected a string, got ") + value.type_name());
  return value.get<std::string>();
}

DType dtypeOf(const nlohmann::json &value, const std::string &field) {
  std::string name = text(value, field);
  std::optional<DType> dtype = dtypeFromName(name);
  if (!dtype)
    wrong(field, "unknown dtype '" + io::printable(name) + "'");
  return *dtype;
}

/// Dims >= 0 whose byte count fits int64 (the runtime allocates it).
Shape shapeOf(const nlohmann::json &value, DType dtype, const std::string &field) {
  Shape shape;
  int64_t bytes = static_cast<int64_t>(dtypeSize(dtype));
  for (size_t i = 0; i < array(value, field).size(); ++i) {
    int64_t dim = integer(value[i], field + "[" + std::to_string(i) + "]", 0,
                          std::numeric_limits<int64_t>::max());
    if (dim && bytes > std::numeric_limits<int64_t>::max() / dim)
      wrong(field, "holds more bytes than fit in 64 bits");
    bytes *= dim;
    shape.push_back(dim);
  }
  return shape;
}

std::string describe(DType dtype, const Shape &shape) {
  return std::string(dtypeName(dtype)) + " " + formatShape(shape);
}

/// The position of `name` in `signature`, or -1.
int find(const std::vector<TensorSignature> &signature, const std::string &name) {
  for (size_t i = 0; i < signature.size(); ++i)
    if (signature[i].name == name)
      return static_cast<int>(i);
  return -1;
}

/// pipeline.inputs / pipeline.outputs: every caller tensor once, with the
/// dimension micro-batches cut (which must divide it) or null.
std::vector<std::optional<int>> microbatchDims(const nlohmann::json &entries,
                                               const std::vector<TensorSignature> &signature,
                                               int microbatches, const std::string &field) {
  std::vector<std::optional<int>> dims(signature.size());
  std::vector<bool> listed(signature.size(), false);
  for (size_t i = 0; i < array(entries, field).size(); ++i) {
    const std::string at = field + "[" + std::to_string(i) + "]";
    std::string name = text(member(entries[i], "name", at), at + ".name");
    int index = find(signature, name);
    if (index < 0)
      wrong(at + ".name", "'" + io::printable(name) + "' is not one of the manifest's tensors");
    if (listed[index])
      wrong(at + ".name", "'" + io::printable(name) + "' is listed twice");
    listed[index] = true;
    const nlohmann::json &dim = member(entries[i], "microbatch_dim", at);
    if (dim.is_null())
      continue;
    const Shape &shape = signature[index].shape;
    int64_t axis = integer(dim, at + ".microbatch_dim", 0, static_cast<int64_t>(shape.size()) - 1);
    if (shape[axis] % microbatches)
      wrong(at + ".microbatch_dim", "dimension " + std::to_string(axis) + " of '" + name + "' (" +
                                        std::to_string(shape[axis]) + ") does not divide into " +
                                        std::to_string(microbatches) + " micro-batches");
    dims[index] = static_cast<int>(axis);
  }
  for (size_t i = 0; i < signature.size(); ++i)
    if (!listed[i])
      wrong(field, "does not list '" + io::printable(signature[i].name) + "'");
  return dims;
}

/// One side of a stage program's signature. A transfer entry must be the
/// transfer's value, flowing into (`incoming`) or out of stage `stage`; any
/// other entry is a caller tensor at its micro-batch shape.
std::vector<StageTensor> stageSide(const nlohmann::json &entries, int stage, bool incoming,
                                   const PipelinePlan &plan,
                                   const std::vector<TensorSignature> &caller,
                                   const std::vector<std::optional<int>> &dims,
                                   const std::string &field) {
  std::vector<StageTensor> side;
  std::set<std::string> names;
  for (size_t i = 0; i < array(entries, field).size(); ++i) {
    const std::string at = field + "[" + std::to_string(i) + "]";
    const nlohmann::json &entry = entries[i];
    StageTensor tensor;
    tensor.tensor.name = text(member(entry, "name", at), at + ".name");
    tensor.tensor.dtype = dtypeOf(member(entry, "dtype", at), at + ".dtype");
    tensor.tensor.shape = shapeOf(member(entry, "shape", at), tensor.tensor.dtype, at + ".shape");
    if (!names.insert(tensor.tensor.name).second)
      wrong(at + ".name", "'" + io::printable(tensor.tensor.name) + "' is named twice");
    if (entry.contains("microbatch_index") && entry.at("microbatch_index") == true) {
      if (!incoming)
        wrong(at + ".microbatch_index", "the micro-batch index is an input, not an output");
      if (tensor.tensor.dtype != DType::I64 || tensor.tensor.shape != Shape{1})
        wrong(at, "is " + describe(tensor.tensor.dtype, tensor.tensor.shape) +
                      "; the micro-batch index is int64 [1]");
      tensor.microbatchIndex = true;
    } else if (entry.contains("transfer") && !entry.at("transfer").is_null()) {
      tensor.transfer = static_cast<int>(integer(entry.at("transfer"), at + ".transfer", 0,
                                                 static_cast<int64_t>(plan.transfers.size()) - 1));
      const PipelineTransfer &transfer = plan.transfers[tensor.transfer];
      if ((incoming ? transfer.to : transfer.from) != stage)
        wrong(at + ".transfer", "transfer " + std::to_string(tensor.transfer) +
                                    " goes from stage " + std::to_string(transfer.from) +
                                    " to stage " + std::to_string(transfer.to) + ", not " +
                                    (incoming ? "to" : "from") + " stage " + std::to_string(stage));
      if (transfer.dtype != tensor.tensor.dtype || transfer.shape != tensor.tensor.shape)
        wrong(at, "is " + describe(tensor.tensor.dtype, tensor.tensor.shape) + "; transfer " +
                      std::to_string(tensor.transfer) + " is " +
                      describe(transfer.dtype, transfer.shape));
    } else {
      int index = find(caller, tensor.tensor.name);
      if (index < 0)
        wrong(at + ".name", "'" + io::printable(tensor.tensor.name) +
                                "' is neither a transfer nor one of the manifest's " +
                                (incoming ? "inputs" : "outputs"));
      tensor.caller = index;
      Shape expected = microbatchShape(caller[index].shape, dims[index], plan.microbatches);
      if (caller[index].dtype != tensor.tensor.dtype || expected != tensor.tensor.shape)
        wrong(at, "is " + describe(tensor.tensor.dtype, tensor.tensor.shape) +
                      "; a micro-batch of '" + tensor.tensor.name + "' is " +
                      describe(caller[index].dtype, expected));
    }
    side.push_back(std::move(tensor));
  }
  return side;
}

PipelineAction actionOf(const nlohmann::json &entry, int coordinate, const PipelinePlan &plan,
                        const std::string &at) {
  PipelineAction action;
  std::string op = text(member(entry, "op", at), at + ".op");
  if (op.rfind("backward", 0) == 0)
    wrong(at + ".op", "'" + io::printable(op) +
                          "' is a training action; this runtime runs inference schedules only");
  action.microbatch = static_cast<int>(
      integer(member(entry, "microbatch", at), at + ".microbatch", 0, plan.microbatches - 1));
  if (op == "forward") {
    action.op = PipelineAction::Op::Forward;
    action.stage =
        static_cast<int>(integer(member(entry, "stage", at), at + ".stage", 0, plan.stages - 1));
    if (plan.coordinateOf(action.stage) != coordinate)
      wrong(at + ".stage", "stage " + std::to_string(action.stage) + " is not held by pp " +
                               std::to_string(coordinate));
    return action;
  }
  if (op != "send" && op != "recv")
    wrong(at + ".op", "'" + io::printable(op) + "': expected forward, send or recv");
  action.op = op == "send" ? PipelineAction::Op::Send : PipelineAction::Op::Recv;
  action.transfer = static_cast<int>(integer(member(entry, "transfer", at), at + ".transfer", 0,
                                             static_cast<int64_t>(plan.transfers.size()) - 1));
  const PipelineTransfer &transfer = plan.transfers[action.transfer];
  int stage = action.op == PipelineAction::Op::Send ? transfer.from : transfer.to;
  if (plan.coordinateOf(stage) != coordinate)
    wrong(at + ".transfer", "transfer " + std::to_string(action.transfer) + " is " +
                                (action.op == PipelineAction::Op::Send ? "sent" : "received") +
                                " by stage " + std::to_string(stage) + ", not held by pp " +
                                std::to_string(coordinate));
  return action;
}

PipelinePlan parse(const nlohmann::json &manifest, const MeshShape &mesh,
                   const std::vector<TensorSignature> &inputs,
                   const std::vector<TensorSignature> &outputs) {
  PipelinePlan plan;
  const nlohmann::json &section = member(manifest, "pipeline", "manifest");
  const std::string p = "pipeline";
  plan.ppAxis = mesh.axis(kPipelineAxis);
  if (plan.ppAxis < 0)
    wrong("mesh", "has no '" + std::string(kPipelineAxis) + "' axis, which a pipeline needs");
  plan.ppSize = static_cast<int>(mesh.sizes[plan.ppAxis]);
  constexpr int64_t kMaxCount = 1 << 20;
  plan.stages =
      static_cast<int>(integer(member(section, "stages", p), p + ".stages", 1, kMaxCount));
  plan.microbatches = static_cast<int>(
      integer(member(section, "microbatches", p), p + ".microbatches", 1, kMaxCount));
  plan.virtualStages = static_cast<int>(
      integer(member(section, "virtual_stages", p), p + ".virtual_stages", 1, kMaxCount));
  if (static_cast<int64_t>(plan.ppSize) * plan.virtualStages != plan.stages)
    wrong(p + ".stages", std::to_string(plan.stages) + " is not pp (" +
                             std::to_string(plan.ppSize) + ") x virtual_stages (" +
                             std::to_string(plan.virtualStages) + ")");
  plan.schedule = text(member(section, "schedule", p), p + ".schedule");
  plan.inputDims =
      microbatchDims(member(section, "inputs", p), inputs, plan.microbatches, p + ".inputs");
  plan.outputDims =
      microbatchDims(member(section, "outputs", p), outputs, plan.microbatches, p + ".outputs");

  const nlohmann::json &transfers = array(member(section, "transfers", p), p + ".transfers");
  for (size_t t = 0; t < transfers.size(); ++t) {
    const std::string at = p + ".transfers[" + std::to_string(t) + "]";
    const nlohmann::json &entry = transfers[t];
    integer(member(entry, "id", at), at + ".id", static_cast<int64_t>(t), static_cast<int64_t>(t));
    PipelineTransfer transfer;
    transfer.from =
        static_cast<int>(integer(member(entry, "from", at), at + ".from", 0, plan.stages - 1));
    transfer.to =
        static_cast<int>(integer(member(entry, "to", at), at + ".to", 0, plan.stages - 1));
    if (transfer.from == transfer.to)
      wrong(at + ".to", "a transfer goes from one stage to another, not to itself");
    transfer.dtype = dtypeOf(member(entry, "dtype", at), at + ".dtype");
    transfer.shape = shapeOf(member(entry, "shape", at), transfer.dtype, at + ".shape");
    plan.transfers.push_back(std::move(transfer));
  }

  const nlohmann::json &programs = array(member(section, "programs", p), p + ".programs");
  if (programs.size() != static_cast<size_t>(plan.stages))
    wrong(p + ".programs", "lists " + std::to_string(programs.size()) + " program(s) for " +
                               std::to_string(plan.stages) + " stage(s)");
  std::vector<int> producer(outputs.size(), -1);
  for (int k = 0; k < plan.stages; ++k) {
    const std::string at = p + ".programs[" + std::to_string(k) + "]";
    integer(member(programs[k], "stage", at), at + ".stage", k, k);
    StageSignature signature;
    signature.inputs = stageSide(member(programs[k], "inputs", at), k, true, plan, inputs,
                                 plan.inputDims, at + ".inputs");
    signature.outputs = stageSide(member(programs[k], "outputs", at), k, false, plan, outputs,
                                  plan.outputDims, at + ".outputs");
    for (const StageTensor &output : signature.outputs)
      if (output.transfer < 0) {
        int index = output.caller;
        if (producer[index] >= 0)
          wrong(at + ".outputs", "'" + output.tensor.name + "' is already produced by stage " +
                                     std::to_string(producer[index]));
        producer[index] = k;
      }
    plan.programs.push_back(std::move(signature));
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    if (producer[i] < 0)
      wrong(p + ".programs", "no stage produces the output '" + outputs[i].name + "'");

  const nlohmann::json &actions = array(member(section, "actions", p), p + ".actions");
  if (actions.size() != static_cast<size_t>(plan.ppSize))
    wrong(p + ".actions", "lists " + std::to_string(actions.size()) +
                              " action list(s); the mesh has pp=" + std::to_string(plan.ppSize));
  for (int c = 0; c < plan.ppSize; ++c) {
    const std::string at = p + ".actions[" + std::to_string(c) + "]";
    std::vector<PipelineAction> list;
    for (size_t i = 0; i < array(actions[c], at).size(); ++i)
      list.push_back(actionOf(actions[c][i], c, plan, at + "[" + std::to_string(i) + "]"));
    plan.actions.push_back(std::move(list));
  }

  plan.outputRank = static_cast<int>(
      integer(member(section, "output_rank", p), p + ".output_rank", 0, mesh.devices() - 1));
  int outputCoordinate = static_cast<int>(mesh.coordinates(plan.outputRank)[plan.ppAxis]);
  for (size_t i = 0; i < outputs.size(); ++i)
    if (plan.coordinateOf(producer[i]) != outputCoordinate)
      wrong(p + ".output_rank", "rank " + std::to_string(plan.outputRank) + " is at pp " +
                                    std::to_string(outputCoordinate) + " but stage " +
                                    std::to_string(producer[i]) + " produces '" + outputs[i].name +
                                    "'");
  return plan;
}

} // namespace

std::vector<int> PipelinePlan::stagesAt(int coordinate) const {
  std::vector<int> held;
  for (int stage = coordinate; stage < stages; stage += ppSize)
    held.push_back(stage);
  return held;
}

Shape microbatchShape(Shape shape, std::optional<int> dim, int pieces) {
  if (dim)
    shape[*dim] /= pieces;
  return shape;
}

StatusOr<PipelinePlan> parsePipelinePlan(const nlohmann::json &manifest, const MeshShape &mesh,
                                         const std::vector<TensorSignature> &inputs,
                                         const std::vector<TensorSignature> &outputs,
                                         const std::string &manifestPath) {
  try {
    return parse(manifest, mesh, inputs, outputs);
  } catch (const FieldError &error) {
    return Status::error(manifestPath + ": " + io::printable(error.field) + ": " + error.message);
  }
}

} // namespace shardc::rt
