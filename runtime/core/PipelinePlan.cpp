//===- PipelinePlan.cpp - a pipeline artifact's schedule ------------------===//
#include "runtime/core/PipelinePlan.h"

#include "runtime/core/ManifestFields.h"
#include "runtime/io/ErrorText.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <tuple>

namespace shardc::rt {
namespace {

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

constexpr int64_t kMaxCount = 1 << 20;

/// "stage 1", "stage 1 backward_input", "stage 0 update level 2".
std::string nameOf(const PipelineProgram &program) {
  std::string name = "stage " + std::to_string(program.stage);
  if (program.part != ProgramPart::Forward)
    name += std::string(" ") + programPartName(program.part);
  if (program.perStep())
    name += " level " + std::to_string(program.level);
  return name;
}

/// One side of program `index`'s signature. A transfer entry must be the
/// transfer's value, flowing into (`incoming`) or out of the program's
/// stage, and makes the program the transfer's one consumer (producer); any
/// other entry is a caller tensor at its micro-batch shape (whole for an
/// update, which runs once per step).
std::vector<StageTensor> programSide(const nlohmann::json &entries, int index, bool incoming,
                                     PipelinePlan &plan,
                                     const std::vector<TensorSignature> &caller,
                                     const std::vector<std::optional<int>> &dims,
                                     const std::string &field) {
  const PipelineProgram &program = plan.programs[index];
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
      PipelineTransfer &transfer = plan.transfers[tensor.transfer];
      if ((incoming ? transfer.to : transfer.from) != program.stage)
        wrong(at + ".transfer", "transfer " + std::to_string(tensor.transfer) +
                                    " goes from stage " + std::to_string(transfer.from) +
                                    " to stage " + std::to_string(transfer.to) + ", not " +
                                    (incoming ? "to" : "from") + " stage " +
                                    std::to_string(program.stage));
      if (transfer.dtype != tensor.tensor.dtype || transfer.shape != tensor.tensor.shape)
        wrong(at, "is " + describe(tensor.tensor.dtype, tensor.tensor.shape) + "; transfer " +
                      std::to_string(tensor.transfer) + " is " +
                      describe(transfer.dtype, transfer.shape));
      // One reader per value: the runtime frees it once that reader ran.
      int &end = incoming ? transfer.consumer : transfer.producer;
      if (end >= 0)
        wrong(at + ".transfer", "transfer " + std::to_string(tensor.transfer) + " is already " +
                                    (incoming ? "an input" : "an output") + " of " +
                                    plan.programName(end));
      end = index;
    } else {
      int position = find(caller, tensor.tensor.name);
      if (position < 0)
        wrong(at + ".name", "'" + io::printable(tensor.tensor.name) +
                                "' is neither a transfer nor one of the manifest's " +
                                (incoming ? "inputs" : "outputs"));
      tensor.caller = position;
      const TensorSignature &whole = caller[position];
      // An update runs once per step: it gives its outputs whole (there is
      // one of each) and takes its inputs whole.
      if (program.perStep() && !incoming && dims[position])
        wrong(at, "'" + tensor.tensor.name +
                      "' is cut into micro-batches (pipeline.outputs), but an update runs once "
                      "per step");
      const bool cut = !program.perStep() && dims[position];
      Shape expected = microbatchShape(whole.shape, cut ? dims[position] : std::nullopt,
                                       plan.microbatches);
      if (whole.dtype != tensor.tensor.dtype || expected != tensor.tensor.shape)
        wrong(at, "is " + describe(tensor.tensor.dtype, tensor.tensor.shape) + "; " +
                      (cut ? "a micro-batch of '" : "'") + tensor.tensor.name + "' is " +
                      describe(whole.dtype, expected));
    }
    side.push_back(std::move(tensor));
  }
  return side;
}

