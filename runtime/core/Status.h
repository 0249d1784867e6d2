//===- Status.h - success or a one-line error, for the runtime --*- C++ -*-===//
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

/// A value or the Status that says why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
public:
  StatusOr(T value) : value_(std::move(value)) {}
  StatusOr(Status status) : status_(std::move(status)) {}
  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status &status() const { return status_; }
  T &operator*() { return *value_; }
  const T &operator*() const { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }

private:
  std::optional<T> value_;
  Status status_;
};

} // namespace shardc::rt

#endif
