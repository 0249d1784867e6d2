//===- ArtifactWriter.cpp - write the artifact shardrun loads -------------===//
#include "compiler/Artifact/ArtifactWriter.h"
#include "compiler/Artifact/ArtifactDirectory.h"
#include "compiler/Artifact/ElementTypes.h"
#include "compiler/Artifact/ExportModel.h"
#include "compiler/Artifact/PipelineManifest.h"
#include "compiler/Artifact/ProgramSerializer.h"
#include "compiler/Artifact/RankBlocks.h"

#include "compiler/Artifact/WeightSlicing.h"
#include "dialects/Dist/DistDialect.h"
#include "dialects/Exec/ExecDialect.h"
#include "dialects/Graph/ConstEval/FloatFormats.h"
#include "dialects/Graph/TypeUtils.h"
#include "dialects/Graph/WeightBytes.h"
#include "dialects/Graph/WeightParts.h"
#include "passes/Autodiff/TiedWeights.h"
#include "passes/Sharding/CostModel.h"
#include "passes/Sharding/ShardingConversion.h"

#include "runtime/io/Checksum.h"
#include "runtime/io/SafeTensors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <tuple>
#include <deque>
#include <map>

using namespace mlir;

namespace shardc::artifact {
namespace {

/// Little-endian floats of type `from` as type `to` (--dtype): through
/// double, rounded to nearest even, saturating at the largest finite value.
std::vector<char> convertFloats(const std::vector<char> &bytes, Type from, Type to) {
  auto read = [&](size_t index) -> double {
    const char *at = bytes.data() + index * graph::elementByteWidth(from);
    if (from.isF32()) {
      float value;
      std::memcpy(&value, at, 4);
      return value;
    }
    if (from.isF64()) {
      double value;
      std::memcpy(&value, at, 8);
      return value;
    }
    uint16_t bits;
    std::memcpy(&bits, at, 2);
    return from.isF16() ? constfold::f16FromBits(bits) : constfold::bf16FromBits(bits);
  };
  size_t count = bytes.size() / graph::elementByteWidth(from);
  std::vector<char> out(count * graph::elementByteWidth(to));
  double largest = to.isF16()    ? 65504.0
                   : to.isBF16() ? 3.3895313892515355e38
                                 : 3.4028234663852886e38;
  for (size_t index = 0; index < count; ++index) {
    double value = read(index);
    if (std::isfinite(value))
      value = std::clamp(value, -largest, largest);
    char *at = out.data() + index * graph::elementByteWidth(to);
    if (to.isF32()) {
      float narrowed = float(value);
      std::memcpy(at, &narrowed, 4);
    } else if (to.isF64()) {
      std::memcpy(at, &value, 8);
    } else {
      uint16_t bits = to.isF16() ? constfold::f16Bits(value) : constfold::bf16Bits(value);
      std::memcpy(at, &bits, 2);
    }
  }
  return out;
}

/// Along `axis` of `source` (row-major, `shape`), the elements [begin,
/// begin + count) of the tensor in which each run of `block` elements is
/// repeated `times` times.
std::vector<char> pickRepeatedBlocks(const std::vector<char> &source, int64_t width,
                                     ArrayRef<int64_t> shape, int64_t axis, int64_t block,
                                     int64_t times, int64_t begin, int64_t count) {
  int64_t outer = 1, inner = width;
  for (int64_t dim = 0; dim < axis; ++dim)
    outer *= shape[dim];
  for (int64_t dim = axis + 1; dim < int64_t(shape.size()); ++dim)
    inner *= shape[dim];
  std::vector<char> out(size_t(outer * count * inner));
  char *at = out.data();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t v = begin; v < begin + count; ++v, at += inner) {
      int64_t from = v / (block * times) * block + v % block;
      std::memcpy(at, source.data() + (o * shape[axis] + from) * inner, size_t(inner));
    }
  return out;
}

/// The stored bytes of every weight file range, read once for all ranks.
class WeightSource {
public:
  FailureOr<ArrayRef<char>> read(exec::WeightOp weight) {
    std::vector<int64_t> parts;
    if (weight.getPartOffsets())
      parts.assign(weight.getPartOffsets()->begin(), weight.getPartOffsets()->end());
    auto key = std::make_tuple(weight.getFile().str(), weight.getOffset(), weight.getSize(), parts);
    auto found = cache.find(key);
    if (found == cache.end()) {
      auto bytes =
          graph::readStoredBytes(weight.getLoc(), weight.getName(), weight.getFile(),
                                 weight.getOffset(), weight.getSize(), weight.getPartOffsets());
      if (failed(bytes))
        return failure();
      found = cache.emplace(key, std::move(*bytes)).first;
    }
    StringRef data = found->second->getBuffer();
    return ArrayRef<char>(data.data(), data.size());
  }

private:
  /// Keyed by file, offset, size and part offsets.
  std::map<std::tuple<std::string, int64_t, int64_t, std::vector<int64_t>>,
           std::unique_ptr<llvm::MemoryBuffer>>
      cache;
};

/// The bytes of every weight and constant one rank holds, kept alive until
/// its weight file is written. The programs that read one file (a training
/// pipeline stage's parts) name each of its tensors alike (LowerToExec), so
/// a tensor is written once however many of them hold it.
class WeightCollector {
public:
  WeightCollector(WeightSource &source, const sharding::MeshShape &mesh, ArrayRef<int64_t> coords)
      : source(source), mesh(mesh), coords(coords) {}