/// programs[i]'s stage, part and level, which keep the list sorted (stage,
/// part, level) with one program of each: a stage's update levels count
/// from 0 without gaps. An inference pipeline has forward programs only,
/// programs[k] being stage k's.
PipelineProgram programKey(const nlohmann::json &entry, size_t i, const PipelinePlan &plan,
                           const std::string &at) {
  PipelineProgram program;
  const int64_t k = static_cast<int64_t>(i);
  program.stage = static_cast<int>(integer(member(entry, "stage", at), at + ".stage",
                                           plan.training ? 0 : k,
                                           plan.training ? plan.stages - 1 : k));
  if (entry.contains("part")) {
    std::string name = text(entry.at("part"), at + ".part");
    std::optional<ProgramPart> part = programPartFromName(name);
    if (!part)
      wrong(at + ".part", "'" + io::printable(name) +
                              "': expected forward, backward_input, backward_weight or update");
    program.part = *part;
  }
  if (program.part != ProgramPart::Forward && !plan.training)
    wrong(at + ".part", std::string("'") + programPartName(program.part) +
                            "' is a training program, and the manifest has no training section");
  if (program.perStep())
    program.level =
        static_cast<int>(integer(member(entry, "level", at), at + ".level", 0, kMaxCount));
  else if (entry.contains("level"))
    wrong(at + ".level", "only update programs have a level");
  const PipelineProgram *previous = i ? &plan.programs.back() : nullptr;
  auto key = [](const PipelineProgram &p) { return std::tuple(p.stage, p.part, p.level); };
  if (previous && key(program) == key(*previous))
    wrong(at, nameOf(program) + " is listed twice");
  if (previous && key(program) < key(*previous))
    wrong(at, nameOf(program) + " comes after " + nameOf(*previous) +
                  "; programs are sorted by stage, part and level");
  const int level =
      previous && previous->stage == program.stage && previous->perStep() ? previous->level + 1 : 0;
  if (program.perStep() && program.level != level)
    wrong(at + ".level", std::to_string(program.level) + "; expected " + std::to_string(level) +
                             " (a stage's update levels count from 0 without gaps)");
  return program;
}

/// Every transfer has its producer and its consumer, both run per
/// micro-batch or both per step.
void checkTransferEnds(const PipelinePlan &plan, const std::string &field) {
  for (size_t t = 0; t < plan.transfers.size(); ++t) {
    const std::string at = field + "[" + std::to_string(t) + "]";
    const PipelineTransfer &transfer = plan.transfers[t];
    if (transfer.producer < 0)
      wrong(at, "no program lists it among its outputs");
    if (transfer.consumer < 0)
      wrong(at, "no program lists it among its inputs");
    // With one micro-batch the update may read what its programs made.
    const bool intoUpdate = !plan.programs[transfer.producer].perStep() &&
                            plan.programs[transfer.consumer].perStep();
    if (plan.programs[transfer.producer].perStep() != plan.programs[transfer.consumer].perStep() &&
        !(intoUpdate && plan.microbatches == 1))
      wrong(at, "goes from " + plan.programName(transfer.producer) + " to " +
                    plan.programName(transfer.consumer) +
                    ": an update runs once per step, the other parts once per micro-batch");
  }
}

