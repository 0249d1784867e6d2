//===- Schedule.cpp - each pipeline rank's ordered actions ----------------===//
#include "passes/Pipeline/Schedule.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <tuple>

namespace shardc::pipeline {
namespace {

using Kind = ScheduleSpec::Kind;

bool isCompute(ActionKind kind) { return kind != ActionKind::Send && kind != ActionKind::Recv; }


Action compute(ActionKind kind, int64_t stage, int64_t microbatch, int64_t level = 0) {
  return {kind, stage, microbatch, -1, level};
}

/// Whether compute action `action` is the program that makes / reads
/// `transfer` (levels count for update programs only).
bool makes(const Transfer &transfer, const Action &action) {
  return action.stage == transfer.from && action.kind == transfer.fromPart &&
         (action.kind != ActionKind::Update || action.level == transfer.fromLevel);
}
bool reads(const Transfer &transfer, const Action &action) {
  return action.stage == transfer.to && action.kind == transfer.toPart &&
         (action.kind != ActionKind::Update || action.level == transfer.toLevel);
}

/// The compute action that makes `transfer` of `microbatch`.
Action producerOf(const Transfer &transfer, int64_t microbatch) {
  return compute(transfer.fromPart, transfer.from, microbatch,
                 transfer.fromPart == ActionKind::Update ? transfer.fromLevel : 0);
}

/// A compute action as a map key: (kind, stage, microbatch, level).
using Key = std::tuple<int, int64_t, int64_t, int64_t>;
Key keyOf(const Action &action) {
  return {int(action.kind), action.stage, action.microbatch, action.level};
}

double costOf(const ScheduleSpec &spec, const Action &action) {
  auto at = [&](const std::vector<double> &costs, double otherwise) {
    return costs.empty() ? otherwise : costs[action.stage];
  };
  switch (action.kind) {
  case ActionKind::Forward:
    return at(spec.forwardSeconds, 1);
  case ActionKind::BackwardInput:
    return at(spec.backwardInputSeconds, 1) +
           (spec.hasWeight(action.stage) ? 0 : at(spec.backwardWeightSeconds, 1));
  case ActionKind::BackwardWeight:
    return at(spec.backwardWeightSeconds, 1);
  case ActionKind::Update:
    return at(spec.updateSeconds, 0);
  case ActionKind::Send:
  case ActionKind::Recv:
    return 0;
  }
  return 0;
}

/// The action after which (stage, microbatch)'s activations are freed: W,
/// or B for a stage without a W part.
bool endsInFlight(const ScheduleSpec &spec, const Action &action) {
  return action.kind == ActionKind::BackwardWeight ||
         (action.kind == ActionKind::BackwardInput && !spec.hasWeight(action.stage));
}

/// What is wrong with the spec's shape (independent of the kind's rules).
std::optional<std::string> malformed(const ScheduleSpec &spec) {
  if (spec.ranks < 1 || spec.virtualStages < 1 || spec.microbatches < 1)
    return "the pipeline needs P, V and M of at least 1: P=" + std::to_string(spec.ranks) +
           ", V=" + std::to_string(spec.virtualStages) + ", M=" + std::to_string(spec.microbatches);
  int64_t stages = spec.stages();
  auto perStage = [&](size_t size, const char *name) -> std::optional<std::string> {
    if (size != 0 && int64_t(size) != stages)
      return std::string(name) + " has " + std::to_string(size) + " entries for " +
             std::to_string(stages) + " stages";
    return std::nullopt;
  };
  for (auto [size, name] : {std::pair{spec.updateLevels.size(), "updateLevels"},
                            std::pair{spec.hasWeightPart.size(), "hasWeightPart"},
                            std::pair{spec.forwardSeconds.size(), "forwardSeconds"},
                            std::pair{spec.backwardInputSeconds.size(), "backwardInputSeconds"},
                            std::pair{spec.backwardWeightSeconds.size(), "backwardWeightSeconds"},
                            std::pair{spec.updateSeconds.size(), "updateSeconds"}})
    if (std::optional<std::string> error = perStage(size, name))
      return error;
  for (int64_t level : spec.updateLevels)
    if (level < 0)
      return "updateLevels has a negative count " + std::to_string(level);
  for (auto [costs, name] : {std::pair{&spec.forwardSeconds, "forwardSeconds"},
                             std::pair{&spec.backwardInputSeconds, "backwardInputSeconds"},
                             std::pair{&spec.backwardWeightSeconds, "backwardWeightSeconds"},
                             std::pair{&spec.updateSeconds, "updateSeconds"}})
    for (double cost : *costs)
      if (!(cost >= 0 && cost < std::numeric_limits<double>::infinity()))
        return std::string(name) + " has " + std::to_string(cost) +
               ": a cost is a finite number of seconds >= 0";
  if (spec.interleaved && spec.kind != Kind::GPipe && spec.kind != Kind::Interleaved)
    return std::string("interleaved is set for the ") + scheduleKindName(spec.kind) + " schedule";
  for (size_t id = 0; id < spec.transfers.size(); ++id) {
    const Transfer &transfer = spec.transfers[id];
    std::string name = "transfer " + std::to_string(id);
    if (transfer.from < 0 || transfer.from >= stages || transfer.to < 0 || transfer.to >= stages)
      return name + " goes from stage " + std::to_string(transfer.from) + " to stage " +
             std::to_string(transfer.to) + ", not both in [0, " + std::to_string(stages - 1) + "]";
    if (!spec.training) {
      if (transfer.fromPart != ActionKind::Forward || transfer.toPart != ActionKind::Forward)
        return name + " goes between " + actionKindName(transfer.fromPart) + " and " +
               actionKindName(transfer.toPart) + " programs: an inference pipeline has forwards only";
      continue;
    }
    for (auto [stage, part, level] :
         {std::tuple{transfer.from, transfer.fromPart, transfer.fromLevel},
          std::tuple{transfer.to, transfer.toPart, transfer.toLevel}}) {
      std::string program =
          "the " + std::string(actionKindName(part)) + " program of stage " + std::to_string(stage);
      if (!isCompute(part))
        return name + " names a " + actionKindName(part) + " program";
      if (part == ActionKind::BackwardWeight && !spec.hasWeight(stage))
        return name + " names " + program + ", which it does not have";
      if (part == ActionKind::Update && (level < 0 || level >= spec.levels(stage)))
        return name + " names " + program + " of level " + std::to_string(level) +
               ", which it does not have";
    }
    // With one micro-batch the step has no accumulation: the update reads
    // what that micro-batch's programs made.
    const bool intoUpdate =
        transfer.fromPart != ActionKind::Update && transfer.toPart == ActionKind::Update;
    if ((transfer.fromPart == ActionKind::Update) != (transfer.toPart == ActionKind::Update) &&
        !(intoUpdate && spec.microbatches == 1))
      return name + " goes between a " + actionKindName(transfer.fromPart) + " and a " +
             actionKindName(transfer.toPart) +
             " program: an update runs once per step, the others once per micro-batch";
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// The compute actions of each rank, in the kind's order
//===----------------------------------------------------------------------===//

/// Inference: the forwards of pp rank `rank`, in the schedule's order.
std::vector<Action> forwards(const ScheduleSpec &spec, int64_t rank) {
  std::vector<Action> order;
  if (spec.effectiveKind() != Kind::Interleaved) {
    for (int64_t microbatch = 0; microbatch < spec.microbatches; ++microbatch)
      order.push_back(compute(ActionKind::Forward, rank, microbatch));
    return order;
  }
  for (int64_t first = 0; first < spec.microbatches; first += spec.ranks)
    for (int64_t chunk = 0; chunk < spec.virtualStages; ++chunk)
      for (int64_t microbatch = first; microbatch < std::min(first + spec.ranks, spec.microbatches);
           ++microbatch)
        order.push_back(compute(ActionKind::Forward, chunk * spec.ranks + rank, microbatch));
  return order;
}

/// B(stage, microbatch), and its W right after it when the stage has one.
void backward(const ScheduleSpec &spec, std::vector<Action> &order, int64_t stage,
              int64_t microbatch) {
  order.push_back(compute(ActionKind::BackwardInput, stage, microbatch));
  if (spec.hasWeight(stage))
    order.push_back(compute(ActionKind::BackwardWeight, stage, microbatch));
}

/// Warm-up forwards, then one forward and one backward in turn, then the
/// remaining backwards: 1F1B's shape, for 1F1B, interleaved 1F1B and
/// ZB-H1. `forwardOrder[k]` and `backwardOrder[k]` are (stage,
/// microbatch). Each W comes right after the B `deferW` B's after its own
/// (0: right after its B); the W's still due after the last B follow it.
std::vector<Action>
oneForwardOneBackward(const ScheduleSpec &spec,
                      const std::vector<std::pair<int64_t, int64_t>> &forwardOrder,
                      const std::vector<std::pair<int64_t, int64_t>> &backwardOrder, int64_t warmup,
                      int64_t deferW = 0) {
  std::vector<Action> order;
  std::deque<Action> dueW;
  auto runBackward = [&](const std::pair<int64_t, int64_t> &which) {
    const auto &[stage, microbatch] = which;
    order.push_back(compute(ActionKind::BackwardInput, stage, microbatch));
    if (spec.hasWeight(stage))
      dueW.push_back(compute(ActionKind::BackwardWeight, stage, microbatch));
    if (int64_t(dueW.size()) > deferW) {
      order.push_back(dueW.front());
      dueW.pop_front();
    }
  };
  int64_t total = int64_t(forwardOrder.size());
  warmup = std::min(warmup, total);
  for (int64_t k = 0; k < warmup; ++k)
    order.push_back(compute(ActionKind::Forward, forwardOrder[k].first, forwardOrder[k].second));
  for (int64_t k = 0; k < total - warmup; ++k) {
    const auto &[stage, microbatch] = forwardOrder[warmup + k];
    order.push_back(compute(ActionKind::Forward, stage, microbatch));
    runBackward(backwardOrder[k]);
  }
  for (int64_t k = total - warmup; k < total; ++k)
    runBackward(backwardOrder[k]);
  order.insert(order.end(), dueW.begin(), dueW.end());
  return order;
}

std::vector<Action> gpipeTraining(const ScheduleSpec &spec, int64_t rank) {
  std::vector<Action> order;
  for (int64_t microbatch = 0; microbatch < spec.microbatches; ++microbatch)
    order.push_back(compute(ActionKind::Forward, rank, microbatch));
  for (int64_t microbatch = 0; microbatch < spec.microbatches; ++microbatch)
    backward(spec, order, rank, microbatch);
  return order;
}

/// 1F1B (PipeDream-Flush): P-1-p warm-up forwards on rank p. ZB-H1 (Qi et
/// al., "Zero Bubble Pipeline Parallelism", ICLR 2024, figure 3) is the
/// same order with rank p's W's put off by p B's: every rank then keeps P
/// micro-batches in flight (1F1B's most, on rank 0) and the W's fill the
/// cool-down, for a bubble of (P-1)(F+B-W) instead of (P-1)(F+B).
std::vector<Action> oneFOneB(const ScheduleSpec &spec, int64_t rank, bool zeroBubble) {
  std::vector<std::pair<int64_t, int64_t>> microbatches;
  for (int64_t microbatch = 0; microbatch < spec.microbatches; ++microbatch)
    microbatches.push_back({rank, microbatch});
  return oneForwardOneBackward(spec, microbatches, microbatches, spec.ranks - 1 - rank,
                               zeroBubble ? rank : 0);
}

/// Megatron-LM's interleaved 1F1B (M a multiple of P): the k-th forward is
/// micro-batch group * P + k % P through chunk (k mod P*V) / P, the k-th
/// backward the same micro-batch through the chunks in reverse.
std::vector<Action> interleavedTraining(const ScheduleSpec &spec, int64_t rank) {
  int64_t ranks = spec.ranks, chunks = spec.virtualStages;
  std::vector<std::pair<int64_t, int64_t>> forwardOrder, backwardOrder;
  for (int64_t k = 0; k < spec.microbatches * chunks; ++k) {
    int64_t group = k / (ranks * chunks), inGroup = k % (ranks * chunks);
    int64_t chunk = inGroup / ranks, microbatch = group * ranks + inGroup % ranks;
    forwardOrder.push_back({chunk * ranks + rank, microbatch});
    backwardOrder.push_back({(chunks - 1 - chunk) * ranks + rank, microbatch});
  }
  return oneForwardOneBackward(spec, forwardOrder, backwardOrder,
                               (ranks - rank - 1) * 2 + (chunks - 1) * ranks);
}

/// ZB-H2 (Qi et al., ICLR 2024): a greedy run in time with the stages'
/// costs (buildSchedule takes ZB-H1's order instead where that one is
/// quicker). A rank that is free starts the first action it can, B before F
/// before W (earliest micro-batch first); an F only while its micro-batches
/// in flight (F done, W not) are fewer than 2P-1 (the paper's memory for
/// ZB-H2, on every rank); an action only once its inputs are made (their
/// producers ended; transfers take no time).
std::optional<std::string> zeroBubbleH2(const ScheduleSpec &spec, Schedule &order) {
  int64_t ranks = spec.ranks, microbatches = spec.microbatches;
  std::map<Key, double> ended; // compute action -> its end, once started
  auto doneBy = [&](const Action &action, double time) {
    auto found = ended.find(keyOf(action));
    return found != ended.end() && found->second <= time;
  };
  auto inputsMade = [&](const Action &action, double time) {
    for (const Transfer &transfer : spec.transfers)
      if (reads(transfer, action) && !doneBy(producerOf(transfer, action.microbatch), time))
        return false;
    return true;
  };
  std::vector<double> freeAt(ranks, 0);
  std::vector<int64_t> nextForward(ranks, 0), inFlight(ranks, 0);
  int64_t remaining = 0;
  for (int64_t rank = 0; rank < ranks; ++rank)
    remaining += microbatches * (spec.hasWeight(rank) ? 3 : 2);
  order.assign(ranks, {});
  // The action rank `rank` (stage `rank`: V = 1) starts at `time`, if any.
  auto choose = [&](int64_t rank, double time) -> std::optional<Action> {
    int64_t stage = rank;
    for (int64_t microbatch = 0; microbatch < microbatches; ++microbatch) {
      Action b = compute(ActionKind::BackwardInput, stage, microbatch);
      if (!ended.count(keyOf(b)) && doneBy(compute(ActionKind::Forward, stage, microbatch), time) &&
          inputsMade(b, time))
        return b;
    }
    if (nextForward[rank] < microbatches && inFlight[rank] < 2 * ranks - 1) {
      Action f = compute(ActionKind::Forward, stage, nextForward[rank]);
      if (inputsMade(f, time))
        return f;
    }
    if (spec.hasWeight(stage))
      for (int64_t microbatch = 0; microbatch < microbatches; ++microbatch) {
        Action w = compute(ActionKind::BackwardWeight, stage, microbatch);
        if (!ended.count(keyOf(w)) &&
            doneBy(compute(ActionKind::BackwardInput, stage, microbatch), time) &&
            inputsMade(w, time))
          return w;
      }
    return std::nullopt;
  };
  double time = 0;
  while (remaining > 0) {
    bool started = false;
    for (int64_t rank = 0; rank < ranks; ++rank) {
      if (freeAt[rank] > time)
        continue;
      std::optional<Action> action = choose(rank, time);
      if (!action)
        continue;
      order[rank].push_back(*action);
      freeAt[rank] = time + costOf(spec, *action);
      ended[keyOf(*action)] = freeAt[rank];
      if (action->kind == ActionKind::Forward) {
        ++nextForward[rank];
        ++inFlight[rank];
      }
      if (endsInFlight(spec, *action))
        --inFlight[rank];
      --remaining;
      started = true;
    }
    if (started)
      continue; // a free action may have made another one's input at this time
    double next = std::numeric_limits<double>::infinity();
    for (double free : freeAt)
      if (free > time)
        next = std::min(next, free);
    if (next == std::numeric_limits<double>::infinity())
      return std::string("the transfers leave the ") + scheduleKindName(spec.effectiveKind()) +
             " schedule no action to run (a cycle?)";
    time = next;
  }
  return std::nullopt;
}

/// Then each rank's updates: level 0 of its stages in stage order, then
/// level 1, ...
void appendUpdates(const ScheduleSpec &spec, Schedule &order) {
  int64_t levels = 0;
  for (int64_t stage = 0; stage < spec.stages(); ++stage)
    levels = std::max(levels, spec.levels(stage));
  for (int64_t rank = 0; rank < spec.ranks; ++rank)
    for (int64_t level = 0; level < levels; ++level)
      for (int64_t stage = rank; stage < spec.stages(); stage += spec.ranks)
        if (level < spec.levels(stage))
          order[rank].push_back(compute(ActionKind::Update, stage, 0, level));
}

//===----------------------------------------------------------------------===//
// Sends and receives around the compute actions
//===----------------------------------------------------------------------===//

using Message = std::pair<int64_t, int64_t>; // transfer, microbatch
using Channels = std::map<std::pair<int64_t, int64_t>, std::deque<Message>>;

/// Each compute action followed by the sends of what it made, preceded by
/// the receives of what it reads, every pair's messages received in the
/// order they were sent. `sameRank`: also transfers whose ends are on one
/// pp rank (inference keeps them; training leaves the value on the rank).
Schedule withTransfers(const ScheduleSpec &spec, const Schedule &order, bool sameRank) {
  auto crosses = [&](const Transfer &transfer) {
    return sameRank || spec.rankOf(transfer.from) != spec.rankOf(transfer.to);
  };
  Schedule withSends(spec.ranks);
  Channels channels; // (sender, receiver) -> messages in the order sent
  for (int64_t rank = 0; rank < spec.ranks; ++rank)
    for (const Action &action : order[rank]) {
      withSends[rank].push_back(action);
      for (size_t id = 0; id < spec.transfers.size(); ++id) {
        const Transfer &transfer = spec.transfers[id];
        if (!makes(transfer, action) || !crosses(transfer))
          continue;
        withSends[rank].push_back({ActionKind::Send, transfer.to, action.microbatch, int64_t(id)});
        channels[{rank, spec.rankOf(transfer.to)}].push_back({int64_t(id), action.microbatch});
      }
    }
  Schedule schedule(spec.ranks);
  for (int64_t rank = 0; rank < spec.ranks; ++rank) {
    std::set<Message> received;
    for (const Action &action : withSends[rank]) {
      if (isCompute(action.kind))
        for (size_t id = 0; id < spec.transfers.size(); ++id) {
          const Transfer &transfer = spec.transfers[id];
          if (!reads(transfer, action) || !crosses(transfer))
            continue;
          std::deque<Message> &pending = channels[{spec.rankOf(transfer.from), rank}];
          Message wanted = {int64_t(id), action.microbatch};
          // Taken already by an earlier action's receives?
          bool taken = received.count(wanted);
          while (!taken && !pending.empty()) {
            Message next = pending.front();
            pending.pop_front();
            schedule[rank].push_back(
                {ActionKind::Recv, spec.transfers[next.first].from, next.second, next.first});
            received.insert(next);
            taken = next == wanted;
          }
        }
      schedule[rank].push_back(action);
    }
  }
  return schedule;
}

} // namespace

const char *actionKindName(ActionKind kind) {
  switch (kind) {
  case ActionKind::Forward:
    return "forward";
  case ActionKind::BackwardInput:
    return "backward_input";
  case ActionKind::BackwardWeight:
    return "backward_weight";
  case ActionKind::Update:
    return "update";
  case ActionKind::Send:
    return "send";
  case ActionKind::Recv:
    return "recv";
  }
  return "";
}

const char *scheduleKindName(ScheduleSpec::Kind kind) {
  switch (kind) {
  case Kind::GPipe:
    return "gpipe";
  case Kind::Interleaved:
    return "interleaved";
  case Kind::OneFOneB:
    return "1f1b";
  case Kind::ZeroBubbleH1:
    return "zb-h1";
  case Kind::ZeroBubbleH2:
    return "zb-h2";
  }
  return "";
}

std::optional<ScheduleSpec::Kind> parseScheduleKind(const std::string &name) {
  for (Kind kind :
       {Kind::GPipe, Kind::Interleaved, Kind::OneFOneB, Kind::ZeroBubbleH1, Kind::ZeroBubbleH2})
    if (name == scheduleKindName(kind))
      return kind;
  return std::nullopt;
}

std::optional<std::string> scheduleSpecError(const ScheduleSpec &spec) {
  if (std::optional<std::string> error = malformed(spec))
    return error;
  if (!spec.training)
    return std::nullopt;
  Kind kind = spec.effectiveKind();
  std::string name = scheduleKindName(kind);
  if (kind == Kind::Interleaved) {
    if (spec.virtualStages == 1)
      return "the interleaved schedule needs virtual stages > 1 (V=1): use 1f1b";
    if (spec.microbatches % spec.ranks != 0)
      return "the interleaved schedule needs micro-batches a multiple of the pipeline ranks "
             "(Megatron-LM's rule): M=" +
             std::to_string(spec.microbatches) + ", P=" + std::to_string(spec.ranks);
  } else if (spec.virtualStages != 1) {
    return "the " + name + " schedule runs one stage per pipeline rank, not V=" +
           std::to_string(spec.virtualStages) + " virtual stages: use the interleaved schedule";
  }
  return std::nullopt;
}

Schedule buildSchedule(const ScheduleSpec &spec, std::optional<std::string> *error) {
  std::optional<std::string> invalid = scheduleSpecError(spec);
  if (error)
    *error = invalid;
  if (invalid)
    return {};
  Schedule order(spec.ranks);
  if (!spec.training) {
    for (int64_t rank = 0; rank < spec.ranks; ++rank)
      order[rank] = forwards(spec, rank);
    return withTransfers(spec, order, /*sameRank=*/true);
  }
  auto oneFOneBOrder = [&](bool zeroBubble) {
    Schedule order(spec.ranks);
    for (int64_t rank = 0; rank < spec.ranks; ++rank)
      order[rank] = oneFOneB(spec, rank, zeroBubble);
    return order;
  };
  auto finish = [&](Schedule order) {
    appendUpdates(spec, order);
    return withTransfers(spec, order, /*sameRank=*/false);
  };
  switch (spec.effectiveKind()) {
  case Kind::GPipe:
    for (int64_t rank = 0; rank < spec.ranks; ++rank)
      order[rank] = gpipeTraining(spec, rank);
    break;
  case Kind::OneFOneB:
    order = oneFOneBOrder(false);
    break;
  case Kind::ZeroBubbleH1:
    order = oneFOneBOrder(true);
    break;
  case Kind::Interleaved:
    for (int64_t rank = 0; rank < spec.ranks; ++rank)
      order[rank] = interleavedTraining(spec, rank);
    break;
  case Kind::ZeroBubbleH2: {
    if (std::optional<std::string> stuck = zeroBubbleH2(spec, order)) {
      if (error)
        *error = stuck;
      return {};
    }
    // The greedy run looks no further than the next action: where ZB-H1's
    // order (within ZB-H2's memory) is quicker for these costs, take it.
    Schedule greedy = finish(order), h1 = finish(oneFOneBOrder(true));
    std::optional<Simulation> greedyTime = simulateSchedule(spec, greedy);
    std::optional<Simulation> h1Time = simulateSchedule(spec, h1);
    if (greedyTime && h1Time && h1Time->makespan < greedyTime->makespan)
      return h1;
    return greedy;
  }
  }
  return finish(order);
}

std::string describe(const Action &action) {
  std::string microbatch = " microbatch " + std::to_string(action.microbatch);
  std::string transfer = "transfer " + std::to_string(action.transfer) + microbatch;
  std::string stage = " stage " + std::to_string(action.stage);
  switch (action.kind) {
  case ActionKind::Forward:
  case ActionKind::BackwardInput:
  case ActionKind::BackwardWeight:
    return actionKindName(action.kind) + stage + microbatch;
  case ActionKind::Update:
    return "update" + stage + " level " + std::to_string(action.level);
  case ActionKind::Send:
    return "send " + transfer + " to stage " + std::to_string(action.stage);
  case ActionKind::Recv:
    return "recv " + transfer + " from stage " + std::to_string(action.stage);
  }
  return "";
}

std::optional<std::string> checkSchedule(const ScheduleSpec &spec, const Schedule &schedule) {
  if (std::optional<std::string> error = malformed(spec))
    return "the pipeline is malformed: " + *error;
  if (int64_t(schedule.size()) != spec.ranks)
    return "the schedule has " + std::to_string(schedule.size()) + " action lists for " +
           std::to_string(spec.ranks) + " pipeline ranks";
  int64_t stages = spec.stages();
  auto where = [](int64_t rank, size_t index, const Action &action) {
    return "pp rank " + std::to_string(rank) + ", action " + std::to_string(index) + " (" +
           describe(action) + ")";
  };
  // Each action on its own: a stage of this rank, a micro-batch, a program
  // the stage has, a transfer that connects this rank's stage to the named
  // one.
  std::map<Key, int> runs; // compute action -> count
  for (int64_t rank = 0; rank < spec.ranks; ++rank)
    for (size_t index = 0; index < schedule[rank].size(); ++index) {
      const Action &action = schedule[rank][index];
      if (action.microbatch < 0 || action.microbatch >= spec.microbatches || action.stage < 0 ||
          action.stage >= stages)
        return where(rank, index, action) + ": no such stage or micro-batch";
      if (!spec.training &&
          (action.kind == ActionKind::BackwardInput || action.kind == ActionKind::BackwardWeight))
        return where(rank, index, action) + ": backward actions need a training program";
      if (!spec.training && action.kind == ActionKind::Update)
        return where(rank, index, action) + ": update actions need a training program";
      if (action.kind != ActionKind::Update && action.level != 0)
        return where(rank, index, action) + ": has level " + std::to_string(action.level) +
               " (only update actions have levels)";
      if (isCompute(action.kind)) {
        if (spec.rankOf(action.stage) != rank)
          return where(rank, index, action) + ": the stage runs on pp rank " +
                 std::to_string(spec.rankOf(action.stage));
        if (action.kind == ActionKind::BackwardWeight && !spec.hasWeight(action.stage))
          return where(rank, index, action) + ": stage " + std::to_string(action.stage) +
                 " has no backward_weight program (its backward_input does all)";
        if (action.kind == ActionKind::Update) {
          if (action.microbatch != 0)
            return where(rank, index, action) + ": an update runs once per step (micro-batch 0)";
          if (action.level < 0 || action.level >= spec.levels(action.stage))
            return where(rank, index, action) + ": stage " + std::to_string(action.stage) +
                   " has " + std::to_string(spec.levels(action.stage)) + " update levels";
        }
        if (++runs[keyOf(action)] > 1)
          return where(rank, index, action) + ": runs twice";
        continue;
      }
      if (action.transfer < 0 || action.transfer >= int64_t(spec.transfers.size()))
        return where(rank, index, action) + ": no such transfer";
      const Transfer &transfer = spec.transfers[action.transfer];
      bool sends = action.kind == ActionKind::Send;
      if ((sends ? transfer.to : transfer.from) != action.stage ||
          spec.rankOf(sends ? transfer.from : transfer.to) != rank)
        return where(rank, index, action) + ": the transfer goes from stage " +
               std::to_string(transfer.from) + " to stage " + std::to_string(transfer.to);
      if (transfer.fromPart == ActionKind::Update && action.microbatch != 0)
        return where(rank, index, action) +
               ": the transfer is an update's, made once per step (micro-batch 0)";
    }
  // Every program runs: F (and B, W if the stage has one) per micro-batch,
  // each update level once.
  auto missing = [&](const Action &action) -> std::optional<std::string> {
    if (!runs.count(keyOf(action)))
      return "no rank runs " + describe(action);
    return std::nullopt;
  };
  for (int64_t stage = 0; stage < stages; ++stage) {
    for (int64_t microbatch = 0; microbatch < spec.microbatches; ++microbatch) {
      std::vector<ActionKind> parts = {ActionKind::Forward};
      if (spec.training)
        parts.push_back(ActionKind::BackwardInput);
      if (spec.training && spec.hasWeight(stage))
        parts.push_back(ActionKind::BackwardWeight);
      for (ActionKind part : parts)
        if (std::optional<std::string> error = missing(compute(part, stage, microbatch)))
          return error;
    }
    for (int64_t level = 0; spec.training && level < spec.levels(stage); ++level)
      if (std::optional<std::string> error = missing(compute(ActionKind::Update, stage, 0, level)))
        return error;
  }
  // Run them: a program needs its inputs received (or made earlier on this
  // rank), B its F, W its B, an update every F, B, W of its stage; a send
  // needs the program that made it, a receive the next message of its pair.
  Channels channels;
  std::vector<size_t> next(spec.ranks, 0);
  std::vector<std::set<Message>> received(spec.ranks);
  std::set<Key> ran;
  auto before = [&](const Action &action) -> std::optional<Action> {
    // The first program that must run before `action` (same stage) and did not.
    std::vector<Action> needed;
    if (action.kind == ActionKind::BackwardInput)
      needed.push_back(compute(ActionKind::Forward, action.stage, action.microbatch));
    if (action.kind == ActionKind::BackwardWeight)
      needed.push_back(compute(ActionKind::BackwardInput, action.stage, action.microbatch));
    if (action.kind == ActionKind::Update)
      for (int64_t microbatch = 0; microbatch < spec.microbatches; ++microbatch) {
        needed.push_back(compute(ActionKind::Forward, action.stage, microbatch));
        needed.push_back(compute(ActionKind::BackwardInput, action.stage, microbatch));
        if (spec.hasWeight(action.stage))
          needed.push_back(compute(ActionKind::BackwardWeight, action.stage, microbatch));
      }
    for (const Action &need : needed)
      if (!ran.count(keyOf(need)))
        return need;
    return std::nullopt;
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t rank = 0; rank < spec.ranks; ++rank) {
      while (next[rank] < schedule[rank].size()) {
        const Action &action = schedule[rank][next[rank]];
        if (isCompute(action.kind)) {
          if (std::optional<Action> need = before(action))
            return where(rank, next[rank], action) + ": runs before " + describe(*need);
          for (size_t id = 0; id < spec.transfers.size(); ++id) {
            const Transfer &transfer = spec.transfers[id];
            if (!reads(transfer, action) || received[rank].count({int64_t(id), action.microbatch}))
              continue;
            Action producer = producerOf(transfer, action.microbatch);
            if (spec.rankOf(transfer.from) != rank)
              return where(rank, next[rank], action) + ": transfer " + std::to_string(id) +
                     " of its micro-batch was not received before it";
            if (!ran.count(keyOf(producer)))
              return where(rank, next[rank], action) + ": transfer " + std::to_string(id) +
                     " of its micro-batch is made by " + describe(producer) +
                     " on this pp rank, which has not run before it";
          }
          ran.insert(keyOf(action));
        } else if (action.kind == ActionKind::Send) {
          const Transfer &transfer = spec.transfers[action.transfer];
          if (!ran.count(keyOf(producerOf(transfer, action.microbatch))))
            return where(rank, next[rank], action) + ": sends before the " +
                   actionKindName(transfer.fromPart) + " that makes it";
          channels[{rank, spec.rankOf(transfer.to)}].push_back(
              {action.transfer, action.microbatch});
        } else {
          int64_t sender = spec.rankOf(spec.transfers[action.transfer].from);
          std::deque<Message> &pending = channels[{sender, rank}];
          if (pending.empty())
            break; // waits; another rank may send it
          Message message = pending.front();
          if (message != Message{action.transfer, action.microbatch})
            return where(rank, next[rank], action) + ": the next message from pp rank " +
                   std::to_string(sender) + " is transfer " + std::to_string(message.first) +
                   " microbatch " + std::to_string(message.second);
          pending.pop_front();
          received[rank].insert(message);
        }
        ++next[rank];
        progress = true;
      }
    }
  }
  for (int64_t rank = 0; rank < spec.ranks; ++rank)
    if (next[rank] < schedule[rank].size())
      return where(rank, next[rank], schedule[rank][next[rank]]) +
             ": waits forever (deadlock: no peer sends it)";
  for (const auto &[pair, pending] : channels)
    if (!pending.empty())
      return "pp rank " + std::to_string(pair.second) + " never receives transfer " +
             std::to_string(pending.front().first) + " microbatch " +
             std::to_string(pending.front().second) + " that pp rank " +
             std::to_string(pair.first) + " sends";
  return std::nullopt;
}

std::optional<Simulation> simulateSchedule(const ScheduleSpec &spec, const Schedule &schedule,
                                           std::string *error) {
  auto fail = [&](std::string message) -> std::optional<Simulation> {
    if (error)
      *error = std::move(message);
    return std::nullopt;
  };
  if (std::optional<std::string> malformedSpec = malformed(spec))
    return fail("the pipeline is malformed: " + *malformedSpec);
  if (int64_t(schedule.size()) != spec.ranks)
    return fail("the schedule has " + std::to_string(schedule.size()) + " action lists for " +
                std::to_string(spec.ranks) + " pipeline ranks");
  Simulation simulation;
  simulation.start.resize(spec.ranks);
  simulation.end.resize(spec.ranks);
  simulation.busy.assign(spec.ranks, 0);
  simulation.peakInFlight.assign(spec.ranks, 0);
  for (int64_t rank = 0; rank < spec.ranks; ++rank) {
    simulation.start[rank].assign(schedule[rank].size(), 0);
    simulation.end[rank].assign(schedule[rank].size(), 0);
  }
  // Each rank's clock; a message carries the time it was sent.
  std::vector<double> clock(spec.ranks, 0);
  std::map<std::pair<int64_t, int64_t>, std::deque<std::pair<Message, double>>> channels;
  std::vector<size_t> next(spec.ranks, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t rank = 0; rank < spec.ranks; ++rank) {
      while (next[rank] < schedule[rank].size()) {
        size_t index = next[rank];
        const Action &action = schedule[rank][index];
        if (action.kind == ActionKind::Recv || action.kind == ActionKind::Send) {
          if (action.transfer < 0 || action.transfer >= int64_t(spec.transfers.size()))
            return fail("pp rank " + std::to_string(rank) + ", action " + std::to_string(index) +
                        " (" + describe(action) + "): no such transfer");
          const Transfer &transfer = spec.transfers[action.transfer];
          if (action.kind == ActionKind::Send) {
            channels[{rank, spec.rankOf(transfer.to)}].push_back(
                {{action.transfer, action.microbatch}, clock[rank]});
          } else {
            auto &pending = channels[{spec.rankOf(transfer.from), rank}];
            if (pending.empty())
              break; // waits; another rank may send it
            clock[rank] = std::max(clock[rank], pending.front().second);
            pending.pop_front();
          }
          simulation.start[rank][index] = simulation.end[rank][index] = clock[rank];
        } else {
          double cost = costOf(spec, action);
          simulation.start[rank][index] = clock[rank];
          clock[rank] += cost;
          simulation.end[rank][index] = clock[rank];
          simulation.busy[rank] += cost;
        }
        ++next[rank];
        progress = true;
      }
    }
  }
  for (int64_t rank = 0; rank < spec.ranks; ++rank)
    if (next[rank] < schedule[rank].size())
      return fail("pp rank " + std::to_string(rank) + ", action " + std::to_string(next[rank]) +
                  " (" + describe(schedule[rank][next[rank]]) +
                  "): waits forever (deadlock: no peer sends it)");
  for (int64_t rank = 0; rank < spec.ranks; ++rank) {
    simulation.makespan = std::max(simulation.makespan, clock[rank]);
    // The rank runs one action at a time: in flight changes at its ends.
    int64_t inFlight = 0;
    for (const Action &action : schedule[rank]) {
      if (action.kind == ActionKind::Forward && spec.training)
        ++inFlight;
      if (spec.training && endsInFlight(spec, action))
        --inFlight;
      simulation.peakInFlight[rank] = std::max(simulation.peakInFlight[rank], inFlight);
    }
  }
  return simulation;
}

void chainTransfers(ScheduleSpec &spec) {
  const int64_t count = spec.stages();
  spec.training = true;
  spec.updateLevels.assign(size_t(count), 1);
  spec.transfers.clear();
  for (int64_t stage = 0; stage < count; ++stage) {
    spec.transfers.push_back({stage, stage, ActionKind::Forward, ActionKind::BackwardInput});
    spec.transfers.push_back({stage, stage, ActionKind::BackwardInput, ActionKind::BackwardWeight});
    if (stage + 1 < count) {
      spec.transfers.push_back({stage, stage + 1, ActionKind::Forward, ActionKind::Forward});
      spec.transfers.push_back(
          {stage + 1, stage, ActionKind::BackwardInput, ActionKind::BackwardInput});
    }
  }
}

std::vector<int64_t> chainInFlight(ScheduleSpec::Kind kind, int64_t ranks, int64_t virtualStages,
                                   int64_t microbatches) {
  ScheduleSpec spec;
  spec.ranks = ranks;
  spec.virtualStages = virtualStages;
  spec.microbatches = microbatches;
  spec.kind = kind;
  chainTransfers(spec);
  std::optional<std::string> error;
  Schedule schedule = buildSchedule(spec, &error);
  if (error)
    return {};
  std::optional<Simulation> simulation = simulateSchedule(spec, schedule);
  if (!simulation)
    return {};
  std::vector<int64_t> inFlight;
  for (int64_t stage = 0; stage < spec.stages(); ++stage)
    inFlight.push_back(simulation->peakInFlight[size_t(spec.rankOf(stage))]);
  return inFlight;
}

} // namespace shardc::pipeline
