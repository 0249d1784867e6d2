//===- TrainingPrograms.cpp - a training step cut into stage programs -----===//
//
// After partitioning and accumulation, a training pipeline's step is one
// function whose ops carry the stage they run on (TrainingStages.h). This
// pass cuts it into one function per (stage, part): forward, backward_input,
// backward_weight and the update's levels (docs/pipeline.md):
//
// - update: what runs once per step (after exec.microbatch_loop_end, or the
//   optimizer's ops when the step has one micro-batch);
// - forward: the forward ops the loop runs;
// - backward_input: the backward ops that what another stage's backward
//   reads (the input gradient it sends) depends on;
// - backward_weight: the rest of the backward (weight gradients and their
//   accumulation), which zero-bubble schedules run later.
//
// An update op's level counts the stage changes on its longest path: the
// gradient norm summed stage after stage, the token count the last stage
// counted and every stage divides by. Each stage's writes run in its last
// level, after every read of what they write.
//
// A value one function makes and another reads becomes a transfer
// (dist.send in the maker, dist.recv in the reader); weights, constants and
// what only the inputs derive are copied into each function that uses
// them. Trained storage (parameters, optimizer states, accumulators) lives
// on the stage that writes it: another stage's update receives it, and a
// loop part of another stage may not read it (a weight tied across stages).
//
//===----------------------------------------------------------------------===//
#include "passes/Pipeline/MicrobatchInvariant.h"
#include "passes/Pipeline/OutlineStages.h"
#include "passes/Pipeline/Passes.h"
#include "passes/Pipeline/Schedule.h"

#include "dialects/Dist/DistDialect.h"
#include "dialects/Exec/ExecDialect.h"
#include "dialects/Graph/GraphDialect.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/NodeLocation.h"
#include "dialects/Graph/TrainingPhase.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <tuple>

using namespace mlir;

namespace shardc::pipeline {
#define GEN_PASS_DEF_PIPELINETRAININGPROGRAMSPASS
#include "passes/Pipeline/Passes.h.inc"
} // namespace shardc::pipeline

namespace shardc::pipeline {
namespace {

/// A program's part: the schedule's compute kinds (Schedule.h).
using Part = ActionKind;

/// Which function an op goes to.
struct Place {
  int64_t stage = 0;
  Part part = Part::Forward;
  int64_t level = 0;
  auto key() const { return std::make_tuple(stage, int(part), level); }
  bool operator<(const Place &other) const { return key() < other.key(); }
  bool operator==(const Place &other) const { return key() == other.key(); }
};

bool isStorage(Operation *op) {
  return isa<graph::WeightOp>(op) && !graph::trainRole(op).empty();
}

/// One trained storage: its tensor and its box in it (the parts of a fused
/// projection are storages of their own, which different stages may write).
std::string storageKey(graph::WeightOp weight) {
  std::string key = weight.getName().str();
  if (std::optional<ArrayRef<int64_t>> box = weight.getBoxOffsets())
    for (int64_t offset : *box)
      key += "@" + std::to_string(offset);
  return key;
}

class ProgramCutter {
public:
  ProgramCutter(func::FuncOp function, int64_t stages, ArrayRef<bool> recomputed)
      : function(function), stages(stages), recomputed(recomputed) {}

  LogicalResult run() {
    Block &body = function.getBody().front();
    for (Operation &op : body.without_terminator()) {
      ops.push_back(&op);
      if (auto end = dyn_cast<exec::MicrobatchLoopEndOp>(op))
        loopEnd = end;
    }
    findPlacedOps();
    if (failed(assignStages()))
      return failure();
    assignParts();
    assignLevels();
    return outline();
  }

private:
  /// Weights, constants and what only they and the inputs derive (no stage
  /// tag): copied where used.
  void findPlacedOps() {
    for (Operation *op : ops) {
      if (isa<exec::MicrobatchLoopEndOp>(op))
        continue;
      if (isa<graph::WeightOp, graph::ConstantOp>(op)) {
        placed.insert(op);
        continue;
      }
      bool fromPlaced = llvm::all_of(op->getOperands(), [&](Value v) {
        Operation *producer = v.getDefiningOp();
        return !producer || placed.contains(producer);
      });
      if (!op->hasAttr(dist::kPipelineStageAttrName) && op->getNumResults() > 0 && fromPlaced &&
          isMemoryEffectFree(op))
        placed.insert(op);
    }
  }

