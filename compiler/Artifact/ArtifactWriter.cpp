//===- ArtifactWriter.cpp - write the artifact shardrun loads -------------===//
#include "compiler/Artifact/ArtifactWriter.h"
#include "compiler/Artifact/ElementTypes.h"
#include "compiler/Artifact/ProgramSerializer.h"

#include "compiler/Import/WeightReader.h"
#include "dialects/Exec/ExecDialect.h"

#include "runtime/io/Checksum.h"
#include "runtime/io/SafeTensors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <deque>

using namespace mlir;

namespace shardc::artifact {
namespace {

/// The bytes of every weight and constant of a program, kept alive until
/// the weight file is written.
class WeightCollector {
public:
  LogicalResult add(Operation &op) {
    if (auto weight = dyn_cast<exec::WeightOp>(op)) {
      auto bytes = import::readWeightBytes(weight.getLoc(), weight.getName(), weight.getFile(),
                                           weight.getOffset(), weight.getSize());
      if (failed(bytes))
        return failure();
      StringRef data = (*bytes)->getBuffer();
      return addBytes(weight.getName(), weight.getBuffer(), {data.begin(), data.end()});
    }
    if (auto constant = dyn_cast<exec::ConstantOp>(op)) {
      auto value = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!value)
        return constant.emitOpError() << "holds a value that cannot be written";
      return addBytes(constant.getName(), constant.getBuffer(), rawBytes(value));
    }
    return success();
  }

  const std::vector<rt::io::NamedView> &views() const { return views_; }

private:
  /// Row-major bytes, one per element for booleans (MLIR packs them as bits).
  static std::vector<char> rawBytes(DenseElementsAttr value) {
    auto type = cast<ShapedType>(value.getType());
    std::vector<char> bytes;
    if (type.getElementType().isInteger(1)) {
      for (bool element : value.getValues<bool>())
        bytes.push_back(element ? 1 : 0);
      return bytes;
    }
    ArrayRef<char> raw = value.getRawData();
    if (!value.isSplat())
      return {raw.begin(), raw.end()};
    for (int64_t i = 0; i < type.getNumElements(); ++i)
      bytes.insert(bytes.end(), raw.begin(), raw.end());
    return bytes;
  }

  LogicalResult addBytes(StringRef name, Value buffer, std::vector<char> bytes) {
    auto type = cast<MemRefType>(buffer.getType());
    std::optional<rt::DType> dtype = runtimeDType(type.getElementType());
    if (!dtype)
      return emitError(buffer.getLoc()) << "weight '" << name << "' has element type "
                                        << type.getElementType() << ", which cannot be stored";
    storage_.push_back(std::move(bytes));
    rt::TensorView view{storage_.back().data(), *dtype,
                        rt::Shape(type.getShape().begin(), type.getShape().end())};
    views_.push_back({name.str(), view});
    return success();
  }

