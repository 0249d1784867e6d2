//===- SafeTensorsHeader.h - The JSON header of a safetensors file --------===//
//
// Parsing and printing of the header alone, apart from files and mappings:
// the reader validates it against the size of the data buffer that follows,
// the writer lays tensors out and prints it. Errors name no file.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_IO_SAFETENSORSHEADER_H
#define SHARDC_RUNTIME_IO_SAFETENSORSHEADER_H

#include "runtime/core/Tensor.h"
#include "runtime/io/ErrorText.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace shardc::rt::io {

/// One tensor's entry: its bytes are data buffer [begin, end).
struct SafeTensorsRecord {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin;
  uint64_t end;
};

struct SafeTensorsHeader {
  std::map<std::string, std::string> metadata;
  std::vector<SafeTensorsRecord> tensors;
};

/// Parses and validates the JSON text against a data buffer of `bufferSize`
/// bytes (see SafeTensors.h for the rules). Records come back sorted by
/// (begin, end, name).
StatusOr<SafeTensorsHeader> parseSafeTensorsHeader(std::string_view json, uint64_t bufferSize);

/// The JSON text of a header, "__metadata__" first (when not empty), then the
/// tensors in the given order. Fails on names or strings that are not UTF-8.
StatusOr<std::string> formatSafeTensorsHeader(const SafeTensorsHeader &header);

/// Whether `text` is well-formed UTF-8 (JSON cannot carry anything else).
bool isValidUtf8(std::string_view text);

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_SAFETENSORSHEADER_H
