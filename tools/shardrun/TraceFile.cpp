//===- TraceFile.cpp - where shardrun --trace writes its timeline ---------===//
#include "tools/shardrun/TraceFile.h"

#include "runtime/io/AtomicFile.h"

namespace shardc::shardrun {

std::string traceFileOfRank(const std::string &path, int rank) {
  const size_t slash = path.rfind('/');
  const size_t dot = path.rfind('.');
  const std::string suffix = ".rank" + std::to_string(rank);
  // No extension in the file's own name: append.
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash) ||
      dot == (slash == std::string::npos ? 0 : slash + 1))
    return path + suffix;
  return path.substr(0, dot) + suffix + path.substr(dot);
}

std::string writeTrace(const std::string &path, const std::vector<rt::RankEvents> &ranks) {
  auto file = rt::io::AtomicFile::create(path);
  if (!file)
    return file.status().message();
  if (rt::Status status = file->write(rt::traceJson(ranks)); !status)
    return status.message();
  if (rt::Status status = file->commit(); !status)
    return status.message();
  return "";
}

} // namespace shardc::shardrun
