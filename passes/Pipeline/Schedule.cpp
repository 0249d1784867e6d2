//===- Schedule.cpp - each pipeline rank's ordered actions ----------------===//
#include "passes/Pipeline/Schedule.h"

#include <deque>
#include <map>

namespace shardc::pipeline {
namespace {

/// The forwards of pp rank `rank`, in the schedule's order.
std::vector<Action> forwards(const ScheduleSpec &spec, int64_t rank) {
  std::vector<Action> order;
  if (!spec.interleaved) {
    for (int64_t microbatch = 0; microbatch < spec.microbatches; ++microbatch)
      order.push_back({ActionKind::Forward, rank, microbatch});
    return order;
  }
  for (int64_t first = 0; first < spec.microbatches; first += spec.ranks)
    for (int64_t chunk = 0; chunk < spec.virtualStages; ++chunk)
      for (int64_t microbatch = first; microbatch < std::min(first + spec.ranks, spec.microbatches);
           ++microbatch)
        order.push_back({ActionKind::Forward, chunk * spec.ranks + rank, microbatch});
  return order;
}

using Message = std::pair<int64_t, int64_t>; // transfer, microbatch
using Channels = std::map<std::pair<int64_t, int64_t>, std::deque<Message>>;

} // namespace

Schedule buildSchedule(const ScheduleSpec &spec) {
  // Forwards, each followed by the sends of what it made.
  Schedule withSends(spec.ranks);
  Channels channels; // (sender, receiver) -> messages in the order sent
  for (int64_t rank = 0; rank < spec.ranks; ++rank)
    for (const Action &forward : forwards(spec, rank)) {
      withSends[rank].push_back(forward);
      for (size_t id = 0; id < spec.transfers.size(); ++id) {
        const Transfer &transfer = spec.transfers[id];
        if (transfer.from != forward.stage)
          continue;
        withSends[rank].push_back({ActionKind::Send, transfer.to, forward.microbatch, int64_t(id)});
        channels[{rank, spec.rankOf(transfer.to)}].push_back({int64_t(id), forward.microbatch});
      }
    }
  // Before each forward, the receives it needs, each pair's messages taken
  // in the order they were sent.
  Schedule schedule(spec.ranks);
  for (int64_t rank = 0; rank < spec.ranks; ++rank)
    for (const Action &action : withSends[rank]) {
      if (action.kind == ActionKind::Forward)
        for (size_t id = 0; id < spec.transfers.size(); ++id) {
          const Transfer &transfer = spec.transfers[id];
          if (transfer.to != action.stage)
            continue;
          std::deque<Message> &pending = channels[{spec.rankOf(transfer.from), rank}];
          Message wanted = {int64_t(id), action.microbatch};
          // Taken already by an earlier forward's receives?
          bool taken = false;
          for (const Action &done : schedule[rank])
            if (done.kind == ActionKind::Recv && done.transfer == wanted.first &&
                done.microbatch == wanted.second)
              taken = true;
          while (!taken && !pending.empty()) {
            Message next = pending.front();
            pending.pop_front();
            schedule[rank].push_back(
                {ActionKind::Recv, spec.transfers[next.first].from, next.second, next.first});
            taken = next == wanted;
          }
        }
      schedule[rank].push_back(action);
    }
  return schedule;
}

std::string describe(const Action &action) {
  std::string microbatch = " microbatch " + std::to_string(action.microbatch);
  std::string transfer = "transfer " + std::to_string(action.transfer) + microbatch;
  switch (action.kind) {
  case ActionKind::Forward:
    return "forward stage " + std::to_string(action.stage) + microbatch;
  case ActionKind::BackwardInput:
    return "backward_input stage " + std::to_string(action.stage) + microbatch;
  case ActionKind::BackwardWeight:
    return "backward_weight stage " + std::to_string(action.stage) + microbatch;
  case ActionKind::Send:
    return "send " + transfer + " to stage " + std::to_string(action.stage);
  case ActionKind::Recv:
    return "recv " + transfer + " from stage " + std::to_string(action.stage);
  }
  return "";
}

std::optional<std::string> checkSchedule(const ScheduleSpec &spec, const Schedule &schedule) {
  if (int64_t(schedule.size()) != spec.ranks)
    return "the schedule has " + std::to_string(schedule.size()) + " action lists for " +
           std::to_string(spec.ranks) + " pipeline ranks";
  int64_t stages = spec.ranks * spec.virtualStages;
  auto where = [](int64_t rank, size_t index, const Action &action) {
    return "pp rank " + std::to_string(rank) + ", action " + std::to_string(index) + " (" +
           describe(action) + ")";
  };
  // Each action on its own: a stage of this rank, a micro-batch, a transfer
  // that connects this rank's stage to the named one.
  std::map<std::pair<int64_t, int64_t>, int> forwardsDone; // (stage, microbatch) -> count
  for (int64_t rank = 0; rank < spec.ranks; ++rank)
    for (size_t index = 0; index < schedule[rank].size(); ++index) {
      const Action &action = schedule[rank][index];
      if (action.microbatch < 0 || action.microbatch >= spec.microbatches || action.stage < 0 ||
          action.stage >= stages)
        return where(rank, index, action) + ": no such stage or micro-batch";
      if (action.kind == ActionKind::BackwardInput || action.kind == ActionKind::BackwardWeight)
        return where(rank, index, action) + ": backward actions need a training program";
      if (action.kind == ActionKind::Forward) {
        if (spec.rankOf(action.stage) != rank)
          return where(rank, index, action) + ": the stage runs on pp rank " +
                 std::to_string(spec.rankOf(action.stage));
        if (++forwardsDone[{action.stage, action.microbatch}] > 1)
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
    }
  for (int64_t stage = 0; stage < stages; ++stage)
    for (int64_t microbatch = 0; microbatch < spec.microbatches; ++microbatch)
      if (!forwardsDone.count({stage, microbatch}))
        return "no rank runs forward stage " + std::to_string(stage) + " microbatch " +
               std::to_string(microbatch);
  // Run them: a forward needs its inputs received (or made here), a send
  // needs the forward that made it, a receive the next message of its pair.
  Channels channels;
  std::vector<size_t> next(spec.ranks, 0);
  std::vector<std::map<std::pair<int64_t, int64_t>, bool>> received(spec.ranks);
  std::map<std::pair<int64_t, int64_t>, bool> forwarded;
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t rank = 0; rank < spec.ranks; ++rank) {
      while (next[rank] < schedule[rank].size()) {
        const Action &action = schedule[rank][next[rank]];
        if (action.kind == ActionKind::Forward) {
          for (size_t id = 0; id < spec.transfers.size(); ++id)
            if (spec.transfers[id].to == action.stage &&
                !received[rank][{int64_t(id), action.microbatch}])
              return where(rank, next[rank], action) + ": transfer " + std::to_string(id) +
                     " of its micro-batch was not received before it";
          forwarded[{action.stage, action.microbatch}] = true;
        } else if (action.kind == ActionKind::Send) {
          const Transfer &transfer = spec.transfers[action.transfer];
          if (!forwarded[{transfer.from, action.microbatch}])
            return where(rank, next[rank], action) + ": sends before the forward that makes it";
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
          received[rank][message] = true;
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

} // namespace shardc::pipeline