  /// Every op that is neither placed nor the loop's end has a stage: its
  /// tag, else the stage of the first tagged op that reads it, else of the
  /// last stage (what only the inputs derive and a write stores: the token
  /// count). Trained storage gets its home: the stage of its write.
  LogicalResult assignStages() {
    for (Operation *op : llvm::reverse(ops)) {
      if (placed.contains(op) || isa<exec::MicrobatchLoopEndOp>(op))
        continue;
      if (auto tag = op->getAttrOfType<IntegerAttr>(dist::kPipelineStageAttrName)) {
        place[op].stage = tag.getInt();
        continue;
      }
      std::optional<int64_t> at;
      for (Operation *user : op->getUsers())
        if (auto found = place.find(user); found != place.end())
          at = at ? std::min(*at, found->second.stage) : found->second.stage;
      place[op].stage = at.value_or(stages - 1);
    }
    // Storage lives where it is written.
    for (Operation *op : ops)
      if (auto assign = dyn_cast<graph::AssignOp>(op)) {
        auto weight = assign.getTarget().getDefiningOp<graph::WeightOp>();
        if (!weight)
          return assign.emitOpError() << "writes a value that is not a weight";
        auto [it, added] = home.try_emplace(storageKey(weight), place[op].stage);
        if (!added && it->second != place[op].stage)
          return assign.emitOpError()
                 << "writes '" << weight.getName() << "' on stage " << place[op].stage
                 << ", which stage " << it->second << " writes too";
      }
    return success();
  }

  bool inUpdate(Operation *op, bool afterLoopEnd) const {
    return afterLoopEnd || (!loopEnd && graph::phaseOf(op) == graph::Phase::Optimizer);
  }

  void assignParts() {
    bool after = false;
    for (Operation *op : ops) {
      if (isa<exec::MicrobatchLoopEndOp>(op)) {
        after = true;
        continue;
      }
      if (placed.contains(op))
        continue;
      Place &at = place[op];
      if (inUpdate(op, after)) {
        at.part = Part::Update;
        continue;
      }
      bool forward = graph::phaseOf(op).value_or(graph::Phase::Forward) == graph::Phase::Forward &&
                     llvm::all_of(op->getOperands(), [&](Value v) {
                       auto found = place.find(v.getDefiningOp());
                       return found == place.end() || found->second.part == Part::Forward;
                     });
      at.part = forward ? Part::Forward : Part::BackwardWeight;
    }
    // backward_input: what another stage's loop reads, and what that needs
    // on the same stage.
    for (Operation *op : llvm::reverse(ops)) {
      auto found = place.find(op);
      if (found == place.end() || found->second.part != Part::BackwardWeight)
        continue;
      for (Operation *user : op->getUsers()) {
        auto reader = place.find(user);
        if (reader == place.end() || reader->second.part == Part::Update ||
            reader->second.part == Part::Forward)
          continue;
        if (reader->second.stage != found->second.stage ||
            reader->second.part == Part::BackwardInput) {
          found->second.part = Part::BackwardInput;
          break;
        }
      }
    }
  }

