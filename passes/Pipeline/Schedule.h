//===- Schedule.h - each pipeline rank's ordered actions ---------*- C++ -*-===//
//
// Plain C++ behind shardc-pipeline-schedule. A schedule is one action list
// per pp rank; every rank with that pp coordinate runs it. Forward actions
// come in the schedule's order (GPipe: the micro-batches in order through
// the rank's stage; interleaved: groups of P micro-batches through each of
// the rank's stages in turn, as Megatron-LM orders the forward passes);
// each forward is followed by the sends of what it made. Receives are
// placed before the forward that needs them, taking every message of the
// same peer in the order the peer sent them: point-to-point is matched in
// order per pair of ranks, so receiving in the sender's order is what keeps
// the pairs in step.
//
// checkSchedule runs the lists against each other (sends buffered, each
// receive takes the next message of its pair) and says which rank waits
// forever or receives a message it did not expect.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_PIPELINE_SCHEDULE_H
#define SHARDC_PASSES_PIPELINE_SCHEDULE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardc::pipeline {

enum class ActionKind { Forward, BackwardInput, BackwardWeight, Send, Recv };

/// Forward: `stage` on `microbatch`. Send / Recv: `transfer` of
/// `microbatch`, to / from `stage` (the peer stage).
struct Action {
  ActionKind kind;
  int64_t stage;
  int64_t microbatch;
  int64_t transfer = -1;
  bool operator==(const Action &other) const {
    return kind == other.kind && stage == other.stage && microbatch == other.microbatch &&
           transfer == other.transfer;
  }
};

struct Transfer {
  int64_t from, to;
};

struct ScheduleSpec {
  int64_t ranks = 2;         ///< P
  int64_t virtualStages = 1; ///< V
  int64_t microbatches = 1;  ///< M
  bool interleaved = false;
  std::vector<Transfer> transfers; ///< by id
  int64_t rankOf(int64_t stage) const { return stage % ranks; }
};

using Schedule = std::vector<std::vector<Action>>;

Schedule buildSchedule(const ScheduleSpec &spec);

/// An error naming the rank and action that cannot go on, or nullopt when
/// every list runs to its end with every message received as expected.
std::optional<std::string> checkSchedule(const ScheduleSpec &spec, const Schedule &schedule);

/// "forward stage 1 microbatch 0", "recv transfer 3 microbatch 2 from stage 0".
std::string describe(const Action &action);

} // namespace shardc::pipeline

#endif
