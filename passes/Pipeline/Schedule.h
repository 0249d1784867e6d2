//===- Schedule.h - each pipeline rank's ordered actions ---------*- C++ -*-===//
//
// Plain C++ behind shardc-pipeline-schedule. A schedule is one action list
// per pp rank; every rank with that pp coordinate runs it.
//
// Inference (ScheduleSpec::training false): forward actions come in the
// schedule's order (GPipe: the micro-batches in order through the rank's
// stage; interleaved: groups of P micro-batches through each of the rank's
// stages in turn, as Megatron-LM orders the forward passes); each forward
// is followed by the sends of what it made. Receives are placed before the
// forward that needs them, taking every message of the same peer in the
// order the peer sent them: point-to-point is matched in order per pair of
// ranks, so receiving in the sender's order is what keeps the pairs in
// step.
//
// Training (ScheduleSpec::training true, docs/pipeline.md "Training
// pipelines"): every stage has a forward (F), a backward_input (B), maybe a
// backward_weight (W) program per micro-batch and update programs by level.
// Each rank runs F, B, W of its stages in the order of the spec's kind
// (W right after its B unless said otherwise):
//  - gpipe: every F in micro-batch order, then every B in micro-batch order;
//  - 1f1b (PipeDream-Flush): rank p runs min(P-1-p, M) warm-up F's, then
//    F(next) and B(oldest) in turn, then the remaining B's;
//  - interleaved (V > 1, M a multiple of P; Megatron-LM): F's in groups of
//    P micro-batches through each chunk in turn, B's likewise with the
//    chunks reversed; min(2(P-p-1) + (V-1)P, MV) warm-up F's, then 1F1B;
//  - zb-h1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024,
//    figure 3): 1F1B with rank p's W's put off by p B's (W(m) right after
//    B(m+p), the rest after the last B): every rank keeps P micro-batches
//    in flight (1F1B's most, on rank 0), bubble (P-1)(F+B-W);
//  - zb-h2: a greedy run in time with the stages' costs: a free rank starts
//    the first action it can, B before F before W, an F only while fewer
//    than 2P-1 micro-batches are in flight (F done, W not) on it; where
//    ZB-H1's order is quicker for the costs, that one is taken.
// Then each rank's updates: level 0 of each of its stages in stage order,
// then level 1, ... Sends and receives are placed around the compute
// actions as for inference, for the transfers that cross pp ranks only: a
// transfer between programs of the same pp rank (a stage's F to its B, B
// to W) stays on the rank.
//
// checkSchedule runs the lists against each other (sends buffered, each
// receive takes the next message of its pair) and says which rank waits
// forever or receives a message it did not expect. simulateSchedule runs
// them in time with per-stage costs, for the predicted bubble.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_PIPELINE_SCHEDULE_H
#define SHARDC_PASSES_PIPELINE_SCHEDULE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardc::pipeline {

/// Forward, BackwardInput, BackwardWeight and Update are the compute
/// actions (a program of a stage runs); Send and Recv move a transfer.
enum class ActionKind { Forward, BackwardInput, BackwardWeight, Send, Recv, Update };

/// Forward / BackwardInput / BackwardWeight: that program of `stage` on
/// `microbatch`. Update: update program `level` of `stage`, once per step
/// (`microbatch` 0). Send / Recv: `transfer` of `microbatch`, to / from
/// `stage` (the peer stage).
/// "forward", "backward_input", "backward_weight", "update", "send", "recv":
/// the manifest's and the function attributes' names.
const char *actionKindName(ActionKind kind);

struct Action {
  ActionKind kind;
  int64_t stage;
  int64_t microbatch;
  int64_t transfer = -1;
  int64_t level = 0; ///< Update's level; 0 for every other kind
  bool operator==(const Action &other) const {
    return kind == other.kind && stage == other.stage && microbatch == other.microbatch &&
           transfer == other.transfer && level == other.level;
  }
  bool operator!=(const Action &other) const { return !(*this == other); }
};

/// A value that program (`fromPart`, `fromLevel`) of stage `from` makes and
/// program (`toPart`, `toLevel`) of stage `to` reads, once per micro-batch;
/// between two update programs, once per step (micro-batch 0). The levels
/// matter for Update parts only; an update never reads a per-micro-batch
/// program's value or the reverse (accumulators carry those). Inference transfers are forward to
/// forward. For training a transfer may go to an earlier stage (a
/// gradient) or stay on its stage (F's value kept for its B).
struct Transfer {
  int64_t from, to;
  ActionKind fromPart = ActionKind::Forward, toPart = ActionKind::Forward;
  int64_t fromLevel = 0, toLevel = 0;
};

struct ScheduleSpec {
  /// --schedule gpipe | interleaved | 1f1b | zb-h1 | zb-h2.
  enum class Kind { GPipe, Interleaved, OneFOneB, ZeroBubbleH1, ZeroBubbleH2 };

