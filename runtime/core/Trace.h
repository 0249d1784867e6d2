//===- Trace.h - what each rank did when, for a timeline viewer -*- C++ -*-===//
//
// `shardrun --trace` writes the Chrome trace-event format (a JSON object
// with "traceEvents"), which chrome://tracing and Perfetto (ui.perfetto.dev)
// open: one complete ("X") event per action of a pipeline rank (forward,
// send, recv) or per run of any other rank (per step with --profile), one
// row per rank (tid = rank), so the idle gaps between a rank's events show
// where the schedule waits.
//
// Times are microseconds of the system clock, not a per-process clock, so
// that the files of the ranks of an MPI job line up when viewed together.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_TRACE_H
#define SHARDC_RUNTIME_CORE_TRACE_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace shardc::rt {

struct TraceEvent {
  std::string name;     ///< "forward", "send", "recv", "run" or a step's kernel
  std::string category; ///< "pipeline", "run" or "step"
  int64_t startUs = 0, durationUs = 0;
  /// What it worked on: stage, microbatch, transfer, iteration, step.
  std::vector<std::pair<std::string, int64_t>> args;
};

/// Now, in microseconds of the system clock.
int64_t traceClockUs();

/// One rank's events.
struct RankEvents {
  int rank = 0;
  const std::vector<TraceEvent> *events = nullptr;
};

/// {"traceEvents": [...]}: every event of every rank, with pid 0 and tid the
/// rank (a row per rank), plus a name for each row.
std::string traceJson(const std::vector<RankEvents> &ranks);

} // namespace shardc::rt

#endif
