//===- AutoShard.cpp - choose every op's sharding by cost -----------------===//
#include "passes/Sharding/Passes.h"

#include "passes/Sharding/MinSumSolver.h"
#include "passes/Sharding/ShardingConversion.h"
#include "passes/Sharding/ShardingProblem.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/ModelStateBytes.h"
#include "dialects/Graph/NodeLocation.h"
#include "dialects/Graph/TrainingPhase.h"
#include "runtime/core/MeshAxes.h"

#include "llvm/Support/FormatVariadic.h"

#include <limits>

using namespace mlir;

namespace shardc::sharding {
#define GEN_PASS_DEF_AUTOSHARDPASS
#include "passes/Sharding/Passes.h.inc"
} // namespace shardc::sharding

namespace shardc::sharding {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
/// Largest cost table an elimination may build (a transformer layer needs
/// a few thousand entries; a training step, whose backward reads forward
/// values from far back, up to about 8 million on the zoo's Phi dynamo
/// export at tp=2 with --sp: 6 s, 0.6 GB). It bounds time and memory on odd
/// graphs.
constexpr size_t kMaxTableEntries = size_t(1) << 24;

RankedTensorType tensorType(Value value) { return cast<RankedTensorType>(value.getType()); }

/// The distinct shardings a list of strategies gives one value, and which
/// one each strategy gives: pricing distinct pairs only keeps large models fast.
struct Distinct {
  std::vector<ValueSharding> shardings;
  SmallVector<unsigned> ofStrategy;

  template <typename Get> static Distinct of(size_t count, Get get) {
    Distinct distinct;
    for (size_t strategy = 0; strategy < count; ++strategy) {
      const ValueSharding &sharding = get(strategy);
      auto found = llvm::find(distinct.shardings, sharding);
      distinct.ofStrategy.push_back(found - distinct.shardings.begin());
      if (found == distinct.shardings.end())
        distinct.shardings.push_back(sharding);
    }
    return distinct;
  }
};

/// Where each trained weight is stored: the part its first (forward)
/// consumer takes of it (docs/training.md).
using TrainedHomes = llvm::DenseMap<Value, ValueSharding>;

class Search {
public:
  explicit Search(ShardingProblem &problem, TrainedHomes homes = TrainedHomes())
      : problem(problem), homes(std::move(homes)) {}