  /// The update's levels; then each stage's writes move to its last level.
  void assignLevels() {
    std::map<int64_t, int64_t> lastLevel;
    for (Operation *op : ops) {
      auto found = place.find(op);
      if (found == place.end() || found->second.part != Part::Update)
        continue;
      Place &at = found->second;
      int64_t level = 0;
      for (Value operand : op->getOperands()) {
        Operation *producer = operand.getDefiningOp();
        if (!producer)
          continue;
        if (auto weight = dyn_cast<graph::WeightOp>(producer); weight && isStorage(weight)) {
          auto owner = home.find(storageKey(weight));
          if (owner != home.end() && owner->second != at.stage)
            level = std::max<int64_t>(level, 1);
          continue;
        }
        auto made = place.find(producer);
        if (made == place.end())
          continue;
        if (made->second.part != Part::Update) {
          // One micro-batch's value (a step without accumulation): its loop
          // part hands it over.
          if (made->second.stage != at.stage)
            level = std::max<int64_t>(level, 1);
          continue;
        }
        level = std::max(level, made->second.level + (made->second.stage != at.stage ? 1 : 0));
      }
      at.level = level;
      lastLevel[at.stage] = std::max(lastLevel[at.stage], level);
    }
    for (Operation *op : ops)
      if (auto assign = dyn_cast<graph::AssignOp>(op); assign && place[op].part == Part::Update)
        place[op].level = lastLevel[place[op].stage];
    // As late as the readers allow: a value made on the stage that reads it,
    // in the level that reads it, is not handed from level to level.
    for (Operation *op : llvm::reverse(ops)) {
      auto found = place.find(op);
      if (found == place.end() || found->second.part != Part::Update || op->use_empty() ||
          isa<graph::AssignOp>(op))
        continue;
      std::optional<int64_t> latest;
      for (Operation *user : op->getUsers()) {
        auto reader = place.find(user);
        if (reader == place.end() || reader->second.part != Part::Update) {
          latest.reset();
          break;
        }
        int64_t allowed =
            reader->second.level - (reader->second.stage != found->second.stage ? 1 : 0);
        latest = latest ? std::min(*latest, allowed) : allowed;
      }
      if (latest && *latest > found->second.level)
        found->second.level = *latest;
    }
    // The results leave from the last stage (the output rank's): one made
    // elsewhere is received by a level of its own there.
    Operation *terminator = function.getBody().front().getTerminator();
    for (Value result : terminator->getOperands()) {
      auto found = place.find(result.getDefiningOp());
      if (found == place.end() || found->second.stage == stages - 1)
        continue;
      int64_t level =
          found->second.part == Part::Update ? found->second.level + 1 : 1;
      returnLevel = std::max(returnLevel.value_or(0), level);
    }
    if (returnLevel)
      lastLevel[stages - 1] = std::max(lastLevel[stages - 1], *returnLevel);
    // Every stage has every part, empty or not, and update level 0.
    for (int64_t stage = 0; stage < stages; ++stage)
      for (Part part : {Part::Forward, Part::BackwardInput, Part::BackwardWeight})
        functionFor({stage, part, 0});
    for (int64_t stage = 0; stage < stages; ++stage)
      for (int64_t level = 0; level <= lastLevel[stage]; ++level)
        functionFor({stage, Part::Update, level});
  }

  func::FuncOp functionFor(const Place &at) {
    auto [it, added] = functions.try_emplace(at);
    if (!added)
      return it->second;
    OpBuilder builder(function);
    std::string name = ("stage" + Twine(at.stage) + "." + actionKindName(at.part)).str();
    if (at.part == Part::Update)
      name += "." + std::to_string(at.level);
    auto outlined = builder.create<func::FuncOp>(
        function.getLoc(), name, builder.getFunctionType(function.getArgumentTypes(), {}));
    for (NamedAttribute attr : function->getDiscardableAttrs())
      outlined->setAttr(attr.getName(), attr.getValue());
    outlined->setAttr(dist::kStageAttrName, builder.getI64IntegerAttr(at.stage));
    outlined->setAttr(dist::kPartAttrName, builder.getStringAttr(actionKindName(at.part)));
    if (at.part == Part::Update)
      outlined->setAttr(dist::kLevelAttrName, builder.getI64IntegerAttr(at.level));
    if (ArrayAttr args = function.getArgAttrsAttr())
      outlined.setArgAttrsAttr(args);
    Block *entry = outlined.addEntryBlock();
    IRMapping &mapping = mappings[at];
    for (auto [original, argument] : llvm::zip(function.getArguments(), entry->getArguments()))
      mapping.map(original, argument);
    it->second = outlined;
    return outlined;
  }

  LogicalResult outline() {
    for (Operation *op : ops) {
      auto found = place.find(op);
      if (found == place.end())
        continue;
      const Place at = found->second;
      functionFor(at);
      if (failed(cloneInto(op, at, op)))
        return failure();
    }
    if (failed(refreshReplicas()))
      return failure();
    // Each result is returned by the function that makes it.
    Operation *terminator = function.getBody().front().getTerminator();
    std::map<Place, SmallVector<std::pair<unsigned, Value>>> results;
    for (auto [index, value] : llvm::enumerate(terminator->getOperands())) {
      Operation *producer = value.getDefiningOp();
      auto found = producer ? place.find(producer) : place.end();
      if (found == place.end())
        return terminator->emitOpError()
               << "returns result " << index << ", which no stage computes";
      Place at = found->second;
      if (at.stage != stages - 1) {
        at = {stages - 1, Part::Update, *returnLevel};
        if (failed(materialize(value, at, terminator)))
          return failure();
      }
      results[at].push_back({unsigned(index), mappings[at].lookup(value)});
    }
    for (auto &[at, outlined] : functions) {
      SmallVector<Value> returned;
      SmallVector<Attribute> attrs;
      for (auto &[index, value] : results[at]) {
        returned.push_back(value);
        attrs.push_back(function.getResultAttrDict(index) ? Attribute(function.getResultAttrDict(index))
                                                          : DictionaryAttr::get(function.getContext()));
      }
      OpBuilder builder = OpBuilder::atBlockEnd(&outlined.getBody().front());
      builder.create<func::ReturnOp>(function.getLoc(), returned);
      outlined.setFunctionType(builder.getFunctionType(outlined.getArgumentTypes(),
                                                       TypeRange(ValueRange(returned))));
      if (!returned.empty())
        outlined.setResAttrsAttr(builder.getArrayAttr(attrs));
      // A function takes only the inputs it reads, except the first
      // stage's forward: it keeps them all, so that the programs together
      // keep the step's signature in its order.
      if (!(at == Place{0, Part::Forward, 0}))
        eraseUnusedArguments(outlined);
    }
    function.erase();
    return success();
  }

