//===- NpyHeader.cpp - The Python-literal dictionary of a .npy header -----===//

#include "runtime/io/NpyHeader.h"

#include <cstdint>

namespace shardc::rt::io {

namespace {

/// A cursor over the header text. Every accessor checks the end, so a
/// header cut anywhere yields "unexpected end" rather than a read past it.
class DictParser {
public:
  explicit DictParser(std::string_view text) : text_(text) {}

  StatusOr<NpyHeaderDict> parse() {
    NpyHeaderDict dict;
    bool seenDescr = false, seenOrder = false, seenShape = false;
    skipSpace();
    if (!consume('{'))
      return error("expected '{'");
    for (;;) {
      skipSpace();
      if (consume('}'))
        break;
      StatusOr<std::string> key = parseString();
      if (!key)
        return key.status();
      skipSpace();
      if (!consume(':'))
        return error("expected ':' after '" + printable(*key) + "'");
      skipSpace();

      bool *seen = *key == "descr"           ? &seenDescr
                   : *key == "fortran_order" ? &seenOrder
                   : *key == "shape"         ? &seenShape
                                             : nullptr;
      if (!seen)
        return Status::error("npy header has unexpected key '" + printable(*key) + "'");
      if (*seen)
        return Status::error("npy header has key '" + *key + "' twice");
      *seen = true;

      Status value = *key == "descr"           ? parseDescr(dict.descr)
                     : *key == "fortran_order" ? parseBool(dict.fortranOrder)
                                               : parseShape(dict.shape);
      if (!value)
        return value;

      skipSpace();
      if (consume(','))
        continue;
      if (consume('}'))
        break;
      return error("expected ',' or '}'");
    }
    skipSpace();
    if (pos_ != text_.size())
      return error("unexpected text after the dict");
    if (!seenDescr || !seenOrder || !seenShape)
      return Status::error(std::string("npy header lacks '") +
                           (!seenDescr   ? "descr"
                            : !seenOrder ? "fortran_order"
                                         : "shape") +
                           "'");
    return dict;
  }

private:
  Status error(const std::string &what) const {
    if (pos_ >= text_.size())
      return Status::error("malformed npy header: " + what + ", found the end");
    return Status::error("malformed npy header: " + what + " at offset " + std::to_string(pos_));
  }

  void skipSpace() {
    // numpy pads with spaces and ends with '\n'; old versions used '\x20'
    // padding before a '\n' too. Tabs and CRs are legal Python whitespace.
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool consumeWord(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word)
      return false;
    pos_ += word.size();
    return true;
  }

  StatusOr<std::string> parseString() {
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      return error("expected a quoted string");
    char quote = text_[pos_++];
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      // numpy's descrs and keys never need escapes; refusing them keeps the
      // parser small without rejecting any file numpy writes.
      if (text_[pos_] == '\\' || text_[pos_] == '\n')
        return error("unsupported character in string");
      ++pos_;
    }
    if (pos_ >= text_.size())
      return error("unterminated string");
    return std::string(text_.substr(start, pos_++ - start));
  }

  Status parseDescr(std::string &descr) {
    if (pos_ < text_.size() && text_[pos_] == '[')
      return Status::error("structured dtypes are not supported");
    StatusOr<std::string> text = parseString();
    if (!text)
      return text.status();
    descr = std::move(*text);
    return {};
  }

  Status parseBool(bool &value) {
    if (consumeWord("True"))
      value = true;
    else if (consumeWord("False"))
      value = false;
    else
      return error("expected True or False for 'fortran_order'");
    return {};
  }

  Status parseShape(Shape &shape) {
    if (!consume('('))
      return error("expected a tuple for 'shape'");
    for (;;) {
      skipSpace();
      if (consume(')'))
        return {};
      if (pos_ < text_.size() && text_[pos_] == '-')
        return Status::error("npy header has a negative dimension");
      if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9')
        return error("expected a dimension");
      uint64_t dim = 0;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        if (__builtin_mul_overflow(dim, uint64_t(10), &dim) ||
            __builtin_add_overflow(dim, uint64_t(text_[pos_] - '0'), &dim) ||
            dim > uint64_t(INT64_MAX))
          return Status::error("npy header has a dimension too large for int64");
        ++pos_;
      }
      consume('L'); // Python 2 wrote long ints as "3L"
      shape.push_back(static_cast<int64_t>(dim));
      skipSpace();
      if (consume(','))
        continue;
      // "(5)" is the int 5 in Python, not a tuple: numpy rejects it too.
      if (shape.size() == 1 && pos_ < text_.size() && text_[pos_] == ')')
        return error("expected ',' after the only dimension");
      if (consume(')'))
        return {};
      return error("expected ',' or ')' in 'shape'");
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

} // namespace

StatusOr<NpyHeaderDict> parseNpyHeaderDict(std::string_view text) {
  return DictParser(text).parse();
}

std::string formatNpyHeaderDict(const NpyHeaderDict &dict) {
  // Python's repr of a tuple: "()", "(5,)", "(2, 3)".
  std::string shape = "(";
  for (size_t i = 0; i < dict.shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(dict.shape[i]);
  if (dict.shape.size() == 1)
    shape += ",";
  shape += ")";
  return "{'descr': '" + dict.descr +
         "', 'fortran_order': " + (dict.fortranOrder ? "True" : "False") + ", 'shape': " + shape +
         ", }";
}

} // namespace shardc::rt::io
