//===- Result.h - Value-or-error return type of the constant evaluator ----===//
//
// Folders call the evaluator on whatever constants an imported model holds, so
// "cannot fold this" is an ordinary outcome, not a bug. Every op therefore
// returns a Result: either the value, or an Error whose message says why (in
// the project's diagnostic style: lower-case, no trailing period, concrete
// values), so a folder can log it or forward it to a remark as-is. Nothing in
// the evaluator throws or asserts on bad input.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECTS_GRAPH_CONSTEVAL_RESULT_H
#define SHARDC_DIALECTS_GRAPH_CONSTEVAL_RESULT_H

#include <optional>
#include <string>
#include <utility>

namespace shardc::constfold {

/// Why an evaluation could not be done.
struct Error {
  std::string message;
};

/// Shorthand for `return fail("...")` in op implementations.
inline Error fail(std::string message) { return Error{std::move(message)}; }

/// Either a value or an Error. Used like std::optional (`if (auto r = ...)`,
/// `*r`, `r->`); `error()` holds the reason when it is empty. Dereferencing an
/// empty Result is the caller's bug, exactly as for std::optional.
template <typename T>
class [[nodiscard]] Result {
public:
  // Both overloads so that `return localTensor;` moves instead of copying.
  Result(const T &value) : value_(value) {}
  Result(T &&value) : value_(std::move(value)) {}
  Result(Error error) : error_(std::move(error.message)) {}

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }

  T &operator*() & { return *value_; }
  const T &operator*() const & { return *value_; }
  T &&operator*() && { return std::move(*value_); }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }

  /// Empty when ok().
  const std::string &error() const { return error_; }

  /// For callers that only care whether folding worked.
  std::optional<T> toOptional() && { return std::move(value_); }

private:
  std::optional<T> value_;
  std::string error_;
};

} // namespace shardc::constfold

#endif // SHARDC_DIALECTS_GRAPH_CONSTEVAL_RESULT_H
