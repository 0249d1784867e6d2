//===- Params.h - a kernel step's parameters --------------------*- C++ -*-===//
#ifndef SHARDC_RUNTIME_CORE_PARAMS_H
#define SHARDC_RUNTIME_CORE_PARAMS_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace shardc::rt {

/// One parameter as the program stores it: integers (also bools and enums),
/// floats or strings, one value or a list; the kernel knows which it expects.
struct Param {
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
};

/// A step's parameters by name, decoded once when the program is prepared.
class Params {
public:
  void set(std::string key, Param value) { params_[std::move(key)] = std::move(value); }
  bool has(const std::string &key) const { return params_.count(key) != 0; }

  /// The single integer `key`, or `fallback` when it is absent.
  int64_t integer(const std::string &key, int64_t fallback) const;
  bool flag(const std::string &key, bool fallback) const { return integer(key, fallback) != 0; }
  /// The single float `key`, or `fallback` when it is absent.
  double number(const std::string &key, double fallback) const;
  /// The integers of `key` (empty when absent).
  const std::vector<int64_t> &ints(const std::string &key) const;
  const std::vector<std::string> &strings(const std::string &key) const;

private:
  std::map<std::string, Param> params_;
};

} // namespace shardc::rt

#endif
