//===- ErrorText.h - one-line errors of the runtime's file formats -*- C++ -*-===//
//
// Reading an input file or a weight shard that is missing, truncated or
// hostile is an ordinary outcome for a runtime, not a bug: it must end in one
// line that says which file, which entry and what is wrong, never in an abort.
// So every function of runtime/io returns a StatusOr<T> or a Status
// (runtime/core/Status.h). No function of runtime/io throws; the few library
// calls that can (nlohmann-json, allocation) are caught at the public entry
// points (catchExceptions). Names read from files are quoted through
// printable().
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_IO_ERRORTEXT_H
#define SHARDC_RUNTIME_IO_ERRORTEXT_H

#include "runtime/core/PrintableText.h"
#include "runtime/core/Status.h"

#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

namespace shardc::rt::io {

/// `text` made safe to quote in a one-line message: control bytes become
/// \xNN and anything past 200 bytes is cut to "...". File names, entry names
/// and dtypes read from hostile files go through this before they are quoted.
inline std::string printable(std::string_view text) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i == 200)
      return out + "...";
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (isControlByte(text[i])) {
      out += "\\x";
      out += kDigits[c >> 4];
      out += kDigits[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

/// Runs `body` (which returns a StatusOr or Status) and turns any exception that
/// escapes it into an error prefixed with `context` (the file name), so the
/// public functions keep their no-throw promise even when an allocation for a
/// genuinely huge, valid file fails.
template <typename Body>
auto catchExceptions(const std::string &context, Body &&body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return Status::error(context + ": out of memory");
  } catch (const std::exception &e) {
    return Status::error(context + ": " + e.what());
  }
}

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_ERRORTEXT_H
