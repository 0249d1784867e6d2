//===- Summary.h - what the output rank reports at the end ------*- C++ -*-===//
#ifndef SHARDC_TOOLS_SHARDRUN_SUMMARY_H
#define SHARDC_TOOLS_SHARDRUN_SUMMARY_H

#include "runtime/session/Session.h"
#include "tools/shardrun/Cli.h"
#include "tools/shardrun/RankBalance.h"

#include <string>

namespace shardc::shardrun {

/// The output rank's part at the end: the outputs and the summary; with
/// --profile the step table, then `rankTimes` (every rank's, when known)
/// as one line per rank. An error message, or empty.
std::string finish(const Options &options, const rt::Session &session, rt::RankRun &run,
                   const std::string &how, const std::vector<RankTimes> *rankTimes = nullptr);

} // namespace shardc::shardrun

#endif
