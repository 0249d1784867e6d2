//===- Status.h - Success or an error message from a CPU kernel -*- C++ -*-===//
//
// Kernels are called by a table-driven executor with tensors it planned at
// compile time, so a mismatch is a bug upstream, not an exceptional event:
// every kernel checks its operands cheaply and returns a Status instead of
// crashing or throwing. The success path carries an empty std::string (no
// allocation), so returning a Status costs nothing on the hot path.
//
// Messages follow the project's diagnostic style: they start with the op
// name, are lower-case, have no trailing period and name the concrete values,
// e.g. "add: shapes [2, 3] and [4] do not broadcast".
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_STATUS_H
#define SHARDC_RUNTIME_CPU_STATUS_H

#include <string>
#include <utility>

namespace shardc::rt::cpu {

class [[nodiscard]] Status {
public:
  /// Success.
  Status() = default;
  static Status success() { return Status(); }
  static Status error(std::string message) {
    Status status;
    status.failed_ = true;
    status.message_ = std::move(message);
    return status;
  }

  bool ok() const { return !failed_; }
  /// Empty on success.
  const std::string &message() const { return message_; }

private:
  bool failed_ = false;
  std::string message_;
};

} // namespace shardc::rt::cpu

#endif // SHARDC_RUNTIME_CPU_STATUS_H