  /// Each replica takes its parameter's new value after the home's update
  /// wrote it, in an update level of its own; levels left empty between
  /// are empty programs (a stage's levels count from 0 without gaps).
  LogicalResult refreshReplicas() {
    for (auto [op, stage] : replicas) {
      auto weight = cast<graph::WeightOp>(op);
      auto assign = llvm::find_if(weight->getUsers(),
                                  [](Operation *user) { return isa<graph::AssignOp>(user); });
      if (assign == weight->getUsers().end())
        return weight.emitOpError() << "is trained but never written";
      const Place from = place.at(*assign);
      const Place to{stage, Part::Update, from.level + 1};
      functionFor(to);
      Value value = cast<graph::AssignOp>(*assign).getValue();
      if (failed(receive(value, from, to)))
        return failure();
      OpBuilder builder = OpBuilder::atBlockEnd(&functions[to].getBody().front());
      IRMapping &mapping = mappings[to];
      if (!mapping.contains(weight.getResult()))
        builder.clone(*weight, mapping);
      builder.create<graph::AssignOp>(assign->getLoc(), mapping.lookup(weight.getResult()),
                                      mapping.lookup(value));
    }
    std::map<int64_t, int64_t> levels;
    for (auto &[at, outlined] : functions)
      if (at.part == Part::Update)
        levels[at.stage] = std::max(levels[at.stage], at.level);
    for (auto [stage, last] : levels)
      for (int64_t level = 0; level < last; ++level)
        functionFor({stage, Part::Update, level});
    return success();
  }

  /// `value` in the function of `at`, for `user`: mapped already, a copy of
  /// a placed op, or received from the function that makes it.
  LogicalResult materialize(Value value, const Place &at, Operation *user) {
    IRMapping &mapping = mappings[at];
    if (mapping.contains(value))
      return success();
    Operation *producer = value.getDefiningOp();
    if (placed.contains(producer)) {
      if (auto weight = dyn_cast<graph::WeightOp>(producer); weight && isStorage(weight)) {
        auto owner = home.find(storageKey(weight));
        if (owner == home.end())
          return user->emitOpError() << "reads '" << weight.getName()
                                     << "', trained storage the step never writes";
        if (owner->second != at.stage) {
          if (at.part == Part::Update)
            // Another stage's storage: its update's first level sends it.
            return receive(value, {owner->second, Part::Update, 0}, at);
          // A parameter two stages read (a tied embedding and LM head, or
          // its mixed-precision copy): the reader keeps a replica, which the
          // home's update refreshes; the gradient of its use flows back to
          // the home like any other.
          if (!graph::holdsWeight(graph::trainRole(weight)))
            return user->emitOpError()
                   << "on stage " << at.stage << " reads '" << weight.getName()
                   << "', which stage " << owner->second << " keeps for its update";
          replicas.insert({weight.getOperation(), at.stage});
        }
      }
      for (Value operand : producer->getOperands())
        if (failed(materialize(operand, at, user)))
          return failure();
      OpBuilder::atBlockEnd(&functions[at].getBody().front()).clone(*producer, mapping);
      return success();
    }
    // What the loop derives from weights alone (a tensor-parallel slice of
    // a parameter, a weight's bf16 copy) is the same on every micro-batch:
    // the update computes it again rather than take it from one
    // micro-batch, and the stage's backward rather than keep it per
    // micro-batch in flight.
    const Place &made = place.at(producer);
    bool otherPart = at.part == Part::Update ? made.part != Part::Update
                                             : made.stage == at.stage && made.part != at.part;
    if (otherPart && invariant(producer))
      return cloneInto(producer, at, user);
    // With full recompute a stage's backward computes again what its own
    // forward computed (W takes what B computed again): only what the
    // stage received stays kept per micro-batch in flight.
    bool recomputes = at.stage < int64_t(recomputed.size()) && recomputed[at.stage];
    if (recomputes && at.part != Part::Update && made.stage == at.stage &&
        made.part == Part::Forward && recomputable(producer)) {
      Place backward{at.stage, Part::BackwardInput, 0};
      if (at.part == Part::BackwardWeight && mappings[backward].contains(value))
        return receive(value, backward, at);
      return cloneInto(producer, at, user);
    }
    // What this stage's forward (or B, for W) already received comes from
    // there, kept on the rank, instead of crossing the link again.
    Place from = place.at(producer);
    if (from.stage != at.stage && at.part != Part::Update)
      for (Part earlier : {Part::Forward, Part::BackwardInput}) {
        Place kept{at.stage, earlier, 0};
        if (int(earlier) < int(at.part) && mappings[kept].contains(value)) {
          from = kept;
          break;
        }
      }
    return receive(value, from, at);
  }