  FailureOr<std::vector<unsigned>> run(func::FuncOp function) {
    ArrayRef<OpChoices> ops = problem.choices();
    const MeshShape &mesh = problem.meshShape();
    // Variable i < ops.size() is op i: unary cost compute plus the reshards
    // of operands no op produces. Each produced value links its producer to
    // its consumers (below).
    unary.resize(ops.size());
    for (auto [consumer, op] : llvm::enumerate(ops)) {
      unary[consumer].assign(op.computeSeconds.begin(), op.computeSeconds.end());
      for (auto [position, operand] : llvm::enumerate(op.op->getOperands())) {
        // A trained weight is one storage the step writes (docs/training.md):
        // each device holds a part of its value, never a share of a sum (a
        // bias added once after a row-parallel linear). Once the storage is
        // placed (homes), another part is a reshard at run time, and the
        // write (graph.assign) must take the storage as it is.
        auto weight = operand.getDefiningOp<graph::WeightOp>();
        if (weight && weight->hasAttr(graph::kTrainAttrName))
          for (size_t strategy = 0; strategy < op.strategies.size(); ++strategy) {
            const ValueSharding &wanted = op.operands[strategy][position];
            auto home = homes.find(operand);
            if (!wanted.partial.empty() ||
                (home != homes.end() && isa<graph::AssignOp>(op.op) && wanted != home->second))
              unary[consumer][strategy] = kInfinity;
            else if (home != homes.end())
              unary[consumer][strategy] +=
                  problem.runTimeReshardSeconds(operand, home->second, wanted);
          }
        if (ShardingProblem::sourceKind(operand) != SourceKind::Complete)
          continue;
        // Every device holds it whole: slicing is free, a partial sum impossible.
        ValueSharding whole = ValueSharding::replicated(tensorType(operand).getRank());
        for (size_t strategy = 0; strategy < op.strategies.size(); ++strategy)
          unary[consumer][strategy] +=
              problem.reshardSeconds(operand, whole, op.operands[strategy][position]);
      }
    }
    for (auto [index, op] : llvm::enumerate(ops))
      if (failed(keepAnnotation(op, unary[index])))
        return failure();
    for (auto [producer, op] : llvm::enumerate(ops))
      for (OpResult result : op.op->getResults())
        linkUses(producer, result);
    for (std::vector<double> &costs : unary)
      solver.addVariable(std::move(costs));
    std::string error;
    auto solution = solver.solve(kMaxTableEntries, error);
    if (!solution)
      return function.emitError() << "the sharding search is too large: " << error;
    if (solution->cost == kInfinity) {
      InFlightDiagnostic error = function.emitError()
                                 << "no sharding of the program exists on the mesh ("
                                 << mesh.describe() << ")";
      if (deadLink)
        error << ": " << describeOp(deadLink->value.getDefiningOp())
              << " cannot give its result to " << describeOp(deadLink->consumer)
              << " in any sharding either takes";
      return error;
    }
    solution->values.resize(ops.size());
    return solution->values;
  }

private:
  /// An op the user annotated (`dist.shardings` in an MLIR input, after
  /// GSPMD and Shardy) keeps its annotation: every other strategy of it is
  /// ruled out, and the search plans the rest around it.
  LogicalResult keepAnnotation(const OpChoices &op, std::vector<double> &costs) {
    auto annotated = op.op->getAttrOfType<ArrayAttr>(dist::kShardingsAttrName);
    if (!annotated)
      return success();
    SmallVector<ValueSharding, 1> wanted;
    for (Attribute attr : annotated) {
      std::optional<ValueSharding> sharding =
          fromAttr(cast<dist::ShardingAttr>(attr), problem.meshShape());
      if (!sharding)
        return op.op->emitOpError() << "has a sharding the mesh does not fit";
      wanted.push_back(*sharding);
    }
    bool possible = false;
    for (auto [strategy, results] : llvm::enumerate(op.results)) {
      if (llvm::equal(results, wanted))
        possible = true;
      else
        costs[strategy] = kInfinity;
    }
    if (!possible)
      return op.op->emitOpError()
             << "is annotated with a sharding that none of its strategies gives (on mesh "
             << problem.meshShape().describe() << ")";
    return success();
  }

  /// One use of a value: an operand of an op that takes part (the sharding
  /// depends on its strategy) or a program result (whole).
  struct Use {
    std::optional<unsigned> consumer;
    unsigned position = 0;
  };

  /// A value read once costs a pair (producer, consumer). A value read
  /// several times gets a variable of its own, the sharding it is converted
  /// to once and shared, so consumers that want the same thing pay once.
  void linkUses(unsigned producer, OpResult result) {
    ArrayRef<OpChoices> ops = problem.choices();
    SmallVector<Use> uses;
    for (OpOperand &use : result.getUses()) {
      Operation *user = use.getOwner();
      if (auto consumer = problem.indexOf(user))
        uses.push_back({*consumer, use.getOperandNumber()});
      else if (isa<func::ReturnOp>(user))
        uses.push_back({std::nullopt, 0});
    }
    if (uses.empty())
      return;
    const OpChoices &from = ops[producer];
    unsigned number = result.getResultNumber();
    ValueSharding whole = ValueSharding::replicated(tensorType(result).getRank());
    auto wantedBy = [&](const Use &use) {
      if (!use.consumer)
        return Distinct{{whole}, {0}};
      const OpChoices &to = ops[*use.consumer];
      return Distinct::of(
          to.strategies.size(), [&](size_t strategy) -> auto & {
            return to.operands[strategy][use.position];
          });
    };
    Distinct given = Distinct::of(
        from.strategies.size(), [&](size_t strategy) -> auto & {
          return from.results[strategy][number];
        });
    if (uses.size() == 1) {
      link(result, producer, given, uses[0], wantedBy(uses[0]));
      return;
    }
    // The shared conversion's candidates: whatever the producer gives or a
    // consumer wants.
    Distinct shared;
    for (const ValueSharding &sharding : given.shardings)
      shared.shardings.push_back(sharding);
    for (const Use &use : uses)
      for (const ValueSharding &sharding : wantedBy(use).shardings)
        if (!llvm::is_contained(shared.shardings, sharding))
          shared.shardings.push_back(sharding);
    for (unsigned index = 0; index < shared.shardings.size(); ++index)
      shared.ofStrategy.push_back(index);
    unsigned variable = unary.size();
    unary.emplace_back(shared.shardings.size(), 0.0);
    solver.addPairwise(producer, variable, priceTable(result, given, shared));
    for (const Use &use : uses) {
      Distinct wanted = wantedBy(use);
      if (!use.consumer) {
        for (auto [index, sharding] : llvm::enumerate(shared.shardings))
          unary[variable][index] +=
              problem.reshardSeconds(result, sharding, whole, /*forCaller=*/true);
        continue;
      }
      solver.addPairwise(variable, *use.consumer, priceTable(result, shared, wanted));
    }
  }

