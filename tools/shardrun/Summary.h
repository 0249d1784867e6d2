//===- Summary.h - what the output rank reports at the end ------*- C++ -*-===//
#ifndef SHARDC_TOOLS_SHARDRUN_SUMMARY_H
#define SHARDC_TOOLS_SHARDRUN_SUMMARY_H

#include "runtime/session/Session.h"
#include "tools/shardrun/Cli.h"

#include <string>

namespace shardc::shardrun {

/// The output rank's part at the end: the outputs and the summary. An error message,
/// or empty.
std::string finish(const Options &options, const rt::Session &session, rt::RankRun &run,
                   const std::string &how);

} // namespace shardc::shardrun

#endif