  LogicalResult add(Operation &op) {
    if (auto weight = dyn_cast<exec::WeightOp>(op)) {
      // Optimizer states and accumulators start as zeros, which the
      // runtime makes.
      if (graph::startsAsZeros(graph::trainRole(weight)))
        return success();
      FailureOr<bool> held = holds(weight.getName(), weight.getBuffer());
      if (failed(held))
        return failure();
      return *held ? success() : addWeight(weight);
    }
    if (auto constant = dyn_cast<exec::ConstantOp>(op)) {
      auto value = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!value)
        return constant.emitOpError() << "holds a value that cannot be written";
      FailureOr<bool> held = holds(constant.getName(), constant.getBuffer());
      if (failed(held))
        return failure();
      return *held ? success()
                   : addBytes(constant.getName(), constant.getBuffer(), rawBytes(value));
    }
    return success();
  }

  const std::vector<rt::io::NamedView> &views() const { return views_; }

private:
  /// The rank's block of the weight: its box in the stored tensor, then the
  /// block its mesh coordinates select; zeros where it holds no share of a
  /// partial sum.
  LogicalResult addWeight(exec::WeightOp weight) {
    auto stored = source.read(weight);
    if (failed(stored))
      return failure();
    FailureOr<RankBlock> block = rankBlockOf(weight, mesh, coords);
    if (failed(block))
      return failure();
    auto type = cast<MemRefType>(weight.getType());
    const bool transposed = weight->hasAttr(graph::kTransposedAttrName);
    ArrayRef<int64_t> local = block->local, global = block->global;
    SmallVector<int64_t> offsets = block->offsets, storedShape(local);
    // A weight with repeated blocks: read the rank's box of the unrepeated
    // tensor whole along the repeated axis, then pick its blocks.
    std::optional<ArrayRef<int64_t>> repeat = weight.getRepeatBlocks();
    SmallVector<int64_t> boxShape(local), repeatedOffsets(offsets);
    if (repeat) {
      boxShape[(*repeat)[0]] = global[(*repeat)[0]] / (*repeat)[2];
      offsets[(*repeat)[0]] = 0;
    }
    if (weight.getStoredShape()) {
      storedShape.assign(weight.getStoredShape()->begin(), weight.getStoredShape()->end());
      for (auto [offset, box] : llvm::zip(offsets, *weight.getBoxOffsets()))
        offset += box;
    } else {
      storedShape.assign(global.begin(), global.end());
    }
    Type storedElement = weight.getStoredType() ? *weight.getStoredType() : type.getElementType();
    int64_t width = graph::elementByteWidth(storedElement);
    std::vector<char> bytes = extractBox(*stored, width, storedShape, offsets, boxShape);
    if (repeat)
      bytes = pickRepeatedBlocks(bytes, width, boxShape, (*repeat)[0], (*repeat)[1], (*repeat)[2],
                                 repeatedOffsets[(*repeat)[0]], local[(*repeat)[0]]);
    if (storedElement != type.getElementType())
      bytes = convertFloats(bytes, storedElement, type.getElementType());
    if (!block->holdsValue)
      std::fill(bytes.begin(), bytes.end(), 0);
    if (transposed)
      bytes = transposeMatrix(bytes, graph::elementByteWidth(type.getElementType()), local[0],
                              local[1]);
    return addBytes(weight.getName(), weight.getBuffer(), std::move(bytes));
  }

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