  void link(Value value, unsigned producer, const Distinct &given, const Use &use,
            const Distinct &wanted) {
    if (!use.consumer) {
      for (size_t strategy = 0; strategy < given.ofStrategy.size(); ++strategy)
        unary[producer][strategy] +=
            problem.reshardSeconds(value, given.shardings[given.ofStrategy[strategy]],
                                   wanted.shardings[0], /*forCaller=*/true);
      return;
    }
    std::vector<double> table = priceTable(value, given, wanted);
    noteDeadLink(value, producer, *use.consumer, table);
    solver.addPairwise(producer, *use.consumer, std::move(table));
  }

  /// Remembers the first value that no strategy of its producer can hand to
  /// any strategy of `consumer` (each finite alone): the plan cannot exist,
  /// and the error names the two ops rather than the program.
  void noteDeadLink(Value value, unsigned producer, unsigned consumer,
                    const std::vector<double> &table) {
    if (deadLink)
      return;
    const std::vector<double> &from = unary[producer], &to = unary[consumer];
    for (size_t a = 0; a < from.size(); ++a)
      for (size_t b = 0; b < to.size(); ++b)
        if (from[a] < kInfinity && to[b] < kInfinity && table[a * to.size() + b] < kInfinity)
          return;
    deadLink = {value, problem.choices()[consumer].op};
  }

  /// Reshard seconds from each choice of `from` to each of `to`, priced once
  /// per distinct pair of shardings.
  std::vector<double> priceTable(Value value, const Distinct &from, const Distinct &to) {
    SmallVector<double> price(from.shardings.size() * to.shardings.size());
    for (auto [f, have] : llvm::enumerate(from.shardings))
      for (auto [t, want] : llvm::enumerate(to.shardings))
        price[f * to.shardings.size() + t] = problem.reshardSeconds(value, have, want);
    std::vector<double> table(from.ofStrategy.size() * to.ofStrategy.size());
    for (size_t a = 0; a < from.ofStrategy.size(); ++a)
      for (size_t b = 0; b < to.ofStrategy.size(); ++b)
        table[a * to.ofStrategy.size() + b] =
            price[from.ofStrategy[a] * to.shardings.size() + to.ofStrategy[b]];
    return table;
  }

  /// 'graph.where' (ONNX node 'Where_12'), or the write of a trained
  /// weight by name, for errors.
  static std::string describeOp(Operation *op) {
    if (auto assign = dyn_cast<graph::AssignOp>(op))
      if (auto weight = assign.getTarget().getDefiningOp<graph::WeightOp>())
        return "the write of the trained weight '" + weight.getName().str() + "'";
    std::string nodes = graph::onnxNodeNames(op->getLoc());
    return "'" + op->getName().getStringRef().str() + "'" +
           (nodes.empty() ? std::string() : " (ONNX node '" + nodes + "')");
  }

  struct DeadLink {
    Value value;
    Operation *consumer;
  };