PipelineAction actionOf(const nlohmann::json &entry, int coordinate, const PipelinePlan &plan,
                        const std::string &at) {
  PipelineAction action;
  std::string op = text(member(entry, "op", at), at + ".op");
  if (std::optional<ProgramPart> part = programPartFromName(op)) {
    if (*part != ProgramPart::Forward && !plan.training)
      wrong(at + ".op",
            "'" + op + "' is a training action, and the manifest has no training section");
    action.op = PipelineAction::runOf(*part);
    action.stage =
        static_cast<int>(integer(member(entry, "stage", at), at + ".stage", 0, plan.stages - 1));
    if (*part == ProgramPart::Update) {
      action.level =
          static_cast<int>(integer(member(entry, "level", at), at + ".level", 0, kMaxCount));
      if (entry.contains("microbatch"))
        integer(entry.at("microbatch"), at + ".microbatch", 0, 0);
    } else {
      action.microbatch = static_cast<int>(
          integer(member(entry, "microbatch", at), at + ".microbatch", 0, plan.microbatches - 1));
    }
    if (plan.coordinateOf(action.stage) != coordinate)
      wrong(at + ".stage", "stage " + std::to_string(action.stage) + " is not held by pp " +
                               std::to_string(coordinate));
    action.program = plan.programOf(action.stage, *part, action.level);
    if (action.program < 0)
      wrong(at + (*part == ProgramPart::Update ? ".level" : ".stage"),
            "stage " + std::to_string(action.stage) + " has no " + op + " program" +
                (*part == ProgramPart::Update ? " of level " + std::to_string(action.level) : ""));
    return action;
  }
  if (op != "send" && op != "recv")
    wrong(at + ".op", "'" + io::printable(op) + "': expected forward, " +
                          (plan.training ? "backward_input, backward_weight, update, " : "") +
                          "send or recv");
  action.op = op == "send" ? PipelineAction::Op::Send : PipelineAction::Op::Recv;
  action.transfer = static_cast<int>(integer(member(entry, "transfer", at), at + ".transfer", 0,
                                             static_cast<int64_t>(plan.transfers.size()) - 1));
  const PipelineTransfer &transfer = plan.transfers[action.transfer];
  const bool perStep = plan.programs[transfer.producer].perStep();
  action.microbatch = static_cast<int>(integer(member(entry, "microbatch", at),
                                               at + ".microbatch", 0,
                                               perStep ? 0 : plan.microbatches - 1));
  int stage = action.op == PipelineAction::Op::Send ? transfer.from : transfer.to;
  if (plan.coordinateOf(stage) != coordinate)
    wrong(at + ".transfer", "transfer " + std::to_string(action.transfer) + " is " +
                                (action.op == PipelineAction::Op::Send ? "sent" : "received") +
                                " by stage " + std::to_string(stage) + ", not held by pp " +
                                std::to_string(coordinate));
  // An inference schedule may pass such a value through the communicator;
  // a training one keeps it (docs/pipeline.md).
  if (plan.training && plan.staysOnRank(action.transfer))
    wrong(at + ".transfer", "transfer " + std::to_string(action.transfer) + " goes from stage " +
                                std::to_string(transfer.from) + " to stage " +
                                std::to_string(transfer.to) + " on pp " +
                                std::to_string(coordinate) + ": it stays there, unsent");
  return action;
}