  std::deque<std::vector<char>> storage_;
  std::vector<rt::io::NamedView> views_;
};

llvm::json::Array signature(func::FuncOp program, bool inputs) {
  llvm::json::Array entries;
  auto describe = [](StringRef name, Value buffer) {
    auto type = cast<MemRefType>(buffer.getType());
    llvm::json::Array shape;
    for (int64_t dim : type.getShape())
      shape.push_back(dim);
    return llvm::json::Object{
        {"name", name},
        {"dtype", rt::dtypeName(runtimeDType(type.getElementType()).value_or(rt::DType::F32))},
        {"shape", std::move(shape)}};
  };
  program.walk([&](Operation *op) {
    if (auto input = dyn_cast<exec::InputOp>(op); input && inputs)
      entries.push_back(describe(input.getName(), input.getBuffer()));
    if (auto output = dyn_cast<exec::OutputOp>(op); output && !inputs)
      entries.push_back(describe(output.getName(), output.getBuffer()));
  });
  return entries;
}

LogicalResult writeBytes(Location location, StringRef path, ArrayRef<uint8_t> bytes) {
  std::error_code error;
  llvm::raw_fd_ostream out(path, error);
  if (!error) {
    out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    out.close();
    error = out.error();
  }
  if (error)
    return emitError(location) << "cannot write '" << path << "': " << error.message();
  return success();
}

/// Writes every file of the artifact into `directory` (which exists, empty).
LogicalResult writeFiles(ModuleOp module, func::FuncOp program, StringRef directory,
                         const ArtifactOptions &options) {
  Location location = module.getLoc();
  auto join = [&](StringRef file) {
    SmallString<256> path(directory);
    llvm::sys::path::append(path, file);
    return std::string(path);
  };
  const std::string programFile = "rank0.program", weightFile = "rank0.safetensors";

  auto bytes = serializeProgram(program);
  if (failed(bytes) || failed(writeBytes(location, join(programFile), *bytes)))
    return failure();
  WeightCollector weights;
  for (Operation &op : program.getBody().front())
    if (failed(weights.add(op)))
      return failure();
  rt::io::SafeTensorsMetadata metadata = {{"rank", "0"}, {"mesh", ""}, {"coords", ""}};
  if (rt::io::Status status =
          rt::io::writeSafeTensors(join(weightFile), weights.views(), metadata);
      !status)
    return emitError(location) << status.error();

  llvm::json::Object files;
  for (const std::string &file : {programFile, weightFile}) {
    auto crc = rt::io::crc32File(join(file));
    uint64_t size = 0;
    if (!crc || llvm::sys::fs::file_size(join(file), size))
      return emitError(location) << "cannot read back '" << join(file) << "'";
    files[file] = llvm::json::Object{{"bytes", static_cast<int64_t>(size)}, {"crc32", *crc}};
  }
  auto arena = program->getAttrOfType<IntegerAttr>("exec.arena_bytes");
  llvm::json::Object manifest{
      {"format", "shardc-artifact"},
      {"version", kArtifactVersion},
      {"target", options.target},
      {"model", options.model},
      {"inputs", signature(program, true)},
      {"outputs", signature(program, false)},
      {"mesh", llvm::json::Object{{"axes", llvm::json::Object{}}}},
      {"ranks", llvm::json::Array{llvm::json::Object{{"rank", 0},
                                                     {"coords", llvm::json::Object{}},
                                                     {"program", programFile},
                                                     {"weights", weightFile},
                                                     {"arena_bytes", arena ? arena.getInt() : 0}}}},
      {"files", std::move(files)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
  return writeBytes(location, join("manifest.json"),
                    ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(text.data()), text.size()));
}

} // namespace

LogicalResult writeArtifact(ModuleOp module, StringRef directory, const ArtifactOptions &options) {
  auto programs = llvm::to_vector(module.getOps<func::FuncOp>());
  if (programs.size() != 1)
    return module.emitError() << "expected one exec program, got " << programs.size();
  Location location = module.getLoc();
  // A stale artifact is replaced; any other existing path is left alone.
  SmallString<256> manifest(directory);
  llvm::sys::path::append(manifest, "manifest.json");
  if (llvm::sys::fs::exists(directory) && !llvm::sys::fs::exists(manifest))
    return emitError(location) << "'" << directory
                               << "' exists and is not a shardc artifact; refusing to overwrite it";
  std::string staging = (directory + ".partial-" + llvm::Twine(llvm::sys::Process::getProcessId())).str();
  llvm::sys::fs::remove_directories(staging);
  if (std::error_code error = llvm::sys::fs::create_directory(staging))
    return emitError(location) << "cannot create '" << staging << "': " << error.message();
  if (failed(writeFiles(module, programs.front(), staging, options))) {
    llvm::sys::fs::remove_directories(staging);
    return failure();
  }
  llvm::sys::fs::remove_directories(directory);
  if (std::error_code error = llvm::sys::fs::rename(staging, directory)) {
    llvm::sys::fs::remove_directories(staging);
    return emitError(location) << "cannot move the artifact into '" << directory
                               << "': " << error.message();
  }
  return success();
}

} // namespace shardc::artifact