  ShardingProblem &problem;
  TrainedHomes homes;
  std::optional<DeadLink> deadLink;
  MinSumProblem solver;
  std::vector<std::vector<double>> unary;
};

/// Bytes per device of a plan: weights (once per distinct sharding) and the
/// peak of live activations in program order.
/// What a device holds. A training step's trained weights, their gradients
/// and optimizer states are held as stored (`homes`) for the whole step; a
/// part of a trained weight another use wants is moved at run time and not
/// counted, and a weight's gradient (a backward value the optimizer reads)
/// is counted in `gradients`, not as an activation.
struct Memory {
  double weights = 0, gradients = 0, states = 0, activations = 0;
  double modelState() const { return weights + gradients + states; }
  void add(const graph::ModelStateBytes &bytes) {
    weights += bytes.weights;
    gradients += bytes.gradients;
    states += bytes.states;
  }
  double total() const { return modelState() + activations; }
};

/// A weight's gradient before reshards exist: a backward value the
/// optimizer reads (dialects/Graph/TrainingPhase.h).
bool isWeightGradient(Value value) {
  Operation *producer = value.getDefiningOp();
  if (!producer || graph::phaseOf(producer) != graph::Phase::Backward)
    return false;
  return llvm::any_of(value.getUsers(), [](Operation *user) {
    return graph::phaseOf(user) == graph::Phase::Optimizer;
  });
}

/// The ZeRO stage's dp ranks (1 without ZeRO or dp).
int64_t zeroRanks(const MeshShape &mesh, unsigned zeroStage) {
  std::optional<unsigned> dp = mesh.axis(rt::kDataAxis);
  return zeroStage > 0 && dp ? mesh.sizes[*dp] : 1;
}

Memory memoryOf(ShardingProblem &problem, ArrayRef<unsigned> chosen, const TrainedHomes &homes,
                unsigned zeroStage) {
  const MeshShape &mesh = problem.meshShape();
  ArrayRef<OpChoices> ops = problem.choices();
  Memory memory;
  auto bytesOf = [&](Value value, const ValueSharding &cut) {
    return double(tensorBytes(cut.localShape(tensorType(value).getShape(), mesh),
                              tensorType(value).getElementType()));
  };
  for (auto &[weight, home] : homes) {
    graph::ModelStateBytes bytes =
        graph::modelStateBytes(weight.getDefiningOp(), bytesOf(weight, home));
    bytes.gradients =
        graph::zeroGradientBytes(bytes.gradients, zeroStage, zeroRanks(mesh, zeroStage));
    memory.add(bytes);
  }
  llvm::DenseMap<Operation *, std::vector<ValueSharding>> weightCuts;
  llvm::DenseMap<Value, int64_t> localBytes;
  llvm::DenseMap<Value, Operation *> lastUse;
  for (auto [index, op] : llvm::enumerate(ops)) {
    for (auto [position, operand] : llvm::enumerate(op.op->getOperands())) {
      lastUse[operand] = op.op;
      if (ShardingProblem::sourceKind(operand) != SourceKind::Weight || homes.count(operand))
        continue;
      const ValueSharding &cut = op.operands[chosen[index]][position];
      auto &cuts = weightCuts[operand.getDefiningOp()];
      if (llvm::is_contained(cuts, cut))
        continue;
      cuts.push_back(cut);
      memory.weights += bytesOf(operand, cut);
    }
    bool training = !homes.empty();
    for (auto [position, result] : llvm::enumerate(op.op->getResults()))
      if (!training || !isWeightGradient(result))
        localBytes[result] = tensorBytes(
            op.results[chosen[index]][position].localShape(tensorType(result).getShape(), mesh),
            tensorType(result).getElementType());
  }
  double live = 0, peak = 0;
  for (const OpChoices &op : ops) {
    for (Value result : op.op->getResults())
      live += double(localBytes.lookup(result));
    peak = std::max(peak, live);
    for (Value operand : op.op->getOperands())
      if (lastUse.lookup(operand) == op.op && localBytes.count(operand))
        live -= double(localBytes.lookup(operand));
  }
  memory.activations = peak;
  return memory;
}

struct AutoShardPass : impl::AutoShardPassBase<AutoShardPass> {
  using Base::Base;

