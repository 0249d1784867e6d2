//===- NpyDtype.cpp - numpy type descriptors of the runtime's dtypes ------===//

#include "runtime/io/NpyDtype.h"

#include <string>

namespace shardc::rt::io {

namespace {
/// The descr without its byte-order character, e.g. "f4".
struct Code {
  DType dtype;
  const char *kindAndSize;
};
constexpr Code kCodes[] = {{DType::F32, "f4"}, {DType::F16, "f2"}, {DType::BF16, "V2"},
                           {DType::F64, "f8"}, {DType::I64, "i8"}, {DType::I32, "i4"},
                           {DType::I16, "i2"}, {DType::I8, "i1"},  {DType::U8, "u1"},
                           {DType::Bool, "b1"}};
} // namespace

StatusOr<DType> dtypeFromNpyDescr(std::string_view descr) {
  auto unsupported = [&](const char *why) {
    return Status::error("unsupported dtype '" + printable(descr) + "'" + why);
  };
  if (descr.size() < 2)
    return unsupported("");
  char order = descr[0];
  std::string_view code = descr.substr(1);
  for (const Code &known : kCodes) {
    if (code != known.kindAndSize)
      continue;
    // '<' little, '=' native (little here), '|' not applicable: numpy writes
    // '|' for one-byte types and for void ("|V2"), '<' for the rest.
    // For one-byte types the order character means nothing, so any is fine.
    bool oneByte = dtypeSize(known.dtype) == 1;
    bool isVoid = known.dtype == DType::BF16;
    if (order == '<' || order == '=' || (order == '|' && (oneByte || isVoid)) ||
        (order == '>' && oneByte))
      return known.dtype;
    return unsupported(order == '>' ? " (big-endian)" : "");
  }
  return unsupported("");
}

const char *npyDescr(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "<f4";
  case DType::F16:
    return "<f2";
  case DType::BF16:
    return "<V2";
  case DType::F64:
    return "<f8";
  case DType::I64:
    return "<i8";
  case DType::I32:
    return "<i4";
  case DType::I16:
    return "<i2";
  case DType::I8:
    return "|i1";
  case DType::U8:
    return "|u1";
  case DType::Bool:
    return "|b1";
  }
  return "|V0";
}

} // namespace shardc::rt::io