  /// Whether the file holds `name` already (another program named it);
  /// an error where that program's buffer has another type.
  FailureOr<bool> holds(StringRef name, Value buffer) {
    auto [first, added] = types_.try_emplace(name, buffer.getType());
    if (added)
      return false;
    if (first->second != buffer.getType())
      return emitError(buffer.getLoc())
             << "weight '" << name << "' is " << buffer.getType() << " here but " << first->second
             << " in another program that reads the same weight file";
    return true;
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

  WeightSource &source;
  const sharding::MeshShape &mesh;
  ArrayRef<int64_t> coords;
  std::deque<std::vector<char>> storage_;
  std::vector<rt::io::NamedView> views_;
  /// Each tensor's buffer type, by name.
  llvm::StringMap<Type> types_;
};

LogicalResult writeBytes(Location location, StringRef path, ArrayRef<uint8_t> bytes) {
  std::error_code error;
  llvm::raw_fd_ostream out(path, error);
  if (!error) {
    out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    out.close();
    error = out.error();
    // A stream destroyed with its error set aborts the process (a full disk).
    out.clear_error();
  }
  if (error)
    return emitError(location) << "cannot write '" << path << "': " << error.message();
  return success();
}

/// Writes `source` as kernels.cu into `directory` and compiles it with nvcc
/// into kernels.fatbin for `arch` (SASS for it, plus its PTX for newer
/// GPUs); returns the fatbin's name. nvcc is the one CMake found, or
/// $SHARDC_NVCC.
FailureOr<std::string> compileCudaKernels(Location location, StringRef source, StringRef arch,
                                          StringRef directory) {
  auto join = [&](StringRef file) {
    SmallString<256> path(directory);
    llvm::sys::path::append(path, file);
    return std::string(path);
  };
  if (failed(writeBytes(
          location, join("kernels.cu"),
          ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(source.data()), source.size()))))
    return failure();
  std::optional<std::string> fromEnvironment = llvm::sys::Process::GetEnv("SHARDC_NVCC");
  std::string nvcc = fromEnvironment ? *fromEnvironment : SHARDC_NVCC_PATH;
  if (nvcc.empty() || !llvm::sys::fs::can_execute(nvcc))
    return emitError(location) << "--target=cuda compiles its fused kernels with nvcc, which is "
                               << "not installed" << (nvcc.empty() ? "" : " at '" + nvcc + "'")
                               << " (set SHARDC_NVCC)";
  std::string log = join("nvcc.log");
  std::string archFlag = ("-arch=" + arch).str();
  std::string output = join("kernels.fatbin"), input = join("kernels.cu");
  SmallVector<StringRef> args = {nvcc, "-fatbin", archFlag, "-O3", "-o", output, input};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log), StringRef(log)};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(nvcc, args, std::nullopt, redirects, 0, 0, &error);
  if (status != 0) {
    auto text = llvm::MemoryBuffer::getFile(log);
    StringRef first = text ? (*text)->getBuffer().trim().split('\n').first : StringRef(error);
    return emitError(location) << "nvcc failed on the generated kernels: " << first;
  }
  llvm::sys::fs::remove(log);
  return std::string("kernels.fatbin");
}

/// The size and CRC-32 of each file written, for the manifest.
class FileList {
public:
  explicit FileList(StringRef directory) : directory(directory) {}

  std::string path(StringRef file) const {
    SmallString<256> joined(directory);
    llvm::sys::path::append(joined, file);
    return std::string(joined);
  }

  LogicalResult add(Location location, StringRef file) {
    auto crc = rt::io::crc32File(path(file));
    uint64_t size = 0;
    if (!crc || llvm::sys::fs::file_size(path(file), size))
      return emitError(location) << "cannot read back '" << path(file) << "'";
    files[file.str()] = llvm::json::Object{{"bytes", static_cast<int64_t>(size)}, {"crc32", *crc}};
    return success();
  }

  llvm::json::Object take() { return std::move(files); }

private:
  std::string directory;
  llvm::json::Object files;
};

/// The programs to write: one, or (with dist.pipeline) one per stage in
/// stage order; a training pipeline's stages have one per part (forward,
/// backward_input, backward_weight, update levels), in that order.
struct Programs {
  SmallVector<func::FuncOp> stages;
  dist::PipelineOp pipeline;
  bool training = false;
};

/// The stage of a pipeline program.
int64_t stageOfProgram(func::FuncOp program) {
  return program->getAttrOfType<IntegerAttr>(dist::kStageAttrName).getInt();
}

/// A pipeline's programs cut into each stage's: they lie together in stage
/// order (writeArtifact sorts them).
SmallVector<ArrayRef<func::FuncOp>> programsByStage(ArrayRef<func::FuncOp> programs) {
  SmallVector<ArrayRef<func::FuncOp>> stages;
  size_t begin = 0;
  for (size_t end = 1; end <= programs.size(); ++end)
    if (end == programs.size() ||
        stageOfProgram(programs[end]) != stageOfProgram(programs[begin])) {
      stages.push_back(programs.slice(begin, end - begin));
      begin = end;
    }
  return stages;
}

/// A pipeline program's files and manifest entries tell its part apart
/// (".backward_input", ".update.1"); an inference stage has only its forward.
std::string partSuffix(func::FuncOp program) {
  auto part = program->getAttrOfType<StringAttr>(dist::kPartAttrName);
  if (!part)
    return "";
  std::string suffix = "." + part.str();
  if (auto level = program->getAttrOfType<IntegerAttr>(dist::kLevelAttrName))
    suffix += "." + std::to_string(level.getInt());
  return suffix;
}

/// The weight file a program copy reads: written by the first rank of the
/// group that shares it, named by every member.
struct WeightFile {
  std::string name;
  rt::io::SafeTensorsMetadata metadata; ///< the mesh and every rank that reads it
  bool write = false;                   ///< this rank writes it
};

/// Groups the ranks that hold the same blocks of the weights of the
/// programs that read one file (the program, or a pipeline stage's); each
/// group reads one file, named after its first rank ("rank0.safetensors",
/// or "rank0.stage1.safetensors" in a pipeline).
class WeightFileGroups {
public:
  /// Adds the copy of `readers` (stage `stage`'s programs, or the one
  /// program with stage -1 outside a pipeline) that `rank` runs at `coords`
  /// of the stages' mesh.
  LogicalResult add(ArrayRef<func::FuncOp> readers, int64_t stage, int64_t rank,
                    const sharding::MeshShape &stageMesh, ArrayRef<int64_t> coords) {
    FailureOr<std::vector<int64_t>> key = blocksKey(readers, stageMesh, coords);
    if (failed(key))
      return failure();
    std::vector<int64_t> &members = groups[{stage, std::move(*key)}];
    members.push_back(rank);
    groupOf[{stage, rank}] = &members;
    return success();
  }