  /// The module's pipeline ranks (1 without one): its memory checks are
  /// over them together.
  int64_t pipelineRanks = 1;
  /// A pipeline whose stages' backward may compute their forward again
  /// (--recompute full or auto): the activations are the stage search's to
  /// check, knowing what is kept; this pass checks the model state only.
  bool stagesRecompute = false;

  void runOnOperation() override {
    auto run = [&](func::FuncOp function, dist::MeshOp mesh,
                   const DeviceModel &model) -> LogicalResult {
      int64_t budget = deviceMemory > 0 ? int64_t(deviceMemory) : model.memoryBytes;
      // A pipeline's rank holds about 1/P of the model; each stage's memory
      // is checked exactly once the stages are cut (shardc-pipeline-stages).
      pipelineRanks = 1;
      stagesRecompute = false;
      for (auto pipeline : getOperation().getOps<dist::PipelineOp>()) {
        pipelineRanks = pipeline.getPipelineRanks();
        stagesRecompute = pipeline.getRecompute() != "selective";
      }
      budget *= pipelineRanks;
      if (!zeroAuto)
        return shard(function, mesh, model, budget, zero);
      // The least ZeRO stage whose plan fits: a stage that does not leaves
      // the IR as it was, its errors dropped (warnings of the plan taken
      // pass); stage 3 says why none fits.
      for (unsigned stage = 0; stage < 3; ++stage) {
        ScopedDiagnosticHandler quiet(&getContext(), [](Diagnostic &diagnostic) {
          return success(diagnostic.getSeverity() == DiagnosticSeverity::Error);
        });
        if (succeeded(shard(function, mesh, model, budget, stage)))
          return success();
      }
      return shard(function, mesh, model, budget, 3);
    };
    if (failed(forEachFunctionOnMesh(getOperation(), device, run)))
      signalPassFailure();
  }

  /// Whether `op` is attention that the plan leaves whole over tp.
  static bool isAttentionWhole(Operation *op, ArrayRef<ValueSharding> results,
                               const MeshShape &meshShape) {
    std::optional<unsigned> tp = meshShape.axis(rt::kTensorAxis);
    return isa<graph::AttentionOp>(op) && tp && !results.empty() &&
           !results.front().splitsOver(*tp);
  }

  /// Attention left whole over tp (its heads do not split tp ways: 4 heads,
  /// --tp 8) costs every tp rank the whole computation, which the report
  /// shows only as a ratio to Megatron-LM's traffic: one warning, at the
  /// first such op, for all of them.
  static void warnAboutWholeAttention(ArrayRef<graph::AttentionOp> attention,
                                      const MeshShape &meshShape) {
    if (attention.empty())
      return;
    graph::AttentionOp first = attention.front();
    auto query = cast<RankedTensorType>(first.getQuery().getType());
    int64_t heads = query.getDimSize(query.getRank() - 3);
    int64_t ranks = meshShape.sizes[*meshShape.axis(rt::kTensorAxis)];
    auto warning = first.emitWarning()
                   << "attention with " << heads << " heads is not split over tp=" << ranks
                   << ": it is replicated, each of the " << ranks << " tp ranks computes all of it";
    if (attention.size() > 1)
      warning << " (here and in " << attention.size() - 1 << " more attention op"
              << (attention.size() > 2 ? "s" : "") << ")";
    warning << "; a tp that divides " << heads << " splits the heads";
  }

  /// The part of each trained weight its first consumer takes in `chosen`;
  /// with ZeRO stage 3 the weight the forward reads (a parameter, or a
  /// mixed-precision master's copy) is split over dp too, along its first
  /// dim dp divides (each use gathers it). A master, which only the update
  /// reads, is split with the optimizer's state from stage 1 on.
  static TrainedHomes trainedHomes(ShardingProblem &problem, ArrayRef<unsigned> chosen,
                                   unsigned zeroStage) {
    TrainedHomes homes;
    const MeshShape &mesh = problem.meshShape();
    for (auto [index, op] : llvm::enumerate(problem.choices()))
      for (auto [position, operand] : llvm::enumerate(op.op->getOperands())) {
        auto weight = operand.getDefiningOp<graph::WeightOp>();
        if (!weight || !weight->hasAttr(graph::kTrainAttrName))
          continue;
        ValueSharding home = op.operands[chosen[index]][position];
        if (zeroStage == 3 && graph::holdsWeight(graph::trainRole(weight)))
          splitOverDp(home, weight.getType().getShape(), mesh);
        homes.try_emplace(operand, home);
      }
    return homes;
  }

