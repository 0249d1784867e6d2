//===- Status.h - success or a one-line error -------------------*- C++ -*-===//
//
// The one error vocabulary of the project's plain C++ (the runtime, its file
// formats, the constant evaluator): a missing, truncated or hostile file, a
// constant that cannot be folded or a kernel handed a mismatch is an ordinary
// outcome, reported as one line in the project's diagnostic style
// (lower-case, no trailing period, concrete values, the file named first),
// never as an exception or an abort. Header-only and MLIR-free, so the
// compiler's libraries use it as the runtime does.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_STATUS_H
#define SHARDC_RUNTIME_CORE_STATUS_H

#include <optional>
#include <string>
#include <utility>

namespace shardc::rt {

/// Success, or the one line that says what went wrong (no trailing period).
class [[nodiscard]] Status {
public:
  Status() = default;
  static Status success() { return Status(); }
  static Status error(std::string message) {
    Status status;
    status.message_ = std::move(message);
    return status;
  }
  bool ok() const { return !message_; }
  explicit operator bool() const { return ok(); }
  const std::string &message() const {
    static const std::string none;
    return message_ ? *message_ : none;
  }

private:
  std::optional<std::string> message_;
};

/// A value or the Status that says why there is none. Used like
/// std::optional (`if (auto r = ...)`, `*r`, `r->`); dereferencing one that
/// failed is the caller's bug, as for std::optional.
template <typename T> class [[nodiscard]] StatusOr {
public:
  StatusOr(T value) : value_(std::move(value)) {}
  StatusOr(Status status) : status_(std::move(status)) {}
  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status &status() const { return status_; }
  /// The error line; empty when ok().
  const std::string &message() const { return status_.message(); }
  T &operator*() & { return *value_; }
  const T &operator*() const & { return *value_; }
  T &&operator*() && { return std::move(*value_); }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }

private:
  std::optional<T> value_;
  Status status_;
};

} // namespace shardc::rt

#endif
