//===- PrintableText.cpp - names made safe for a one-line message ---------===//
#include "runtime/core/PrintableText.h"

#include <cstdio>

namespace shardc::rt {
namespace {

void appendEscaped(std::string &out, std::string_view text) {
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\r')
      out += "\\r";
    else if (isControlByte(c)) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", byte);
      out += hex;
    } else
      out += c;
  }
}

/// The first `limit` bytes of `text`, not splitting a UTF-8 character.
std::string_view cut(std::string_view text, size_t limit) {
  if (text.size() <= limit)
    return text;
  size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80)
    --end; // text[end] continues a character: start it after the cut
  return text.substr(0, end);
}

void appendName(std::string &out, std::string_view name) {
  appendEscaped(out, cut(name, kMaxShownName));
  if (name.size() > kMaxShownName)
    out += "…";
}

bool opensQuote(std::string_view text, size_t at) {
  return text[at] == '\'' && (at == 0 || std::string_view(" ([{,=:").find(text[at - 1]) !=
                                             std::string_view::npos);
}

bool closesQuote(std::string_view text, size_t at) {
  return text[at] == '\'' && (at + 1 == text.size() || std::string_view(" )]},;:.'").find(
                                                           text[at + 1]) != std::string_view::npos);
}

} // namespace

std::string printableName(std::string_view name) {
  std::string out;
  appendName(out, name);
  return out;
}

std::string printableMessage(std::string_view message) {
  std::string out;
  size_t plain = 0; // start of the text not yet copied
  for (size_t at = 0; at < message.size(); ++at) {
    if (!opensQuote(message, at))
      continue;
    size_t close = at + 1;
    while (close < message.size() && !closesQuote(message, close))
      ++close;
    appendEscaped(out, message.substr(plain, at + 1 - plain));
    appendName(out, message.substr(at + 1, close - at - 1));
    plain = at = close; // the closing quote (if any) is copied with the next text
  }
  appendEscaped(out, message.substr(std::min(plain, message.size())));
  return out;
}

} // namespace shardc::rt