  /// `op` in the function of `at`, its operands materialized there first.
  LogicalResult cloneInto(Operation *op, const Place &at, Operation *user) {
    for (Value operand : op->getOperands())
      if (failed(materialize(operand, at, user)))
        return failure();
    Operation *copy = OpBuilder::atBlockEnd(&functions[at].getBody().front()).clone(*op, mappings[at]);
    copy->removeAttr(dist::kPipelineStageAttrName);
    return success();
  }

  /// Whether the backward may run `op` again: it writes nothing (a
  /// collective of the stage's ranks runs again on all of them alike).
  static bool recomputable(Operation *op) {
    return isa<dist::ReshardOp>(op) || isMemoryEffectFree(op);
  }

  /// Makes `value` (made in the function of `from`, or a storage weight
  /// copied there) a transfer into the function of `to`.
  LogicalResult receive(Value value, const Place &from, const Place &to) {
    if (from == to)
      return success();
    if (!mappings[from].contains(value)) {
      // Storage read by another stage's update: read it on its home.
      Operation *weight = value.getDefiningOp();
      functionFor(from);
      OpBuilder::atBlockEnd(&functions[from].getBody().front()).clone(*weight, mappings[from]);
    }
    int64_t transfer = transfers++;
    OpBuilder receiver = OpBuilder::atBlockEnd(&functions[to].getBody().front());
    auto recv =
        receiver.create<dist::RecvOp>(value.getLoc(), value.getType(), from.stage, transfer);
    OpBuilder::atBlockEnd(&functions[from].getBody().front())
        .create<dist::SendOp>(value.getLoc(), mappings[from].lookup(value), to.stage, transfer);
    mappings[to].map(value, recv.getResult());
    return success();
  }

  func::FuncOp function;
  int64_t stages;
  /// Per stage, whether its backward computes its forward again.
  ArrayRef<bool> recomputed;
  SmallVector<Operation *> ops;
  exec::MicrobatchLoopEndOp loopEnd;
  /// The last stage's update level that receives results made elsewhere.
  std::optional<int64_t> returnLevel;
  llvm::DenseSet<Operation *> placed;
  llvm::DenseMap<Operation *, Place> place;
  /// Trained storage (storageKey) -> the stage that writes it.
  llvm::StringMap<int64_t> home;
  MicrobatchInvariance invariant;
  /// Parameters another stage's loop reads, and that stage.
  /// (In the order first read: transfers are numbered in a fixed order.)
  llvm::SetVector<std::pair<Operation *, int64_t>> replicas;
  std::map<Place, func::FuncOp> functions;
  std::map<Place, IRMapping> mappings;
  int64_t transfers = 0;
};

struct PipelineTrainingProgramsPass
    : OnThePipeline<PipelineTrainingProgramsPass,
                    impl::PipelineTrainingProgramsPassBase<PipelineTrainingProgramsPass>> {
  LogicalResult run(ModuleOp module, dist::PipelineOp pipeline) {
    if (!module->hasAttr(graph::kTrainingAttrName))
      return success();
    auto functions = llvm::to_vector(module.getOps<func::FuncOp>());
    if (functions.size() != 1)
      return pipeline.emitError() << "expects the training step as one function to cut into "
                                     "stage programs, found "
                                  << functions.size();
    ArrayRef<bool> recomputed;
    if (auto attr = pipeline->getAttrOfType<DenseBoolArrayAttr>(dist::kRecomputedStagesAttrName))
      recomputed = attr.asArrayRef();
    return ProgramCutter(functions.front(), pipeline.getNumStages(), recomputed).run();
  }
};

} // namespace
} // namespace shardc::pipeline
