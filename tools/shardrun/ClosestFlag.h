//===- ClosestFlag.h - "did you mean" for a mistyped flag -------*- C++ -*-===//
#ifndef SHARDC_TOOLS_SHARDRUN_CLOSESTFLAG_H
#define SHARDC_TOOLS_SHARDRUN_CLOSESTFLAG_H

#include <string>
#include <vector>

namespace shardc::shardrun {

/// The flag of `known` closest to `flag` by edit distance ("--ouputs" ->
/// "--outputs"), or "" when none is close: one edit for a name of up to 3
/// characters, else two or a third of it. Ties go to the first in `known`.
std::string closestFlag(const std::string &flag, const std::vector<std::string> &known);

} // namespace shardc::shardrun

#endif
