//===- ManifestFields.h - a manifest's fields, read by their path -*- C++ -*-===//
//
// A manifest is hostile input: any field may be missing or of another type.
// These readers take a value and its path in the manifest
// ("pipeline.transfers[2].to", "ranks[1].stages[0].program") and throw a
// FieldError naming the path and what is wrong, so that each check is one
// line rather than a return chain; a parser catches it once and returns
// the one-line error "manifest.json: ranks[1].stages[0].program: is missing"
// (never nlohmann's "key 'program' not found").
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_MANIFESTFIELDS_H
#define SHARDC_RUNTIME_CORE_MANIFESTFIELDS_H

#include "runtime/core/Status.h"
#include "runtime/core/Tensor.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <limits>
#include <string>

namespace shardc::rt {

/// A field that is wrong: where and why.
struct FieldError {
  std::string field, message;

  /// "manifest.json: FIELD: MESSAGE".
  Status status(const std::string &manifestPath) const;
};

[[noreturn]] void wrong(const std::string &field, const std::string &message);

/// object[key], where `object` is at `field` ("" for the manifest itself).
const nlohmann::json &member(const nlohmann::json &object, const std::string &key,
                             const std::string &field);
/// `value`, which must be an object / an array.
const nlohmann::json &object(const nlohmann::json &value, const std::string &field);
const nlohmann::json &array(const nlohmann::json &value, const std::string &field);
/// An integer in [minimum, maximum] (a float or a string is wrong: nlohmann
/// would convert 3e111 unchecked).
int64_t integer(const nlohmann::json &value, const std::string &field,
                int64_t minimum = std::numeric_limits<int64_t>::min(),
                int64_t maximum = std::numeric_limits<int64_t>::max());
std::string text(const nlohmann::json &value, const std::string &field);
/// A dtype by its manifest name ("float32").
DType dtypeOf(const nlohmann::json &value, const std::string &field);
/// Dims >= 0 whose byte count in `dtype` fits int64 (the runtime allocates it).
Shape shapeOf(const nlohmann::json &value, DType dtype, const std::string &field);

} // namespace shardc::rt

#endif