  /// The file `rank`'s copy of stage `stage` reads ("rank0" then `suffix`);
  /// `mesh` is the devices'.
  WeightFile fileFor(int64_t stage, int64_t rank, const sharding::MeshShape &mesh,
                     StringRef suffix = "") const {
    const std::vector<int64_t> &members = *groupOf.at({stage, rank});
    std::string stem = "rank" + std::to_string(members.front()) + suffix.str();
    std::string listed;
    for (int64_t member : members)
      listed += (listed.empty() ? "" : ",") + std::to_string(member);
    return {stem + ".safetensors",
            {{"mesh", mesh.describe()}, {"ranks", listed}},
            members.front() == rank};
  }

private:
  /// (stage, key) -> the ranks with that key, in rank order.
  std::map<std::pair<int64_t, std::vector<int64_t>>, std::vector<int64_t>> groups;
  /// (stage, rank) -> its group (map values stay put).
  std::map<std::pair<int64_t, int64_t>, const std::vector<int64_t> *> groupOf;
};

/// Writes the weight file of `readers` (the programs that read it) for the
/// rank at `coords` of the stages' mesh, when the rank is the first of
/// those that read it: every tensor any of them names, once.
LogicalResult writeWeightFile(ArrayRef<func::FuncOp> readers, WeightSource &source,
                              const sharding::MeshShape &mesh, ArrayRef<int64_t> coords,
                              const WeightFile &weightFile, FileList &files) {
  if (!weightFile.write)
    return success();
  WeightCollector weights(source, mesh, coords);
  for (func::FuncOp program : readers)
    for (Operation &op : program.getBody().front())
      if (failed(weights.add(op)))
        return failure();
  Location location = readers.front()->getLoc();
  if (rt::Status status = rt::io::writeSafeTensors(files.path(weightFile.name), weights.views(),
                                                   weightFile.metadata);
      !status)
    return emitError(location) << status.message();
  return files.add(location, weightFile.name);
}

/// Writes one program file (`stem`.program) and returns its manifest
/// entry, which names the weight file it reads.
FailureOr<llvm::json::Object> writeProgramFile(func::FuncOp program, ArrayRef<uint8_t> bytes,
                                               StringRef stem, StringRef weightFile,
                                               FileList &files) {
  Location location = program.getLoc();
  std::string programFile = (stem + ".program").str();
  if (failed(writeBytes(location, files.path(programFile), bytes)) ||
      failed(files.add(location, programFile)))
    return failure();
  auto arena = program->getAttrOfType<IntegerAttr>(exec::kArenaBytesAttrName);
  return llvm::json::Object{{"program", programFile},
                            {"weights", weightFile.str()},
                            {"arena_bytes", arena ? arena.getInt() : 0}};
}

/// The file of a training artifact that an ONNX export starts from
/// (ExportModel.h).
constexpr const char *kExportModelFile = "export.onnx";

/// `program`'s weight buffers whose training role is one of `roles`.
SmallVector<exec::WeightOp> buffersWithRole(Operation *program, ArrayRef<StringRef> roles) {
  SmallVector<exec::WeightOp> buffers;
  program->walk([&](exec::WeightOp weight) {
    auto role = weight->getAttrOfType<StringAttr>(graph::kTrainAttrName);
    if (role && llvm::is_contained(roles, role.getValue()))
      buffers.push_back(weight);
  });
  return buffers;
}

/// Where a buffer lies on the ranks: its whole (global) shape and the
/// offset of each rank's block in it, by rank; none for a rank that holds
/// no block of it (a pipeline's ranks hold only their stages' buffers).
struct RankPlacement {
  SmallVector<int64_t> whole;
  SmallVector<std::optional<SmallVector<int64_t>>> offsets;
};

/// A state buffer (a parameter, an optimizer state, the step counter), one
/// of the programs' buffers of its name, and where it lies on the ranks.
struct PlacedState {
  exec::WeightOp weight;
  RankPlacement placement;
};