/// Runs pp `coordinate`'s action list on paper: every program of its
/// stages runs once per micro-batch (an update once), a transfer is
/// produced before it is sent, and there (received, or kept on the rank)
/// before its consumer runs; every value produced for another rank is sent.
void checkOrder(const std::vector<PipelineAction> &list, int coordinate, const PipelinePlan &plan,
                const std::string &field) {
  const size_t pieces = static_cast<size_t>(plan.microbatches);
  // Where a (transfer, micro-batch) value is on this rank.
  enum class Value { Absent, Held, Sent, Used };
  std::vector<std::vector<Value>> values(plan.transfers.size(),
                                         std::vector<Value>(pieces, Value::Absent));
  // The action that ran each (program, micro-batch), or -1.
  std::vector<std::vector<int>> ran(plan.programs.size(), std::vector<int>(pieces, -1));
  auto what = [&](int transfer, int m) {
    return "transfer " + std::to_string(transfer) + ", micro-batch " + std::to_string(m);
  };
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = field + "[" + std::to_string(i) + "]";
    const PipelineAction &action = list[i];
    const int m = action.microbatch;
    if (action.runs()) {
      const PipelineProgram &program = plan.programs[action.program];
      const std::string name = plan.programName(action.program) + ", micro-batch " +
                               std::to_string(m);
      int &first = ran[action.program][m];
      if (first >= 0)
        wrong(at, name + " already ran at " + field + "[" + std::to_string(first) + "]");
      first = static_cast<int>(i);
      for (const StageTensor &input : program.inputs) {
        if (input.transfer < 0)
          continue;
        Value &value = values[input.transfer][m];
        if (value != Value::Held)
          wrong(at, name + " reads " + what(input.transfer, m) + " before it is " +
                        (plan.staysOnRank(input.transfer) && value != Value::Sent
                             ? "produced by " +
                                   plan.programName(plan.transfers[input.transfer].producer)
                             : std::string("received")));
        value = Value::Used;
      }
      for (const StageTensor &output : program.outputs)
        if (output.transfer >= 0)
          values[output.transfer][m] = Value::Held;
      continue;
    }
    Value &value = values[action.transfer][m];
    if (action.op == PipelineAction::Op::Send) {
      if (value != Value::Held)
        wrong(at, "sends " + what(action.transfer, m) + " before " +
                      plan.programName(plan.transfers[action.transfer].producer) +
                      " produces it");
      value = Value::Sent;
      continue;
    }
    // A value kept on the rank is received from itself, after its send.
    const bool local = plan.staysOnRank(action.transfer);
    if (value != (local ? Value::Sent : Value::Absent))
      wrong(at, "receives " + what(action.transfer, m) +
                    (local ? " before it is sent" : " a second time"));
    value = Value::Held;
  }
  for (int index : plan.programsAt(coordinate)) {
    const size_t runs = plan.programs[index].perStep() ? 1 : pieces;
    for (size_t m = 0; m < runs; ++m)
      if (ran[index][m] < 0)
        wrong(field, "never runs " + plan.programName(index) +
                         (runs > 1 ? " on micro-batch " + std::to_string(m) : ""));
  }
  // Every consumer ran, after its value was there: what is still held was
  // produced for another rank.
  for (size_t t = 0; t < plan.transfers.size(); ++t)
    for (size_t m = 0; m < pieces; ++m)
      if (values[t][m] == Value::Held)
        wrong(field, "never sends " + what(static_cast<int>(t), static_cast<int>(m)));
}

PipelinePlan parse(const nlohmann::json &manifest, const MeshShape &mesh,
                   const std::vector<TensorSignature> &inputs,
                   const std::vector<TensorSignature> &outputs) {
  PipelinePlan plan;
  const nlohmann::json &section = member(manifest, "pipeline", "");
  const std::string p = "pipeline";
  plan.training = manifest.contains("training");
  plan.ppAxis = mesh.axis(kPipelineAxis);
  if (plan.ppAxis < 0)
    wrong("mesh", "has no '" + std::string(kPipelineAxis) + "' axis, which a pipeline needs");
  plan.ppSize = static_cast<int>(mesh.sizes[plan.ppAxis]);
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
    // A training stage's forward hands its backward what it keeps.
    if (transfer.from == transfer.to && !plan.training)
      wrong(at + ".to", "a transfer goes from one stage to another, not to itself");
    transfer.dtype = dtypeOf(member(entry, "dtype", at), at + ".dtype");
    transfer.shape = shapeOf(member(entry, "shape", at), transfer.dtype, at + ".shape");
    plan.transfers.push_back(std::move(transfer));
  }

  const nlohmann::json &programs = array(member(section, "programs", p), p + ".programs");
  if (!plan.training && programs.size() != static_cast<size_t>(plan.stages))
    wrong(p + ".programs", "lists " + std::to_string(programs.size()) + " program(s) for " +
                               std::to_string(plan.stages) + " stage(s)");
  std::vector<int> producer(outputs.size(), -1);
  for (size_t i = 0; i < programs.size(); ++i) {
    const std::string at = p + ".programs[" + std::to_string(i) + "]";
    plan.programs.push_back(programKey(programs[i], i, plan, at));
    const int index = static_cast<int>(i);
    plan.programs[i].inputs = programSide(member(programs[i], "inputs", at), index, true, plan,
                                          inputs, plan.inputDims, at + ".inputs");
    plan.programs[i].outputs = programSide(member(programs[i], "outputs", at), index, false, plan,
                                           outputs, plan.outputDims, at + ".outputs");
    for (const StageTensor &output : plan.programs[i].outputs)
      if (output.transfer < 0) {
        if (producer[output.caller] >= 0)
          wrong(at + ".outputs", "'" + output.tensor.name + "' is already produced by " +
                                     plan.programName(producer[output.caller]));
        producer[output.caller] = index;
      }
  }
  if (plan.training)
    for (int stage = 0; stage < plan.stages; ++stage)
      for (ProgramPart part :
           {ProgramPart::Forward, ProgramPart::BackwardInput, ProgramPart::Update})
        if (plan.programOf(stage, part) < 0)
          wrong(p + ".programs",
                "stage " + std::to_string(stage) + " has no " + programPartName(part) + " program");
  for (size_t i = 0; i < outputs.size(); ++i)
    if (producer[i] < 0)
      wrong(p + ".programs", "no stage produces the output '" + outputs[i].name + "'");
  checkTransferEnds(plan, p + ".transfers");

  const nlohmann::json &actions = array(member(section, "actions", p), p + ".actions");
  if (actions.size() != static_cast<size_t>(plan.ppSize))
    wrong(p + ".actions", "lists " + std::to_string(actions.size()) +
                              " action list(s); the mesh has pp=" + std::to_string(plan.ppSize));
  for (int c = 0; c < plan.ppSize; ++c) {
    const std::string at = p + ".actions[" + std::to_string(c) + "]";
    std::vector<PipelineAction> list;
    for (size_t i = 0; i < array(actions[c], at).size(); ++i)
      list.push_back(actionOf(actions[c][i], c, plan, at + "[" + std::to_string(i) + "]"));
    checkOrder(list, c, plan, at);
    plan.actions.push_back(std::move(list));
  }

  plan.outputRank = static_cast<int>(
      integer(member(section, "output_rank", p), p + ".output_rank", 0, mesh.devices() - 1));
  int outputCoordinate = static_cast<int>(mesh.coordinates(plan.outputRank)[plan.ppAxis]);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const int stage = plan.programs[producer[i]].stage;
    if (plan.coordinateOf(stage) != outputCoordinate)
      wrong(p + ".output_rank", "rank " + std::to_string(plan.outputRank) + " is at pp " +
                                    std::to_string(outputCoordinate) + " but stage " +
                                    std::to_string(stage) + " produces '" + outputs[i].name + "'");
  }
  return plan;
}

} // namespace

