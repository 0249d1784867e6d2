//===- Expected.h - Value-or-error returns of the runtime's file formats --===//
//
// Reading an input file or a weight shard that is missing, truncated or
// hostile is an ordinary outcome for a runtime, not a bug: it must end in one
// line that says which file, which entry and what is wrong, never in an abort.
// So every function of runtime/io returns an Expected<T> (or a Status, which
// is Expected<void>): either the value, or a one-line message in the project's
// diagnostic style (lower-case, no trailing period, concrete values, the file
// named first). No function of runtime/io throws; the few library calls that
// can (nlohmann-json, allocation) are caught at the public entry points.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_IO_EXPECTED_H
#define SHARDC_RUNTIME_IO_EXPECTED_H

#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace shardc::rt::io {

/// Why an operation failed: one line, without a trailing newline.
struct Error {
  std::string message;
};

/// Shorthand for `return fail("...")`.
inline Error fail(std::string message) { return Error{std::move(message)}; }

/// Either a value or an Error. Used like std::optional (`if (auto r = ...)`,
/// `*r`, `r->`); `error()` says why when it is empty. Dereferencing a failed
/// Expected is the caller's bug, as for std::optional.
template <typename T>
class [[nodiscard]] Expected {
public:
  // Both overloads so that `return localValue;` moves instead of copying.
  Expected(const T &value) : value_(value) {}
  Expected(T &&value) : value_(std::move(value)) {}
  Expected(Error error) : error_(std::move(error.message)) {}

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }

  T &operator*() & { return *value_; }
  const T &operator*() const & { return *value_; }
  T &&operator*() && { return std::move(*value_); }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }

  /// Empty when ok().
  const std::string &error() const { return error_; }
  /// The error as an Error, to pass a failure up unchanged.
  Error takeError() const { return Error{error_}; }

private:
  std::optional<T> value_;
  std::string error_;
};

/// Success or an Error, for operations without a value. Default-constructed
/// (`return {};`) means success.
template <>
class [[nodiscard]] Expected<void> {
public:
  Expected() = default;
  Expected(Error error) : failed_(true), error_(std::move(error.message)) {}

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const std::string &error() const { return error_; }
  Error takeError() const { return Error{error_}; }

private:
  bool failed_ = false;
  std::string error_;
};

using Status = Expected<void>;

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
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kDigits[c >> 4];
      out += kDigits[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

/// Runs `body` (which returns an Expected) and turns any exception that
/// escapes it into an Error prefixed with `context` (the file name), so the
/// public functions keep their no-throw promise even when an allocation for a
/// genuinely huge, valid file fails.
template <typename Body>
auto catchExceptions(const std::string &context, Body &&body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(context + ": out of memory");
  } catch (const std::exception &e) {
    return fail(context + ": " + e.what());
  }
}

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_EXPECTED_H
