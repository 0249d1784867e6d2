//===- Params.cpp - a kernel step's parameters ----------------------------===//
#include "runtime/core/Params.h"

namespace shardc::rt {

int64_t Params::integer(const std::string &key, int64_t fallback) const {
  auto found = params_.find(key);
  return found == params_.end() || found->second.ints.empty() ? fallback
                                                              : found->second.ints.front();
}

double Params::number(const std::string &key, double fallback) const {
  auto found = params_.find(key);
  if (found == params_.end())
    return fallback;
  if (!found->second.floats.empty())
    return found->second.floats.front();
  return found->second.ints.empty() ? fallback : static_cast<double>(found->second.ints.front());
}

const std::vector<int64_t> &Params::ints(const std::string &key) const {
  static const std::vector<int64_t> none;
  auto found = params_.find(key);
  return found == params_.end() ? none : found->second.ints;
}

const std::vector<std::string> &Params::strings(const std::string &key) const {
  static const std::vector<std::string> none;
  auto found = params_.find(key);
  return found == params_.end() ? none : found->second.strings;
}

} // namespace shardc::rt
