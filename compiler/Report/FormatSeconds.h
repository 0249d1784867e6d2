//===- FormatSeconds.h - times in the report's summary ----------*- C++ -*-===//
#ifndef SHARDC_COMPILER_REPORT_FORMATSECONDS_H
#define SHARDC_COMPILER_REPORT_FORMATSECONDS_H

#include "llvm/Support/FormatVariadic.h"

#include <string>

namespace shardc::report {

/// A time of microseconds to seconds, in the unit that shows its digits.
inline std::string formatSeconds(double seconds) {
  if (seconds < 1e-3)
    return llvm::formatv("{0:F1} us", seconds * 1e6).str();
  if (seconds < 1)
    return llvm::formatv("{0:F3} ms", seconds * 1e3).str();
  return llvm::formatv("{0:F3} s", seconds).str();
}

} // namespace shardc::report

#endif