const char *programPartName(ProgramPart part) {
  switch (part) {
  case ProgramPart::Forward:
    return "forward";
  case ProgramPart::BackwardInput:
    return "backward_input";
  case ProgramPart::BackwardWeight:
    return "backward_weight";
  case ProgramPart::Update:
    return "update";
  }
  return "?";
}

std::optional<ProgramPart> programPartFromName(const std::string &name) {
  for (ProgramPart part : {ProgramPart::Forward, ProgramPart::BackwardInput,
                           ProgramPart::BackwardWeight, ProgramPart::Update})
    if (name == programPartName(part))
      return part;
  return std::nullopt;
}

std::vector<int> PipelinePlan::stagesAt(int coordinate) const {
  std::vector<int> held;
  for (int stage = coordinate; stage < stages; stage += ppSize)
    held.push_back(stage);
  return held;
}

std::vector<int> PipelinePlan::programsAt(int coordinate) const {
  std::vector<int> held;
  for (size_t i = 0; i < programs.size(); ++i)
    if (coordinateOf(programs[i].stage) == coordinate)
      held.push_back(static_cast<int>(i));
  return held;
}

int PipelinePlan::programOf(int stage, ProgramPart part, int level) const {
  const auto wanted = std::tuple(stage, part, level);
  auto found = std::lower_bound(programs.begin(), programs.end(), wanted,
                                [](const PipelineProgram &program, const auto &key) {
                                  return std::tuple(program.stage, program.part, program.level) <
                                         key;
                                });
  if (found == programs.end() || std::tuple(found->stage, found->part, found->level) != wanted)
    return -1;
  return static_cast<int>(found - programs.begin());
}

std::string PipelinePlan::programName(int program) const { return nameOf(programs[program]); }

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
    return error.status(manifestPath);
  }
}

} // namespace shardc::rt