  /// Adds dp to the first dim of `sharding` whose part dp divides, if any.
  static void splitOverDp(ValueSharding &sharding, ArrayRef<int64_t> shape, const MeshShape &mesh) {
    std::optional<unsigned> dp = mesh.axis(rt::kDataAxis);
    if (!dp || sharding.splitsOver(*dp))
      return;
    SmallVector<int64_t> local = sharding.localShape(shape, mesh);
    for (auto [dim, size] : llvm::enumerate(local))
      if (size % mesh.sizes[*dp] == 0) {
        // In mesh order, as the strategies list a dim's axes.
        AxisList &axes = sharding.dims[dim];
        axes.insert(llvm::upper_bound(axes, *dp), *dp);
        return;
      }
  }

  /// A training step whose weights, gradients and optimizer states cannot
  /// fit however the plan splits them is refused before the search (which
  /// takes minutes on a GPT-3-sized step): only the axes that do not split
  /// the batch (tp, and ep for experts) split a weight, so each device holds
  /// at least 1/S of them, S the product of those axes' sizes.
  LogicalResult checkTrainingStateFits(func::FuncOp function, const MeshShape &mesh,
                                       int64_t budget, unsigned zeroStage) const {
    int64_t splits = 1;
    for (auto [name, size] : llvm::zip(mesh.names, mesh.sizes))
      if (!rt::splitsBatch(name) || name == rt::kExpertAxis)
        splits *= size;
    // ZeRO splits the optimizer state over dp (a mixed-precision step's
    // fp32 masters with it), from stage 2 the gradients, at stage 3 the
    // weights.
    const double dp = double(zeroRanks(mesh, zeroStage));
    Memory least;
    bool mixed = false;
    for (auto weight : function.getBody().front().getOps<graph::WeightOp>()) {
      if (graph::trainRole(weight).empty())
        continue;
      Type element = weight.getType().getElementType();
      double bytes = double(tensorBytes(weight.getType().getShape(), element)) / double(splits);
      graph::ModelStateBytes state = graph::modelStateBytes(weight, bytes);
      bool master = weight->hasAttr(graph::kComputeTypeAttrName);
      state.states /= dp;
      state.gradients /= zeroStage >= 2 ? dp : 1.0;
      state.weights /= zeroStage == 3 ? dp : 1.0;
      least.add(state);
      mixed |= master;
    }
    if (least.modelState() <= double(budget))
      return success();
    return function.emitError()
           << "the training step needs at least " << formatBytes(least.modelState()) << " "
           << budgetScope() << " before activations (weights " << formatBytes(least.weights)
           << ", gradients " << formatBytes(least.gradients) << ", optimizer state "
           << (mixed ? "with the fp32 master weights " : "") << formatBytes(least.states)
           << ", each split " << splits << " ways at most"
           << (zeroStage == 0   ? "; data parallelism holds whole copies"
               : zeroStage == 1 ? ", the optimizer state also over dp by ZeRO stage 1"
               : zeroStage == 2 ? ", the gradients and optimizer state also over dp by ZeRO stage 2"
                                : ", and over dp by ZeRO stage 3")
           << ") but " << budgetText(budget) << ": over by "
           << formatBytes(least.modelState() - double(budget));
  }

  /// Where a pipeline's memory is checked before its stages are cut: over
  /// its pp ranks together (each holds about 1/P of the model).
  std::string budgetScope() const {
    return pipelineRanks > 1 ? "over the " + std::to_string(pipelineRanks) + " pipeline ranks"
                             : "per device";
  }
  std::string budgetText(int64_t budget) const {
    if (pipelineRanks == 1)
      return "the device memory is " + formatBytes(double(budget));
    return "their memory is " + formatBytes(double(budget)) + " (" +
           formatBytes(double(budget / pipelineRanks)) + " each)";
  }