/// Every buffer of `programs` whose training role is one of `roles`, once
/// per name in the order first met, placed on the ranks of `mesh` (the
/// devices'; `stageMesh` the programs'). Without a pipeline there is one
/// program, which every rank holds. A pipeline rank (its pp coordinate
/// `pipelineRanks` divides into the stages, docs/pipeline.md) holds the
/// buffers of its stages' programs. A buffer two stages hold (the replica of
/// a tied weight that another stage trains, which its home's update
/// refreshes after every step) is placed on the ranks of both, which must
/// agree on its block: a checkpoint then restores the replica too, and an
/// export reads either (the same values).
FailureOr<SmallVector<PlacedState>> placeStates(ArrayRef<func::FuncOp> programs, bool pipelined,
                                                int64_t pipelineRanks,
                                                const sharding::MeshShape &stageMesh,
                                                const sharding::MeshShape &mesh,
                                                ArrayRef<StringRef> roles) {
  SmallVector<PlacedState> placed;
  llvm::StringMap<size_t> indexOf;
  // The pp axis leads the devices' mesh when there is more than one pp rank.
  const bool ppAxis = pipelined && pipelineRanks > 1;
  for (func::FuncOp program : pipelined ? programs : programs.take_front()) {
    const int64_t stage = pipelined ? stageOfProgram(program) : 0;
    for (exec::WeightOp weight : buffersWithRole(program, roles)) {
      auto [found, added] = indexOf.try_emplace(weight.getName(), placed.size());
      if (added)
        placed.push_back(
            {weight,
             {{}, SmallVector<std::optional<SmallVector<int64_t>>>(size_t(mesh.devices()))}});
      PlacedState &state = placed[found->second];
      if (state.weight.getType() != weight.getType() ||
          state.weight.getBoxOffsets() != weight.getBoxOffsets() ||
          state.weight.getStoredShape() != weight.getStoredShape())
        return weight.emitOpError()
               << "is held by two pipeline stages with different types or boxes: a stage's "
                  "replica of a trained weight must be the weight's block as its home holds it";
      for (int64_t rank = 0; rank < mesh.devices(); ++rank) {
        std::vector<int64_t> coords = mesh.coordinates(rank);
        if (ppAxis && stage % pipelineRanks != coords.front())
          continue;
        ArrayRef<int64_t> at(coords);
        FailureOr<RankBlock> block = rankBlockOf(weight, stageMesh, ppAxis ? at.drop_front() : at);
        if (failed(block))
          return failure();
        std::optional<SmallVector<int64_t>> &offsets = state.placement.offsets[size_t(rank)];
        if ((offsets && *offsets != block->offsets) ||
            (!state.placement.whole.empty() && state.placement.whole != block->global))
          return weight.emitOpError() << "is held by rank " << rank
                                      << " as two different blocks (two of its stages' programs "
                                         "disagree on its sharding)";
        offsets = block->offsets;
        state.placement.whole = block->global;
      }
    }
  }
  return placed;
}

/// A placement's offsets by rank as JSON: null where the rank holds none.
llvm::json::Array offsetsByRank(const RankPlacement &placement, ArrayRef<int64_t> shift = {}) {
  llvm::json::Array byRank;
  for (const std::optional<SmallVector<int64_t>> &at : placement.offsets) {
    if (!at) {
      byRank.push_back(nullptr);
      continue;
    }
    SmallVector<int64_t> offsets(*at);
    for (auto [dim, offset] : llvm::enumerate(offsets))
      offset += dim < shift.size() ? shift[dim] : 0;
    byRank.push_back(llvm::json::Array(offsets));
  }
  return byRank;
}

/// The tensor a buffer holds a block of: lowering names a second buffer of
/// one tensor "NAME#1".
StringRef tensorOfBuffer(StringRef buffer) {
  auto [base, suffix] = buffer.rsplit('#');
  if (!suffix.empty() && llvm::all_of(suffix, [](char c) { return llvm::isDigit(c); }))
    return base;
  return buffer;
}

