//===- PrintableText.h - names made safe for a one-line message -*- C++ -*-===//
//
// Model files name nodes, inputs and outputs freely: a name may hold a
// newline, a terminal escape sequence or a megabyte of text. Every error
// line of shardc and shardrun passes through printableMessage, so what
// reaches the terminal is one line of plain characters of bounded length.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_PRINTABLETEXT_H
#define SHARDC_RUNTIME_CORE_PRINTABLETEXT_H

#include <cstddef>
#include <string>
#include <string_view>

namespace shardc::rt {

/// Whether `c` is a control byte (below 0x20, or DEL), which a message
/// escapes and a name or path may not hold.
inline bool isControlByte(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte < 0x20 || byte == 0x7f;
}

/// The longest name a message shows; a longer one is cut and ends in "…".
constexpr size_t kMaxShownName = 200;

/// `name` with control bytes escaped (\n, \t, \r, \xNN) and cut to
/// kMaxShownName bytes (at a UTF-8 character boundary) plus "…".
std::string printableName(std::string_view name);

/// A whole message: control bytes escaped, and every quoted span ('NAME',
/// opened after a space or bracket, closed before one or the end) longer
/// than kMaxShownName cut as printableName cuts it.
std::string printableMessage(std::string_view message);

} // namespace shardc::rt

#endif
