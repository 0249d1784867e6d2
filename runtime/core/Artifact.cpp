//===- Artifact.cpp - load and check a compiled artifact ------------------===//
#include "runtime/core/Artifact.h"

#include "runtime/core/ManifestFields.h"
#include "runtime/core/MeshAxes.h"
#include "runtime/core/ProgramChecks.h"
#include "runtime/io/Checksum.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include <sys/stat.h>

namespace shardc::rt {
namespace {

std::string join(const std::string &directory, const std::string &file) {
  return directory.empty() || directory.back() == '/' ? directory + file : directory + "/" + file;
}

Status fail(const std::string &file, const std::string &message) {
  return Status::error(file + ": " + message);
}

/// The path of the file the manifest calls `file`, which must lie in the
/// artifact: a plain name (no folder, not "." or ".."), and once symlinks
/// are resolved still inside `directory`. A file that does not exist passes
/// here; reading it then says it is missing.
StatusOr<std::string> pathIn(const std::string &directory, const std::string &file,
                             const std::string &manifest) {
  if (file.empty() || file == "." || file == ".." || file.find('/') != std::string::npos ||
      file.find('\0') != std::string::npos)
    return fail(manifest,
                "names the file '" + io::printable(file) + "'; expected a file of the artifact");
  std::string path = join(directory, file);
  char resolvedDirectory[PATH_MAX], resolvedFile[PATH_MAX];
  if (!::realpath(directory.empty() ? "." : directory.c_str(), resolvedDirectory) ||
      !::realpath(path.c_str(), resolvedFile))
    return path;
  std::string inside = std::string(resolvedDirectory) + "/";
  if (std::string(resolvedFile).rfind(inside, 0) != 0)
    return fail(path, "leads outside the artifact (to '" + std::string(resolvedFile) + "')");
  return path;
}

/// Whether `path` is a regular file (after symlinks): a FIFO or a device
/// named in a hostile artifact must not block or feed the reader.
Status checkRegular(const std::string &path, const std::string &missing) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    return fail(path, missing);
  if (!S_ISREG(info.st_mode))
    return fail(path, "is not a regular file");
  return {};
}

StatusOr<std::vector<uint8_t>> readFile(const std::string &path) {
  if (Status status = checkRegular(path, "cannot be read (missing?)"); !status)
    return status;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail(path, "cannot be read (missing?)");
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

/// The caller's inputs or outputs, at `field` ("inputs").
std::vector<TensorSignature> signatureOf(const nlohmann::json &entries, const std::string &field) {
  std::vector<TensorSignature> signature;
  for (size_t i = 0; i < array(entries, field).size(); ++i) {
    const std::string at = field + "[" + std::to_string(i) + "]";
    const DType dtype = dtypeOf(member(entries[i], "dtype", at), at + ".dtype");
    signature.push_back({text(member(entries[i], "name", at), at + ".name"), dtype,
                         shapeOf(member(entries[i], "shape", at), dtype, at + ".shape")});
  }
  return signature;
}

/// outputs[i].gather of every output: a dim of its shape, split over mesh
/// axes that split the batch, which divide it.
Status readOutputSplits(const nlohmann::json &entries, ArtifactLayout &layout,
                         const std::string &manifest) {
  for (size_t i = 0; i < layout.outputs.size(); ++i) {
    const nlohmann::json &entry = entries[i]; // signatureOf read them
    TensorSignature piece = layout.outputs[i];
    std::optional<OutputSplit> gather;
    if (entry.contains("gather")) {
      const std::string at = "outputs[" + std::to_string(i) + "].gather";
      const nlohmann::json &given = entry.at("gather");
      gather.emplace();
      const int64_t dim = integer(member(given, "dim", at), at + ".dim");
      if (dim < 0 || dim >= static_cast<int64_t>(piece.shape.size()))
        return fail(manifest, at + ".dim: " + std::to_string(dim) + " is not a dimension of '" +
                                  io::printable(piece.name) + "'");
      gather->dim = static_cast<int>(dim);
      const nlohmann::json &axes = array(member(given, "axes", at), at + ".axes");
      for (size_t k = 0; k < axes.size(); ++k) {
        const std::string axis = text(axes[k], at + ".axes[" + std::to_string(k) + "]");
        const int position = layout.mesh.axis(axis);
        if (position < 0 || !splitsBatch(axis) || axis == kMicroBatchAxis)
          return fail(manifest, at + ".axes: '" + io::printable(axis) +
                                    "' is not a batch axis of the mesh (" +
                                    layout.mesh.describe() + ")");
        if (std::find(gather->axes.begin(), gather->axes.end(), position) != gather->axes.end())
          return fail(manifest, at + ".axes: '" + axis + "' is named twice");
        gather->axes.push_back(position);
        gather->pieces *= layout.mesh.sizes[static_cast<size_t>(position)];
      }
      if (gather->axes.empty() || piece.shape[gather->dim] % gather->pieces != 0)
        return fail(manifest, at + ": dimension " + std::to_string(dim) + " of '" +
                                  io::printable(piece.name) + "' (" +
                                  std::to_string(piece.shape[gather->dim]) +
                                  ") is not split into " + std::to_string(gather->pieces) +
                                  " pieces");
      piece.shape[gather->dim] /= gather->pieces;
    }
    layout.outputSplits.push_back(std::move(gather));
    layout.rankOutputs.push_back(std::move(piece));
  }
  return {};
}

/// An artifact file as the manifest's "files" lists it (it must be listed):
/// its path, confined to the artifact and a regular file, and the size and
/// CRC-32 it must have.
struct ListedFile {
  std::string path;
  int64_t bytes = 0;
  std::string crc32;
};

StatusOr<ListedFile> listedFile(const std::string &file, const nlohmann::json &manifest,
                                const std::string &directory) {
  std::string manifestPath = join(directory, "manifest.json");
  auto confined = pathIn(directory, file, manifestPath);
  if (!confined)
    return confined.status();
  const nlohmann::json &files = member(manifest, "files", "");
  if (!files.is_object() || !files.contains(file))
    return fail(manifestPath, "does not list the size and CRC-32 of '" + io::printable(file) + "'");
  const nlohmann::json &facts = files.at(file);
  const std::string at = "files['" + io::printable(file) + "']";
  ListedFile listed{*confined, integer(member(facts, "bytes", at), at + ".bytes"),
                    text(member(facts, "crc32", at), at + ".crc32")};
  if (Status status = checkRegular(listed.path, "is missing; the artifact is incomplete"); !status)
    return status;
  return listed;
}

/// Fails unless `size` is the listed size.
Status checkListedSize(const ListedFile &listed, int64_t size) {
  if (size != listed.bytes)
    return fail(listed.path, "holds " + std::to_string(size) + " bytes; expected " +
                                 std::to_string(listed.bytes) + " (truncated or replaced?)");
  return {};
}

/// The path of the artifact's `file`, once its size and CRC-32 match what
/// the manifest lists for it.
StatusOr<std::string> checkedFile(const std::string &file, const nlohmann::json &manifest,
                                  const std::string &directory) {
  auto listed = listedFile(file, manifest, directory);
  if (!listed)
    return listed.status();
  std::ifstream in(listed->path, std::ios::binary | std::ios::ate);
  if (!in)
    return fail(listed->path, "is missing; the artifact is incomplete");
  if (Status status = checkListedSize(*listed, static_cast<int64_t>(in.tellg())); !status)
    return status;
  if (Status status = io::verifyCrc32File(listed->path, listed->crc32); !status)
    return status;
  return listed->path;
}

/// Checks the sizes and CRC-32s the manifest lists, but for the other
/// ranks' programs and weights: each rank checks what it reads (N ranks
/// would otherwise read every file N times).
Status checkFiles(const nlohmann::json &manifest, const std::string &directory,
                  const std::set<std::string> &otherRanksFiles) {
  for (const auto &[file, facts] : object(member(manifest, "files", ""), "files").items())
    if (!otherRanksFiles.count(file))
      if (auto checked = checkedFile(file, manifest, directory); !checked)
        return checked.status();
  return {};
}

/// The program's mesh; it must have a device per rank of the manifest and
/// the axes the manifest's "mesh" lists.
StatusOr<MeshShape> meshOf(const schema::Program &program, const nlohmann::json &manifest,
                           const std::string &path, const std::string &manifestPath) {
  MeshShape mesh;
  if (program.mesh())
    for (const schema::MeshAxis *axis : *program.mesh()) {
      mesh.names.push_back(axis->name()->str());
      mesh.sizes.push_back(axis->size());
    }
  if (Status status = mesh.verify(); !status)
    return fail(path, status.message());
  size_t ranks = manifest.at("ranks").size();
  if (static_cast<uint64_t>(mesh.devices()) != ranks)
    return fail(path, "is for a mesh of " + std::to_string(mesh.devices()) + " device(s)" +
                          (mesh.names.empty() ? "" : " (" + mesh.describe() + ")") +
                          " but the manifest lists " + std::to_string(ranks) + " rank(s)");
  const nlohmann::json &axes = member(member(manifest, "mesh", ""), "axes", "mesh");
  bool same = axes.is_object() && axes.size() == mesh.names.size();
  for (size_t i = 0; same && i < mesh.names.size(); ++i)
    same = axes.contains(mesh.names[i]) && axes.at(mesh.names[i]).is_number_integer() &&
           axes.at(mesh.names[i]).get<int64_t>() == mesh.sizes[i];
  if (!same)
    return fail(manifestPath, "lists the mesh " + io::printable(axes.dump()) + " but " + path +
                                  " is for (" + io::printable(mesh.describe()) + ")");
  return mesh;
}

/// "dp=1,tp=0": the rank's coordinates, as errors name them.
std::string coordinatesText(const MeshShape &mesh, int rank) {
  std::vector<int64_t> coords = mesh.coordinates(rank);
  std::string text;
  for (size_t i = 0; i < coords.size(); ++i)
    text += (i ? "," : "") + mesh.names[i] + "=" + std::to_string(coords[i]);
  return text;
}

/// Whether the comma-separated decimal ranks of `list` ("0,2") name `rank`.
bool listsRank(const std::string &list, int rank) {
  const std::string wanted = std::to_string(rank);
  size_t begin = 0;
  while (begin <= list.size()) {
    size_t end = std::min(list.find(',', begin), list.size());
    if (list.compare(begin, end - begin, wanted) == 0)
      return true;
    begin = end + 1;
  }
  return false;
}

/// The manifest's entry for `rank` and the rank's weight file must both be
/// that rank's: files swapped between ranks (CRCs rewritten) are refused.
Status checkRankIdentity(const nlohmann::json &entry, const MeshShape &mesh, int rank,
                         const io::SafeTensorsFile &weights, const std::string &manifestPath) {
  std::vector<int64_t> coords = mesh.coordinates(rank);
  const nlohmann::json &listed = member(entry, "coords", "ranks[" + std::to_string(rank) + "]");
  bool same = listed.is_object() && listed.size() == coords.size();
  for (size_t i = 0; same && i < coords.size(); ++i)
    same = listed.contains(mesh.names[i]) && listed.at(mesh.names[i]).is_number_integer() &&
           listed.at(mesh.names[i]).get<int64_t>() == coords[i];
  if (!same)
    return fail(manifestPath, "gives rank " + std::to_string(rank) + " the coordinates " +
                                  io::printable(listed.dump()) + "; the mesh puts it at " +
                                  io::printable(coordinatesText(mesh, rank)));
  const io::SafeTensorsMetadata &metadata = weights.metadata();
  auto value = [&](const std::string &key) {
    auto found = metadata.find(key);
    return found == metadata.end() ? std::string("(none)") : io::printable(found->second);
  };
  // A file serves every rank its metadata lists: ranks that hold the same
  // blocks of every weight (data-parallel replicas) share one.
  auto ranks = metadata.find("ranks");
  if (value("mesh") != io::printable(mesh.describe()) || ranks == metadata.end() ||
      !listsRank(ranks->second, rank))
    return fail(weights.path(), "holds the weights of rank(s) " + value("ranks") + " of mesh (" +
                                    value("mesh") + "); expected rank " + std::to_string(rank) +
                                    " (" + io::printable(coordinatesText(mesh, rank)) +
                                    ") of mesh (" + io::printable(mesh.describe()) + ")");
  return {};
}

/// The program file's bytes, checked to be a shardc program.
StatusOr<std::vector<uint8_t>> readProgram(const std::string &path) {
  auto bytes = readFile(path);
  if (!bytes)
    return bytes.status();
  flatbuffers::Verifier verifier(bytes->data(), bytes->size());
  if (bytes->size() < flatbuffers::kFileIdentifierLength + sizeof(flatbuffers::uoffset_t) ||
      !schema::ProgramBufferHasIdentifier(bytes->data()) || !schema::VerifyProgramBuffer(verifier))
    return fail(path, "is not a shardc program (corrupted?)");
  return bytes;
}

/// The manifest as JSON, checked to be a shardc manifest of this version.
StatusOr<nlohmann::json> readManifest(const std::string &manifestPath) {
  auto manifestBytes = readFile(manifestPath);
  if (!manifestBytes)
    return manifestBytes.status();
  nlohmann::json manifest = nlohmann::json::parse(manifestBytes->begin(), manifestBytes->end(),
                                                  nullptr, /*allow_exceptions=*/false);
  if (manifest.is_discarded() || !manifest.is_object())
    return fail(manifestPath, "is not valid JSON");
  try {
    if (!manifest.contains("format") || manifest.at("format") != "shardc-artifact")
      return fail(manifestPath, "is not a shardc artifact manifest");
    int64_t version = integer(member(manifest, "version", ""), "version");
    if (version != kArtifactVersion)
      return fail(manifestPath, "artifact version " + std::to_string(version) +
                                    "; this shardrun reads version " +
                                    std::to_string(kArtifactVersion) + " (recompile the model)");
    if (array(member(manifest, "ranks", ""), "ranks").empty())
      return fail(manifestPath, "lists no ranks");
  } catch (const FieldError &error) {
    return error.status(manifestPath);
  }
  return manifest;
}

/// One program a rank runs and the files it reads.
struct RankProgram {
  int64_t stage = -1; ///< -1 outside a pipeline
  /// A pipeline program's part ("forward" unless named) and an update's level.
  std::string part = "forward";
  std::optional<int64_t> level;
  std::string program, weights;
  int64_t arenaBytes = -1; ///< what the manifest says (pipelines list it)
};

/// The programs the manifest's `ranks[rank]` entry lists: its one program,
/// or one per program of a pipeline rank's stages.
std::vector<RankProgram> programsOf(const nlohmann::json &manifest, size_t rank, bool pipeline) {
  const std::string at = "ranks[" + std::to_string(rank) + "]";
  const nlohmann::json &entry = manifest.at("ranks")[rank];
  if (!pipeline)
    return {{-1, "forward", std::nullopt, text(member(entry, "program", at), at + ".program"),
             text(member(entry, "weights", at), at + ".weights")}};
  std::vector<RankProgram> programs;
  const nlohmann::json &stages = array(member(entry, "stages", at), at + ".stages");
  for (size_t i = 0; i < stages.size(); ++i) {
    const std::string field = at + ".stages[" + std::to_string(i) + "]";
    const nlohmann::json &stage = stages[i];
    RankProgram program{integer(member(stage, "stage", field), field + ".stage"),
                        "forward",
                        std::nullopt,
                        text(member(stage, "program", field), field + ".program"),
                        text(member(stage, "weights", field), field + ".weights"),
                        integer(member(stage, "arena_bytes", field), field + ".arena_bytes")};
    if (stage.contains("part"))
      program.part = text(stage.at("part"), field + ".part");
    if (stage.contains("level"))
      program.level = integer(stage.at("level"), field + ".level");
    programs.push_back(std::move(program));
  }
  return programs;
}

std::vector<TensorSignature> tensorsOf(const std::vector<StageTensor> &side) {
  std::vector<TensorSignature> tensors;
  for (const StageTensor &entry : side)
    tensors.push_back(entry.tensor);
  return tensors;
}

/// Every rank of a pipeline lists exactly the programs of the stages its pp
/// coordinate holds, in the programs' order; no program file is named
/// twice, and a weight file only for one stage (the programs of a stage
/// share it, and so may the ranks of a stage: each checks that the file's
/// metadata lists it).
Status checkRankStages(const nlohmann::json &manifest, const PipelinePlan &plan,
                       const MeshShape &mesh, const std::string &manifestPath) {
  std::set<std::string> programs;
  std::map<std::string, int64_t> weightStages;
  const nlohmann::json &ranks = manifest.at("ranks");
  for (size_t rank = 0; rank < ranks.size(); ++rank) {
    const std::string at = "ranks[" + std::to_string(rank) + "].stages";
    const int coordinate = static_cast<int>(mesh.coordinates(rank)[plan.ppAxis]);
    const std::vector<int> expected = plan.programsAt(coordinate);
    const std::vector<RankProgram> listed = programsOf(manifest, rank, true);
    const std::string order = " (pp " + std::to_string(coordinate) + "'s programs in order)";
    if (listed.size() != expected.size())
      return fail(manifestPath, at + ": lists " + std::to_string(listed.size()) +
                                    " program(s); pp " + std::to_string(coordinate) + " runs " +
                                    std::to_string(expected.size()));
    for (size_t i = 0; i < listed.size(); ++i) {
      const std::string entry = at + "[" + std::to_string(i) + "]";
      const PipelineProgram &program = plan.programs[expected[i]];
      if (listed[i].stage != program.stage)
        return fail(manifestPath, entry + ".stage: " + std::to_string(listed[i].stage) +
                                      "; expected stage " + std::to_string(program.stage) +
                                      " (pp " + std::to_string(coordinate) +
                                      "'s stages in order)");
      const std::string part = programPartName(program.part);
      if (listed[i].part != part)
        return fail(manifestPath, entry + ".part: '" + io::printable(listed[i].part) +
                                      "'; expected '" + part + "'" + order);
      if (listed[i].level.has_value() != program.perStep() ||
          (listed[i].level && *listed[i].level != program.level))
        return fail(manifestPath,
                    entry + ".level: " +
                        (listed[i].level ? std::to_string(*listed[i].level) : "none") +
                        "; expected " +
                        (program.perStep() ? std::to_string(program.level) : "none") + order);
      if (listed[i].arenaBytes < 0)
        return fail(manifestPath, entry + ".arena_bytes: must not be negative");
      if (!programs.insert(listed[i].program).second)
        return fail(manifestPath, entry + ": the file '" + io::printable(listed[i].program) +
                                      "' is named twice in the ranks' stages");
      auto [weights, first] = weightStages.try_emplace(listed[i].weights, listed[i].stage);
      if (!first && weights->second != listed[i].stage)
        return fail(manifestPath, entry + ": the file '" + io::printable(listed[i].weights) +
                                      "' holds weights of stage " +
                                      std::to_string(weights->second) + ", not of stage " +
                                      std::to_string(listed[i].stage));
    }
  }
  return {};
}

/// The weight file `file`: the one `opened` holds, or else read here and
/// added to `opened`. It is read into memory of the process's own
/// (io::FileCopy), and the size and CRC-32 the manifest lists are compared
/// with that copy's: the bytes checked are the bytes every run reads. A
/// weight let go once packed and read back later is checked against that
/// same read (SafeTensorsFile::hold), so a file truncated or rewritten
/// afterwards changes no weight: at worst a read back is refused.
StatusOr<std::shared_ptr<const io::SafeTensorsFile>>
openWeights(const std::string &file, const nlohmann::json &manifest, const std::string &directory,
            OpenedWeightFiles *opened) {
  if (opened)
    if (auto found = opened->find(file); found != opened->end())
      return found->second;
  auto listed = listedFile(file, manifest, directory);
  if (!listed)
    return listed.status();
  auto copy = io::FileCopy::read(listed->path);
  if (!copy)
    return copy.status();
  if (Status status = checkListedSize(*listed, static_cast<int64_t>(copy->size())); !status)
    return status;
  if (Status status = io::matchCrc32(listed->path, listed->crc32, copy->crc32()); !status)
    return status;
  auto weights = io::SafeTensorsFile::parse(std::move(*copy));
  if (!weights)
    return weights.status();
  auto shared = std::make_shared<const io::SafeTensorsFile>(std::move(*weights));
  if (opened)
    opened->emplace(file, shared);
  return shared;
}

} // namespace

StatusOr<std::vector<Artifact>> loadStages(const ArtifactLayout &layout, int rank,
                                           OpenedWeightFiles *opened) {
  const std::string &directory = layout.directory;
  const nlohmann::json &manifest = *layout.manifest;
  const bool pipeline = layout.pipeline != nullptr;
  std::string manifestPath = join(directory, "manifest.json");
  std::vector<Artifact> artifacts;
  try {
    const nlohmann::json &ranks = manifest.at("ranks");
    if (rank < 0 || rank >= layout.ranks)
      return fail(manifestPath, "has " + std::to_string(layout.ranks) + " rank(s); rank " +
                                    std::to_string(rank) + " does not exist");
    const nlohmann::json &entry = ranks[rank];
    if (entry.contains("rank"))
      if (int64_t listed = integer(entry.at("rank"), "ranks[" + std::to_string(rank) + "].rank");
          listed != rank)
        return fail(manifestPath,
                    "lists rank " + std::to_string(listed) + " in place " + std::to_string(rank));
    const std::vector<RankProgram> mine = programsOf(manifest, rank, pipeline);
    // What each listed program is: the layout checked that the rank lists
    // its coordinate's programs in order.
    const std::vector<int> planned =
        pipeline ? layout.pipeline->programsAt(static_cast<int>(
                       layout.mesh.coordinates(rank)[layout.pipeline->ppAxis]))
                 : std::vector<int>();
    // The other ranks' files are theirs to check, the rank's own are checked
    // as they are read below, and what the layout checked is not read again.
    std::set<std::string> skipped = layout.checkedFiles;
    for (size_t other = 0; other < ranks.size(); ++other)
      for (const RankProgram &program : programsOf(manifest, other, pipeline)) {
        skipped.insert(program.program);
        skipped.insert(program.weights);
      }
    if (Status status = checkFiles(manifest, directory, skipped); !status)
      return status;
    for (size_t i = 0; i < mine.size(); ++i) {
      const RankProgram &files = mine[i];
      Artifact artifact;
      artifact.directory = directory;
      artifact.target = layout.target;
      artifact.ranks = layout.ranks;
      artifact.rank = rank;
      artifact.stage = static_cast<int>(files.stage);
      artifact.inputs = layout.inputs;
      artifact.outputs = layout.rankOutputs;
      if (pipeline) {
        artifact.inputs = tensorsOf(layout.pipeline->programs[planned[i]].inputs);
        artifact.outputs = tensorsOf(layout.pipeline->programs[planned[i]].outputs);
      }
      std::string programPath = join(directory, files.program);
      if (files.program == layout.firstProgramFile) {
        artifact.programBytes = *layout.firstProgram;
      } else {
        auto checked = checkedFile(files.program, manifest, directory);
        if (!checked)
          return checked.status();
        programPath = *checked;
        auto programBytes = readProgram(programPath);
        if (!programBytes)
          return programBytes.status();
        artifact.programBytes = std::move(*programBytes);
      }
      artifact.program = schema::GetProgram(artifact.programBytes.data());
      auto weights = openWeights(files.weights, manifest, directory, opened);
      if (!weights)
        return weights.status();
      artifact.weights = std::move(*weights);
      auto mesh = meshOf(*artifact.program, manifest, programPath, manifestPath);
      if (!mesh)
        return mesh.status();
      artifact.mesh = std::move(*mesh);
      if (Status status =
              checkRankIdentity(entry, artifact.mesh, rank, *artifact.weights, manifestPath);
          !status)
        return status;
      if (Status status = checkProgram(*artifact.program, artifact.inputs, artifact.outputs,
                                       *artifact.weights, programPath);
          !status)
        return status;
      if (pipeline && static_cast<uint64_t>(files.arenaBytes) != artifact.program->arena_bytes())
        return fail(manifestPath, "gives " + layout.pipeline->programName(planned[i]) +
                                      " of rank " + std::to_string(rank) + " arena_bytes " +
                                      std::to_string(files.arenaBytes) + " but " + programPath +
                                      " uses " + std::to_string(artifact.program->arena_bytes()));
      artifacts.push_back(std::move(artifact));
    }
  } catch (const FieldError &error) {
    return error.status(manifestPath);
  }
  return artifacts;
}

StatusOr<Artifact> loadArtifact(const ArtifactLayout &layout, int rank) {
  if (layout.pipeline)
    return fail(join(layout.directory, "manifest.json"),
                "is a pipeline artifact: each rank runs one program per stage");
  auto loaded = loadStages(layout, rank);
  if (!loaded)
    return loaded.status();
  return std::move(loaded->front());
}

std::string ArtifactLayout::describe() const {
  std::string text = std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks");
  if (!mesh.names.empty())
    text += " (mesh " + mesh.describe() + ")";
  return text;
}

StatusOr<ArtifactLayout> readArtifactLayout(const std::string &directory) {
  ArtifactLayout layout;
  layout.directory = directory;
  std::string manifestPath = join(directory, "manifest.json");
  auto manifest = readManifest(manifestPath);
  if (!manifest)
    return manifest.status();
  try {
    layout.target = text(member(*manifest, "target", ""), "target");
    // "sm_90" for a cuda artifact; absent or null for a cpu one.
    if (manifest->contains("cuda_arch") && manifest->at("cuda_arch").is_string())
      layout.cudaArch = manifest->at("cuda_arch").get<std::string>();
    if (manifest->contains("cuda_kernels") && manifest->at("cuda_kernels").is_string()) {
      const std::string file = manifest->at("cuda_kernels").get<std::string>();
      auto kernels = checkedFile(file, *manifest, directory);
      if (!kernels)
        return kernels.status();
      layout.cudaKernels = *kernels;
      layout.checkedFiles.insert(file);
    }
    layout.inputs = signatureOf(member(*manifest, "inputs", ""), "inputs");
    layout.outputs = signatureOf(member(*manifest, "outputs", ""), "outputs");
    const bool pipeline = manifest->contains("pipeline");
    layout.ranks = static_cast<int>(manifest->at("ranks").size());
    const std::vector<RankProgram> first = programsOf(*manifest, 0, pipeline);
    if (first.empty())
      return fail(manifestPath, "ranks[0].stages: lists no stage");
    layout.firstProgramFile = first.front().program;
    auto programPath = checkedFile(layout.firstProgramFile, *manifest, directory);
    if (!programPath)
      return programPath.status();
    auto programBytes = readProgram(*programPath);
    if (!programBytes)
      return programBytes.status();
    auto mesh =
        meshOf(*schema::GetProgram(programBytes->data()), *manifest, *programPath, manifestPath);
    if (!mesh)
      return mesh.status();
    layout.mesh = std::move(*mesh);
    if (Status status = readOutputSplits(manifest->at("outputs"), layout, manifestPath); !status)
      return status;
    auto training = parseTrainingSpec(*manifest, layout.inputs, layout.outputs, manifestPath);
    if (!training)
      return training.status();
    layout.training = std::move(*training);
    if (pipeline) {
      auto plan = parsePipelinePlan(*manifest, layout.mesh, layout.inputs, layout.rankOutputs,
                                    manifestPath);
      if (!plan)
        return plan.status();
      if (Status status = checkRankStages(*manifest, *plan, layout.mesh, manifestPath); !status)
        return status;
      layout.pipeline = std::make_shared<const PipelinePlan>(std::move(*plan));
    }
    layout.firstProgram = std::make_shared<const std::vector<uint8_t>>(std::move(*programBytes));
  } catch (const FieldError &error) {
    return error.status(manifestPath);
  }
  layout.manifest = std::make_shared<const nlohmann::json>(std::move(*manifest));
  return layout;
}

} // namespace shardc::rt