/// The manifest's "training" section (docs/training.md): the step's loss and
/// gradient-norm outputs, every input a batch of the data, the optimizer,
/// where each rank holds each trained weight, the ties, and the model an
/// ONNX export starts from (written into `files` here).
FailureOr<llvm::json::Object>
describeTraining(DictionaryAttr training, ArrayAttr tied, ArrayRef<func::FuncOp> programs,
                 bool pipelined, int64_t pipelineRanks, const sharding::MeshShape &stageMesh,
                 const sharding::MeshShape &mesh, StringRef modelPath, FileList &files) {
  llvm::json::Object optimizer;
  if (auto spec = training.getAs<DictionaryAttr>("optimizer"))
    for (NamedAttribute entry : spec) {
      if (auto number = dyn_cast<FloatAttr>(entry.getValue()))
        optimizer[entry.getName().str()] = number.getValueAsDouble();
      else if (auto text = dyn_cast<StringAttr>(entry.getValue()))
        optimizer[entry.getName().str()] = text.str();
      else if (auto flag = dyn_cast<BoolAttr>(entry.getValue()))
        optimizer[entry.getName().str()] = flag.getValue();
    }
  llvm::json::Array batchInputs;
  llvm::StringSet<> batchNames;
  for (func::FuncOp program : programs)
    program.walk([&](exec::InputOp input) {
      if (!input.getTransfer() && !input->hasAttr(dist::kMicrobatchIndexAttrName) &&
          batchNames.insert(input.getName()).second)
        batchInputs.push_back(input.getName().str());
    });
  func::FuncOp program = programs.front();
  // Every state buffer's placement, computed once for both lists below: a
  // pipeline's ranks hold their stages' buffers only (null elsewhere).
  FailureOr<SmallVector<PlacedState>> stateBuffers =
      placeStates(programs, pipelined, pipelineRanks, stageMesh, mesh,
                  {graph::kTrainParam, graph::kTrainCopy, graph::kTrainState});
  if (failed(stateBuffers))
    return failure();
  // Where each trained buffer lies in its initializer: one part of a fused
  // projection is a box of it, and lowering names each part's buffer
  // apart ("NAME#1"), so a checkpoint is put back together from these; and
  // which block of the buffer each rank holds ("blocks", by rank), so an
  // export puts the ranks' blocks back together.
  llvm::json::Array parameters;
  llvm::StringSet<> trained;
  for (const PlacedState &state : *stateBuffers) {
    exec::WeightOp weight = state.weight;
    if (graph::trainRole(weight) != graph::kTrainParam)
      continue;
    StringRef buffer = weight.getName(), initializer = tensorOfBuffer(buffer);
    auto shape = cast<MemRefType>(weight.getType()).getShape();
    llvm::json::Object entry{{"buffer", buffer.str()}, {"initializer", initializer.str()}};
    // Stacked experts are the model's initializers, one per expert.
    if (auto parts = weight->getAttrOfType<ArrayAttr>(graph::kPartsAttrName)) {
      llvm::json::Array names;
      for (auto part : parts.getAsRange<StringAttr>()) {
        names.push_back(part.str());
        trained.insert(part.getValue());
      }
      entry["parts"] = std::move(names);
    } else {
      trained.insert(initializer);
    }
    auto global = weight.getStoredShape();
    auto box = weight.getBoxOffsets();
    const RankPlacement &placement = state.placement;
    entry["stored_shape"] =
        llvm::json::Array(global ? *global : ArrayRef<int64_t>(placement.whole));
    entry["box_offsets"] = llvm::json::Array(box ? *box : SmallVector<int64_t>(shape.size(), 0));
    entry["shape"] = llvm::json::Array(placement.whole);
    entry["blocks"] = offsetsByRank(placement);
    parameters.push_back(std::move(entry));
  }
  // Where every state buffer (parameters, optimizer states, the step
  // counter) lies in its tensor, on every rank: a checkpoint carries this
  // index so that another mesh's ranks can take their blocks from it. A
  // parameter's tensor is its initializer (a box of a fused one offset by
  // the box), a state's its own name.
  llvm::json::Array stateIndex;
  for (const PlacedState &state : *stateBuffers) {
    exec::WeightOp weight = state.weight;
    StringRef buffer = weight.getName(), tensor = tensorOfBuffer(buffer);
    auto box = weight.getBoxOffsets();
    auto stored = weight.getStoredShape();
    const SmallVector<int64_t> &whole = state.placement.whole;
    stateIndex.push_back(llvm::json::Object{
        {"buffer", buffer.str()},
        {"tensor", tensor.str()},
        {"shape", llvm::json::Array(stored ? *stored : ArrayRef<int64_t>(whole))},
        {"block", llvm::json::Array(cast<MemRefType>(weight.getType()).getShape())},
        {"offsets", offsetsByRank(state.placement, box ? *box : ArrayRef<int64_t>())}});
  }
  llvm::json::Array ties;
  if (tied)
    for (auto tie : tied.getAsRange<DictionaryAttr>()) {
      StringRef copy = tie.getAs<StringAttr>("initializer").getValue();
      StringRef original = tie.getAs<StringAttr>("of").getValue();
      // A tie of frozen weights changes nothing an export writes.
      if (!trained.contains(original))
        continue;
      trained.insert(copy);
      ties.push_back(
          llvm::json::Object{{"initializer", copy.str()},
                             {"of", original.str()},
                             {"transposed", tie.getAs<BoolAttr>("transposed").getValue()}});
    }
  // A model shardc cannot export still trains: the manifest says why not,
  // and only --export-onnx fails.
  llvm::json::Object exportModel;
  llvm::Expected<std::string> skeleton = exportSkeleton(modelPath, trained);
  if (!skeleton) {
    exportModel["model"] = nullptr;
    exportModel["reason"] = llvm::toString(skeleton.takeError());
  } else {
    Location location = program.getLoc();
    if (failed(writeBytes(location, files.path(kExportModelFile),
                          ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(skeleton->data()),
                                            skeleton->size()))) ||
        failed(files.add(location, kExportModelFile)))
      return failure();
    exportModel["model"] = kExportModelFile;
  }
  auto loss = training.getAs<StringAttr>("loss");
  return llvm::json::Object{{"loss", "loss"},
                            {"grad_norm", "grad_norm"},
                            {"loss_spec", loss ? loss.str() : std::string()},
                            {"optimizer", std::move(optimizer)},
                            {"batch_inputs", std::move(batchInputs)},
                            {"parameters", std::move(parameters)},
                            {"states", std::move(stateIndex)},
                            {"ties", std::move(ties)},
                            {"export", std::move(exportModel)}};
}