  /// Searches, and when the best plan does not fit, searches again with the
  /// embedding tables split too (replicating them is cheaper when it fits).
  /// `zeroStage` is the ZeRO stage. Until a plan fits, the IR is left as it
  /// is.
  LogicalResult shard(func::FuncOp function, dist::MeshOp mesh, const DeviceModel &model,
                      int64_t budget, unsigned zeroStage) {
    if (failed(checkTrainingStateFits(function, meshShapeOf(mesh), budget, zeroStage)))
      return failure();
    Memory needed;
    for (bool splitEmbeddings : {false, true}) {
      ShardingOptions options{model, true, sequenceParallel, splitEmbeddings, zeroStage};
      ShardingProblem problem(function, meshShapeOf(mesh), options);
      if (failed(problem.build()))
        return failure();
      FailureOr<std::vector<unsigned>> chosen = Search(problem).run(function);
      if (failed(chosen))
        return failure();
      // A training step: its trained weights are stored as their forward
      // consumers take them (Megatron's plan for the forward), and the
      // search runs again with every other use priced from that storage.
      TrainedHomes homes = trainedHomes(problem, *chosen, zeroStage);
      if (!homes.empty()) {
        chosen = Search(problem, homes).run(function);
        if (failed(chosen))
          return failure();
      }
      needed = memoryOf(problem, *chosen, homes, zeroStage);
      if ((stagesRecompute ? needed.modelState() : needed.total()) > double(budget))
        continue;
      if (zeroStage > 0)
        function->getParentOfType<ModuleOp>()->setAttr(
            graph::kZeroStageAttrName,
            IntegerAttr::get(IntegerType::get(function.getContext(), 64), zeroStage));
      SmallVector<graph::AttentionOp> wholeAttention;
      for (auto [index, op] : llvm::enumerate(problem.choices())) {
        SmallVector<dist::ShardingAttr> shardings;
        for (const ValueSharding &sharding : op.results[(*chosen)[index]])
          shardings.push_back(toAttr(sharding, problem.meshShape(), mesh));
        dist::setResultShardings(op.op, shardings);
        // Results alone do not say what a routed op or a result-less one (a
        // training step's write) takes: its operands' parts are kept too.
        if (op.rule.routed || op.op->getNumResults() == 0) {
          SmallVector<Attribute> operands;
          for (const ValueSharding &sharding : op.operands[(*chosen)[index]])
            operands.push_back(toAttr(sharding, problem.meshShape(), mesh));
          op.op->setAttr(dist::kOperandShardingsAttrName,
                         ArrayAttr::get(op.op->getContext(), operands));
        }
        if (isAttentionWhole(op.op, op.results[(*chosen)[index]], problem.meshShape()))
          wholeAttention.push_back(cast<graph::AttentionOp>(op.op));
      }
      warnAboutWholeAttention(wholeAttention, problem.meshShape());
      return success();
    }
    if (needed.gradients > 0)
      return function.emitError() << "the training step needs " << formatBytes(needed.modelState())
                                  << " " << budgetScope() << " before activations (weights "
                                  << formatBytes(needed.weights) << ", gradients "
                                  << formatBytes(needed.gradients) << ", optimizer state "
                                  << formatBytes(needed.states) << ") and "
                                  << formatBytes(needed.activations) << " of activations, "
                                  << formatBytes(needed.total()) << " in all, but "
                                  << budgetText(budget) << ": over by "
                                  << formatBytes(needed.total() - double(budget))
                                  << (pipelineRanks > 1 && needed.modelState() <= double(budget)
                                          ? " (--recompute auto keeps fewer activations)"
                                          : "");
    return function.emitError() << "the plan needs " << formatBytes(needed.total()) << " "
                                << budgetScope() << " (weights " << formatBytes(needed.weights)
                                << ", activations " << formatBytes(needed.activations) << ") but "
                                << budgetText(budget) << ": over by " << formatBytes(needed.total() - double(budget));
  }
};

} // namespace
} // namespace shardc::sharding
