//===- Options.cpp - parsing the driver's model-shape flags ---------------===//
#include "compiler/Driver/Options.h"

#include "runtime/core/MeshAxes.h"
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

Expected<sharding::MeshShape> parseMesh(StringRef mesh, MeshDegrees degrees) {
  sharding::MeshShape shape;
  if (!mesh.empty()) {
    if (degrees.pp || degrees.dp || degrees.ep || degrees.tp)
      return createStringError(inconvertibleErrorCode(),
                               "give the mesh with --mesh or with --pp/--dp/--ep/--tp, not both");
    SmallVector<StringRef> parts;
    mesh.split(parts, ',');
    std::vector<std::string> named; // with the axes of size 1 left out of `shape`
    for (StringRef part : parts) {
      auto assignment = splitAssignment(part.trim());
      std::optional<int64_t> size = assignment ? parseSize(assignment->second) : std::nullopt;
      if (!size || *size < 1)
        return flagError("mesh", mesh, "AXIS=N,... with N a positive integer (e.g. pp=2,dp=2,tp=4)");
      std::string problem = meshAxisNameProblem(assignment->first, named, /*pipeline=*/true);
      if (!problem.empty())
        return flagError("mesh", mesh, problem);
      named.push_back(assignment->first.str());
      if (*size > 1) {
        shape.names.push_back(assignment->first.str());
        shape.sizes.push_back(*size);
      }
    }
    return shape;
  }
  // The experts are split over some of the data-parallel ranks: the
  // replicas the ep groups leave over are the dp axis.
  int64_t replicas = degrees.dp;
  if (degrees.ep > 0 && degrees.dp > 0) {
    if (degrees.dp % degrees.ep != 0)
      return createStringError(inconvertibleErrorCode(),
                               "--ep " + std::to_string(degrees.ep) +
                                   " must divide --dp " + std::to_string(degrees.dp) +
                                   ": the expert ranks are data-parallel ranks");
    replicas = degrees.dp / degrees.ep;
  }
  // In the axes' order (MeshAxes.h): pp first, tp last, so a stage's ranks
  // and a tp group's are neighbours.
  for (auto [name, size] : {std::pair<StringRef, int64_t>{rt::kPipelineAxis, degrees.pp},
                            {rt::kDataAxis, replicas},
                            {rt::kExpertAxis, degrees.ep},
                            {rt::kTensorAxis, degrees.tp}}) {
    if (size < 0)
      return flagError(name, std::to_string(size), "a positive integer");
    if (size > 1) {
      shape.names.push_back(name.str());
      shape.sizes.push_back(size);
    }
  }
  return shape;
}

std::string meshAxisNameProblem(StringRef name, ArrayRef<std::string> named, bool pipeline) {
  // The passes give axes their meaning by name (runtime/core/MeshAxes.h).
  std::string allowed;
  for (const rt::MeshAxisKind &axis : rt::kMeshAxes)
    if (axis.supported && (pipeline || axis.role != rt::AxisRole::Pipeline))
      allowed += (allowed.empty() ? "" : " or ") + std::string(axis.name);
  auto refused = [&](StringRef why) {
    return "axes named " + allowed + "; '" + name.str() + "' " + why.str();
  };
  std::optional<rt::MeshAxisKind> axis = rt::meshAxisNamed(name);
  if (!axis)
    return refused("is unknown");
  if (!axis->supported)
    return refused("is the compiler's own (--microbatches)");
  if (!pipeline && axis->role == rt::AxisRole::Pipeline)
    return refused("cuts pipeline stages, which a module's mesh does not hold (give --pp to a "
                   "module without a dist.mesh)");
  if (llvm::is_contained(named, name))
    return "each axis named once";
  return "";
}

Expected<int64_t> parseDegree(StringRef flag, StringRef text, StringRef what) {
  int64_t value = 0;
  if (text.empty())
    return 0;
  if (text.getAsInteger(10, value) || value < 1)
    return flagError(flag, text, "a positive integer (" + what + ")");
  return value;
}

Expected<int64_t> parseByteSize(StringRef flag, StringRef text) {
  StringRef number = text;
  int64_t unit = 1;
  for (auto [suffix, scale] : {std::pair<StringRef, int64_t>{"TiB", 1LL << 40},
                               {"GiB", 1LL << 30},
                               {"MiB", 1LL << 20},
                               {"KiB", 1LL << 10},
                               {"TB", 1000LL * 1000 * 1000 * 1000},
                               {"GB", 1000LL * 1000 * 1000},
                               {"MB", 1000LL * 1000},
                               {"KB", 1000LL}})
    if (number.consume_back(suffix)) {
      unit = scale;
      break;
    }
  double value;
  if (number.trim().getAsDouble(value) || value <= 0 || value * double(unit) > 9e18)
    return flagError(flag, text, "a positive size such as 80GiB, 141GB or 512MiB");
  return int64_t(value * double(unit));
}

} // namespace shardc::driver