/// Writes every file of the artifact into `directory` (which exists, empty):
/// per rank the program (the same SPMD program for all; with a pipeline,
/// the programs of each stage the rank runs) and its weights (with a
/// pipeline, one file per stage, which its programs share).
LogicalResult writeFiles(ModuleOp module, Programs &programs, StringRef directory,
                         const ArtifactOptions &options) {
  Location location = module.getLoc();
  FailureOr<dist::MeshOp> meshOp = sharding::findMesh(module);
  if (failed(meshOp))
    return failure();
  // The weights are cut over the stages' mesh; the ranks enumerate the
  // devices' mesh, which puts the pipeline axis in front of it.
  sharding::MeshShape stageMesh = *meshOp ? sharding::meshShapeOf(*meshOp) : sharding::MeshShape{};
  int64_t pipelineRanks = programs.pipeline ? programs.pipeline.getPipelineRanksAttr().getInt() : 1;
  sharding::MeshShape mesh = sharding::devicesOfStages(stageMesh, pipelineRanks);
  llvm::DenseMap<Operation *, std::vector<uint8_t>> bytes;
  for (func::FuncOp program : programs.stages) {
    auto serialized = serializeProgram(program, mesh);
    if (failed(serialized))
      return failure();
    bytes[program] = std::move(*serialized);
  }
  SmallVector<ArrayRef<func::FuncOp>> stagePrograms;
  if (programs.pipeline)
    stagePrograms = programsByStage(programs.stages);
  // Which ranks share a weight file is known before any is written: the
  // file's metadata lists them all.
  WeightFileGroups weightFiles;
  for (int64_t rank = 0; rank < mesh.devices(); ++rank) {
    std::vector<int64_t> coords = mesh.coordinates(rank);
    if (!programs.pipeline &&
        failed(weightFiles.add(programs.stages.front(), -1, rank, stageMesh, coords)))
      return failure();
    for (ArrayRef<func::FuncOp> readers : stagePrograms) {
      int64_t stage = stageOfProgram(readers.front());
      if (stage % pipelineRanks == coords.front() &&
          failed(weightFiles.add(readers, stage, rank, stageMesh,
                                 ArrayRef<int64_t>(coords).drop_front())))
        return failure();
    }
  }
  WeightSource source;
  FileList files(directory);
  llvm::json::Array ranks;
  for (int64_t rank = 0; rank < mesh.devices(); ++rank) {
    std::vector<int64_t> coords = mesh.coordinates(rank);
    llvm::json::Object coordinates;
    for (auto [axis, coord] : llvm::enumerate(coords))
      coordinates[mesh.names[axis]] = coord;
    llvm::json::Object entry{{"rank", rank}, {"coords", std::move(coordinates)}};
    if (!programs.pipeline) {
      func::FuncOp program = programs.stages.front();
      WeightFile weightFile = weightFiles.fileFor(-1, rank, mesh);
      if (failed(writeWeightFile(program, source, stageMesh, coords, weightFile, files)))
        return failure();
      auto rankFiles = writeProgramFile(program, bytes[program], ("rank" + Twine(rank)).str(),
                                        weightFile.name, files);
      if (failed(rankFiles))
        return failure();
      for (auto &[key, value] : *rankFiles)
        entry[key] = std::move(value);
    } else {
      ArrayRef<int64_t> stageCoords = ArrayRef<int64_t>(coords).drop_front();
      llvm::json::Array stages;
      for (ArrayRef<func::FuncOp> readers : stagePrograms) {
        int64_t stage = stageOfProgram(readers.front());
        if (stage % pipelineRanks != coords.front())
          continue;
        // The stage's programs read one weight file: a parameter's first
        // value, or a constant, that several of them hold is in it once.
        std::string suffix = ".stage" + std::to_string(stage);
        WeightFile weightFile = weightFiles.fileFor(stage, rank, mesh, suffix);
        if (failed(writeWeightFile(readers, source, stageMesh, stageCoords, weightFile, files)))
          return failure();
        for (func::FuncOp program : readers) {
          auto stageFiles = writeProgramFile(
              program, bytes[program], "rank" + std::to_string(rank) + suffix + partSuffix(program),
              weightFile.name, files);
          if (failed(stageFiles))
            return failure();
          (*stageFiles)["stage"] = stage;
          if (auto part = program->getAttrOfType<StringAttr>(dist::kPartAttrName))
            (*stageFiles)["part"] = part.str();
          if (auto level = program->getAttrOfType<IntegerAttr>(dist::kLevelAttrName))
            (*stageFiles)["level"] = level.getInt();
          stages.push_back(std::move(*stageFiles));
        }
      }
      entry["stages"] = std::move(stages);
    }
    ranks.push_back(std::move(entry));
  }
  std::optional<std::string> cudaKernels;
  if (auto source = module->getAttrOfType<StringAttr>(exec::kCudaSourceAttrName)) {
    FailureOr<std::string> fatbin =
        compileCudaKernels(location, source.getValue(), options.cudaArch, directory);
    if (failed(fatbin))
      return failure();
    for (const std::string &file : {std::string("kernels.cu"), *fatbin})
      if (failed(files.add(location, file)))
        return failure();
    cudaKernels = *fatbin;
  }
  llvm::json::Object axes;
  for (auto [name, size] : llvm::zip(mesh.names, mesh.sizes))
    axes[name] = size;
  llvm::json::Array inputs = programSignature(programs.stages.front(), true);
  llvm::json::Array outputs = callerOutputs(programs.stages.front(), mesh);
  std::optional<llvm::json::Object> trainingSection;
  if (auto training = module->getAttrOfType<DictionaryAttr>(graph::kTrainingAttrName)) {
    auto section = describeTraining(
        training, module->getAttrOfType<ArrayAttr>(autodiff::kTiedWeightsAttrName), programs.stages,
        bool(programs.pipeline), pipelineRanks, stageMesh, mesh, options.model, files);
    if (failed(section))
      return failure();
    trainingSection = std::move(*section);
  }
  std::optional<llvm::json::Object> pipeline;
  if (programs.pipeline) {
    // The outputs end on the first rank of the last stage.
    std::vector<int64_t> last(mesh.numAxes(), 0);
    last.front() = (programs.pipeline.getNumStages() - 1) % pipelineRanks;
    auto section = describePipeline(programs.pipeline, programs.stages, mesh.rankOf(last), mesh);
    if (failed(section))
      return failure();
    inputs = std::move(section->inputs);
    outputs = std::move(section->outputs);
    pipeline = std::move(section->pipeline);
  }
  llvm::json::Object manifest{
      {"format", "shardc-artifact"},
      {"version", kArtifactVersion},
      {"target", options.target},
      {"cuda_arch",
       options.cudaArch.empty() ? llvm::json::Value(nullptr) : llvm::json::Value(options.cudaArch)},
      {"cuda_kernels", cudaKernels ? llvm::json::Value(*cudaKernels) : llvm::json::Value(nullptr)},
      {"model", options.model},
      {"inputs", std::move(inputs)},
      {"outputs", std::move(outputs)},
      {"mesh", llvm::json::Object{{"axes", std::move(axes)}}},
      {"ranks", std::move(ranks)},
      {"files", files.take()}};
  if (pipeline)
    manifest["pipeline"] = std::move(*pipeline);
  if (trainingSection)
    manifest["training"] = std::move(*trainingSection);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
  return writeBytes(location, files.path("manifest.json"),
                    ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(text.data()), text.size()));
}

} // namespace

