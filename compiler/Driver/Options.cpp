//===- Options.cpp - parsing the driver's model-shape flags ---------------===//
#include "compiler/Driver/Options.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace shardc::driver {
namespace {

Error flagError(StringRef flag, StringRef value, const Twine &expected) {
  return createStringError(inconvertibleErrorCode(),
                           "--" + flag + " '" + value + "': expected " + expected);
}

/// Splits NAME=VALUE; both sides non-empty.
std::optional<std::pair<StringRef, StringRef>> splitAssignment(StringRef text) {
  auto [name, value] = text.split('=');
  if (name.empty() || value.empty() || !text.contains('='))
    return std::nullopt;
  return std::make_pair(name, value);
}

/// A size: a non-negative integer that fits comfortably in int64.
std::optional<int64_t> parseSize(StringRef text) {
  int64_t value;
  if (text.getAsInteger(10, value) || value < 0 || value > (int64_t(1) << 40))
    return std::nullopt;
  return value;
}

} // namespace

Expected<import::ImportOptions> parseImportOptions(ArrayRef<std::string> dims,
                                                   ArrayRef<std::string> inputShapes,
                                                   ArrayRef<std::string> constantInputs) {
  import::ImportOptions options;
  for (const std::string &text : dims) {
    auto assignment = splitAssignment(text);
    std::optional<int64_t> size = assignment ? parseSize(assignment->second) : std::nullopt;
    if (!size)
      return flagError("dim", text, "NAME=N with N a non-negative integer");
    if (!options.dims.emplace(assignment->first.str(), *size).second)
      return flagError("dim", text, "each dim bound once");
  }
  for (const std::string &text : inputShapes) {
    auto assignment = splitAssignment(text);
    if (!assignment)
      return flagError("input-shape", text, "INPUT=D0xD1... (e.g. input_ids=2x16)");
    std::vector<int64_t> shape;
    // "scalar" spells a rank-0 input, which has no dims to list.
    if (assignment->second != "scalar") {
      SmallVector<StringRef> parts;
      assignment->second.split(parts, 'x');
      for (StringRef part : parts) {
        std::optional<int64_t> size = parseSize(part);
        if (!size)
          return flagError("input-shape", text,
                           "INPUT=D0xD1... with non-negative integer dims (e.g. input_ids=2x16)");
        shape.push_back(*size);
      }
    }
    if (!options.inputShapes.emplace(assignment->first.str(), shape).second)
      return flagError("input-shape", text, "each input given once");
  }
  for (const std::string &text : constantInputs) {
    auto assignment = splitAssignment(text);
    if (!assignment)
      return flagError("constant-input", text, "INPUT=V0,V1,... or INPUT=FILE.pb");
    if (!options.constantInputs.emplace(assignment->first.str(), assignment->second.str()).second)
      return flagError("constant-input", text, "each input given once");
  }
  return options;
}

} // namespace shardc::driver