  int64_t ranks = 2;         ///< P
  int64_t virtualStages = 1; ///< V
  int64_t microbatches = 1;  ///< M
  /// The older spelling of kind == Interleaved; either one selects it.
  bool interleaved = false;
  std::vector<Transfer> transfers; ///< by id
  Kind kind = Kind::GPipe;
  /// Training: B (and W, updates) per stage as well as F. Without it only
  /// forwards are scheduled and the kind orders the forwards only (every
  /// kind but interleaved runs them in micro-batch order).
  bool training = false;
  /// Training, per stage (or empty: none): the number of update programs,
  /// levels 0 .. n-1.
  std::vector<int64_t> updateLevels = {};
  /// Training, per stage (or empty: every stage has one): whether the stage
  /// has a backward_weight program. Without one B does all of the backward
  /// and there is no W action.
  std::vector<bool> hasWeightPart = {};
  /// Simulation costs per stage (or empty: 1, 1, 1, 0 units). A stage
  /// without a W part runs its whole backward in B: B costs
  /// backwardInputSeconds + backwardWeightSeconds.
  std::vector<double> forwardSeconds = {}, backwardInputSeconds = {}, backwardWeightSeconds = {};
  std::vector<double> updateSeconds = {}; ///< per update action of the stage

  int64_t rankOf(int64_t stage) const { return stage % ranks; }
  int64_t stages() const { return ranks * virtualStages; }
  /// `kind`, with `interleaved` standing for Kind::Interleaved.
  Kind effectiveKind() const { return interleaved ? Kind::Interleaved : kind; }
  bool hasWeight(int64_t stage) const { return hasWeightPart.empty() || hasWeightPart[stage]; }
  int64_t levels(int64_t stage) const { return updateLevels.empty() ? 0 : updateLevels[stage]; }
};

using Schedule = std::vector<std::vector<Action>>;

/// "gpipe", "interleaved", "1f1b", "zb-h1", "zb-h2" (the --schedule names).
const char *scheduleKindName(ScheduleSpec::Kind kind);
/// The kind named so, or nullopt.
std::optional<ScheduleSpec::Kind> parseScheduleKind(const std::string &name);

/// Why `spec` is malformed (per-stage vectors of the wrong size, a transfer
/// naming no stage or a program the stage does not have, ...), or why its
/// kind has no schedule for it (training only: interleaved needs V > 1 and
/// M a multiple of P, Megatron-LM's rule; every other kind V = 1). Nullopt
/// when buildSchedule can build it. Inference specs never have the kind's
/// errors (their forward orders exist for any V and M).
std::optional<std::string> scheduleSpecError(const ScheduleSpec &spec);

/// The action lists, one per pp rank. When scheduleSpecError(spec) names
/// an error (or, for zb-h2, the transfers leave the greedy run nothing to
/// start: a cycle), returns an empty Schedule and sets *error (when given)
/// to it; otherwise sets *error to nullopt. For inference the lists are those the
/// inference schedule always had (same-rank transfers included).
Schedule buildSchedule(const ScheduleSpec &spec, std::optional<std::string> *error = nullptr);

/// An error naming the rank and action that cannot go on, or nullopt when
/// every list runs to its end with every message received as expected.
/// Training actions (backward_input, backward_weight, update) are refused
/// unless spec.training.
std::optional<std::string> checkSchedule(const ScheduleSpec &spec, const Schedule &schedule);

/// The schedule run in time: each compute action takes its stage's cost,
/// sends and receives none; an action starts when its rank is free and its
/// inputs are made (a receive waits for the producing action's end).
struct Simulation {
  /// Per rank, per action of its list: when it starts and ends (a send or
  /// a receive: the moment it happens, start == end).
  std::vector<std::vector<double>> start, end;
  std::vector<double> busy; ///< per rank: seconds of compute actions
  double makespan = 0;      ///< the step: the latest end over the ranks
  /// Per rank: the most (stage, micro-batch) pairs at once whose F is done
  /// and whose W (B for a stage without a W part) is not: the activations
  /// it keeps. 0 for inference.
  std::vector<int64_t> peakInFlight;
  /// Seconds rank `rank` waits in the step: makespan - busy.
  double idle(int64_t rank) const { return makespan - busy[rank]; }
  /// The predicted bubble share of `rank`: 1 - busy / makespan.
  double bubble(int64_t rank) const { return makespan > 0 ? 1 - busy[rank] / makespan : 0; }
};

/// Simulates a schedule that checkSchedule accepts; nullopt (and *error
/// set, when given) if the lists cannot run to their end.
std::optional<Simulation> simulateSchedule(const ScheduleSpec &spec, const Schedule &schedule,
                                           std::string *error = nullptr);

/// "forward stage 1 microbatch 0", "backward_input stage 0 microbatch 2",
/// "update stage 1 level 0", "recv transfer 3 microbatch 2 from stage 0".
std::string describe(const Action &action);

/// A training step of `spec`'s stages as a chain (each stage's forward
/// feeds the next's, each input gradient the previous stage's backward; a
/// stage's forward keeps values for its B, its B for its W; one update
/// level each): what the compiler knows of a pipeline before it cuts the
/// step into programs. Fills spec.transfers and spec.updateLevels.
void chainTransfers(ScheduleSpec &spec);

/// Per stage of a chain (chainTransfers) run by `kind` on unit costs: the
/// most micro-batches its pp rank holds activations for at once
/// (Simulation::peakInFlight): 1F1B's P - p, GPipe's M. Empty when the
/// schedule cannot be built (its error says why).
std::vector<int64_t> chainInFlight(ScheduleSpec::Kind kind, int64_t ranks, int64_t virtualStages,
                                   int64_t microbatches);

} // namespace shardc::pipeline

#endif
