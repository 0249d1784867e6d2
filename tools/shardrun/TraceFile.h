//===- TraceFile.h - where shardrun --trace writes its timeline -*- C++ -*-===//
//
// Ranks that are threads of one process share one trace file (a row per
// rank). The ranks of an MPI or NCCL job are processes: each writes its own
// file, FILE with ".rank<r>" before its extension (trace.json ->
// trace.rank1.json), whose system-clock times line up with the others'.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TOOLS_SHARDRUN_TRACEFILE_H
#define SHARDC_TOOLS_SHARDRUN_TRACEFILE_H

#include "runtime/core/Trace.h"

#include <string>
#include <vector>

namespace shardc::shardrun {

/// `path` for rank `rank` of a job of processes: "trace.json" -> "trace.rank1.json".
std::string traceFileOfRank(const std::string &path, int rank);

/// Writes the ranks' events to `path` (atomically); an error message, or empty.
std::string writeTrace(const std::string &path, const std::vector<rt::RankEvents> &ranks);

} // namespace shardc::shardrun

#endif