LogicalResult writeArtifact(ModuleOp module, StringRef directory, const ArtifactOptions &options) {
  Programs programs;
  for (auto pipeline : module.getOps<dist::PipelineOp>())
    programs.pipeline = pipeline;
  programs.stages = llvm::to_vector(module.getOps<func::FuncOp>());
  programs.training = module->hasAttr(graph::kTrainingAttrName);
  if (programs.pipeline) {
    // Stage order, then the parts in the order a step runs them.
    auto order = [](func::FuncOp f) {
      auto stage = f->getAttrOfType<IntegerAttr>(dist::kStageAttrName);
      auto part = f->getAttrOfType<StringAttr>(dist::kPartAttrName);
      auto level = f->getAttrOfType<IntegerAttr>(dist::kLevelAttrName);
      int64_t rank = 0;
      if (part)
        rank = llvm::StringSwitch<int64_t>(part.getValue())
                   .Case("backward_input", 1)
                   .Case("backward_weight", 2)
                   .Case("update", 3)
                   .Default(0);
      return std::make_tuple(stage ? stage.getInt() : -1, rank, level ? level.getInt() : 0);
    };
    llvm::sort(programs.stages,
               [&](func::FuncOp a, func::FuncOp b) { return order(a) < order(b); });
    if (!programs.training &&
        int64_t(programs.stages.size()) != programs.pipeline.getNumStages())
      return module.emitError() << "expected one exec program per pipeline stage ("
                                << programs.pipeline.getNumStages() << "), got "
                                << programs.stages.size();
  } else if (programs.stages.size() != 1) {
    return module.emitError() << "expected one exec program, got " << programs.stages.size();
  }
  if (programs.pipeline && programs.training)
    for (ArrayRef<func::FuncOp> stagePrograms : programsByStage(programs.stages))
      if (failed(checkStorageWrites(stagePrograms)))
        return failure();
  Location location = module.getLoc();
  // A plan this large is a bound dim gone wrong (--dim batch=99999999), not
  // a model: say so before writing anything.
  for (func::FuncOp program : programs.stages)
    if (auto arena = program->getAttrOfType<IntegerAttr>(exec::kArenaBytesAttrName);
        arena && arena.getInt() > kMaxArenaBytes)
      return emitError(location) << "the memory plan needs an arena of "
                                 << llvm::formatv("{0:F1}", arena.getInt() / double(1LL << 40))
                                 << " TiB (" << arena.getInt()
                                 << " bytes) per rank, over shardc's limit of 1 TiB";
  llvm::Expected<std::unique_ptr<StagingDirectory>> staging = StagingDirectory::create(directory);
  if (!staging)
    return emitError(location) << llvm::toString(staging.takeError());
  if (failed(writeFiles(module, programs, (*staging)->path(), options)))
    return failure();
  if (llvm::Error error = (*staging)->commit())
    return emitError(location) << llvm::toString(std::move(error));
  return success();
}

} // namespace shardc::artifact
