//===- Artifact.cpp - load and check a compiled artifact ------------------===//
#include "runtime/core/Artifact.h"

#include "runtime/io/Checksum.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <set>

namespace shardc::rt {
namespace {

std::string join(const std::string &directory, const std::string &file) {
  return directory.empty() || directory.back() == '/' ? directory + file : directory + "/" + file;
}

Status fail(const std::string &file, const std::string &message) {
  return Status::error(file + ": " + message);
}

StatusOr<std::vector<uint8_t>> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail(path, "cannot be read (missing?)");
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

StatusOr<std::vector<TensorSignature>> signatureOf(const nlohmann::json &entries,
                                                   const std::string &manifest) {
  std::vector<TensorSignature> signature;
  for (const nlohmann::json &entry : entries) {
    std::optional<DType> dtype = dtypeFromName(entry.at("dtype").get<std::string>());
    if (!dtype)
      return fail(manifest, "unknown dtype '" + entry.at("dtype").get<std::string>() + "'");
    signature.push_back(
        {entry.at("name").get<std::string>(), *dtype, entry.at("shape").get<Shape>()});
  }
  return signature;
}

/// Checks `file`'s size and CRC-32 against the manifest's `facts`.
Status checkFile(const std::string &file, const nlohmann::json &facts,
                 const std::string &directory) {
  std::string path = join(directory, file);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    return fail(path, "is missing; the artifact is incomplete");
  auto size = static_cast<int64_t>(in.tellg());
  int64_t expected = facts.at("bytes").get<int64_t>();
  if (size != expected)
    return fail(path, "holds " + std::to_string(size) + " bytes; expected " +
                          std::to_string(expected) + " (truncated or replaced?)");
  if (io::Status status = io::verifyCrc32File(path, facts.at("crc32").get<std::string>());
      !status)
    return Status::error(status.error());
  return {};
}

/// Checks the sizes and CRC-32s the manifest lists, but for the other
/// ranks' programs and weights: each rank checks what it reads (N ranks
/// would otherwise read every file N times).
Status checkFiles(const nlohmann::json &files, const std::string &directory,
                  const std::set<std::string> &otherRanksFiles) {
  for (const auto &[file, facts] : files.items())
    if (!otherRanksFiles.count(file))
      if (Status status = checkFile(file, facts, directory); !status)
        return status;
  return {};
}

/// The program's mesh; it must have a device per rank of the manifest.
StatusOr<MeshShape> meshOf(const schema::Program &program, int ranks, const std::string &path) {
  MeshShape mesh;
  if (program.mesh())
    for (const schema::MeshAxis *axis : *program.mesh()) {
      mesh.names.push_back(axis->name()->str());
      mesh.sizes.push_back(axis->size());
    }
  if (Status status = mesh.verify(); !status)
    return fail(path, status.message());
  if (mesh.devices() != ranks)
    return fail(path, "is for a mesh of " + std::to_string(mesh.devices()) + " device(s)" +
                          (mesh.names.empty() ? "" : " (" + mesh.describe() + ")") +
                          " but the manifest lists " + std::to_string(ranks) + " rank(s)");
  return mesh;
}

/// The program file's bytes, checked to be a shardc program.
StatusOr<std::vector<uint8_t>> readProgram(const std::string &path) {
  auto bytes = readFile(path);
  if (!bytes)
    return bytes.status();
  flatbuffers::Verifier verifier(bytes->data(), bytes->size());
  if (!schema::ProgramBufferHasIdentifier(bytes->data()) || !schema::VerifyProgramBuffer(verifier))
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
    if (manifest.value("format", "") != "shardc-artifact")
      return fail(manifestPath, "is not a shardc artifact manifest");
    int version = manifest.at("version").get<int>();
    if (version != kArtifactVersion)
      return fail(manifestPath, "artifact version " + std::to_string(version) +
                                    "; this shardrun reads version " +
                                    std::to_string(kArtifactVersion) + " (recompile the model)");
    if (!manifest.at("ranks").is_array() || manifest.at("ranks").empty())
      return fail(manifestPath, "lists no ranks");
  } catch (const nlohmann::json::exception &error) {
    return fail(manifestPath, std::string("is malformed: ") + error.what());
  }
  return manifest;
}

/// Every buffer and step index in range, every input/weight named.
Status checkProgram(const schema::Program &program, const io::SafeTensorsFile &weights,
                    const std::string &path) {
  if (program.version() < kOldestProgramVersion || program.version() > kProgramVersion)
    return fail(path, "program version " + std::to_string(program.version()) + "; expected " +
                          std::to_string(kOldestProgramVersion) + " to " +
                          std::to_string(kProgramVersion));
  if (!program.buffers() || !program.steps())
    return fail(path, "has no buffers or steps");
  uint32_t buffers = program.buffers()->size();
  auto inRange = [&](const flatbuffers::Vector<uint32_t> *ids) {
    if (ids)
      for (uint32_t id : *ids)
        if (id >= buffers)
          return false;
    return true;
  };
  for (uint32_t i = 0; i < buffers; ++i) {
    const schema::Buffer *buffer = program.buffers()->Get(i);
    if (!buffer->shape())
      return fail(path, "buffer " + std::to_string(i) + " has no shape");
    if (buffer->storage() == schema::Storage::View && buffer->index() >= i)
      return fail(path, "view " + std::to_string(i) + " refers to a later buffer");
    if (buffer->storage() == schema::Storage::Weight &&
        (!buffer->name() || !weights.find(buffer->name()->str())))
      return fail(path, "weight '" + (buffer->name() ? buffer->name()->str() : std::string()) +
                            "' is missing from " + weights.path());
  }
  for (const schema::Step *step : *program.steps())
    if (!inRange(step->inputs()) || !inRange(step->outputs()))
      return fail(path, "step '" + step->kernel()->str() + "' refers to a missing buffer");
  if (program.outputs())
    for (const schema::Output *output : *program.outputs())
      if (output->buffer() >= buffers)
        return fail(path, "output '" + output->name()->str() + "' refers to a missing buffer");
  return {};
}

} // namespace

StatusOr<Artifact> loadArtifact(const std::string &directory, int rank) {
  Artifact artifact;
  artifact.directory = directory;
  artifact.rank = rank;
  std::string manifestPath = join(directory, "manifest.json");
  auto manifest = readManifest(manifestPath);
  if (!manifest)
    return manifest.status();
  try {
    artifact.target = manifest->at("target").get<std::string>();
    auto inputs = signatureOf(manifest->at("inputs"), manifestPath);
    auto outputs = signatureOf(manifest->at("outputs"), manifestPath);
    if (!inputs)
      return inputs.status();
    if (!outputs)
      return outputs.status();
    artifact.inputs = *inputs;
    artifact.outputs = *outputs;
    const nlohmann::json &ranks = manifest->at("ranks");
    artifact.ranks = static_cast<int>(ranks.size());
    if (rank < 0 || rank >= artifact.ranks)
      return fail(manifestPath, "has " + std::to_string(artifact.ranks) + " rank(s); rank " +
                                    std::to_string(rank) + " does not exist");
    const nlohmann::json &entry = ranks.at(rank);
    if (entry.contains("rank") && entry.at("rank").get<int>() != rank)
      return fail(manifestPath, "lists rank " + std::to_string(entry.at("rank").get<int>()) +
                                    " in place " + std::to_string(rank));
    const std::string programFile = entry.at("program").get<std::string>();
    const std::string weightsFile = entry.at("weights").get<std::string>();
    std::set<std::string> otherRanksFiles;
    for (const nlohmann::json &other : ranks)
      for (const char *key : {"program", "weights"})
        otherRanksFiles.insert(other.at(key).get<std::string>());
    otherRanksFiles.erase(programFile);
    otherRanksFiles.erase(weightsFile);
    if (Status status = checkFiles(manifest->at("files"), directory, otherRanksFiles); !status)
      return status;
    std::string programPath = join(directory, programFile);
    std::string weightsPath = join(directory, weightsFile);
    auto programBytes = readProgram(programPath);
    if (!programBytes)
      return programBytes.status();
    artifact.programBytes = std::move(*programBytes);
    artifact.program = schema::GetProgram(artifact.programBytes.data());
    auto weights = io::SafeTensorsFile::open(weightsPath);
    if (!weights)
      return Status::error(weights.error());
    artifact.weights = std::make_unique<io::SafeTensorsFile>(std::move(*weights));
    if (Status status = checkProgram(*artifact.program, *artifact.weights, programPath); !status)
      return status;
    auto mesh = meshOf(*artifact.program, artifact.ranks, programPath);
    if (!mesh)
      return mesh.status();
    artifact.mesh = std::move(*mesh);
  } catch (const nlohmann::json::exception &error) {
    return fail(manifestPath, std::string("is malformed: ") + error.what());
  }
  return artifact;
}

std::string ArtifactLayout::describe() const {
  std::string text = std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks");
  if (!mesh.names.empty())
    text += " (mesh " + mesh.describe() + ")";
  return text;
}

StatusOr<ArtifactLayout> readArtifactLayout(const std::string &directory) {
  ArtifactLayout layout;
  std::string manifestPath = join(directory, "manifest.json");
  auto manifest = readManifest(manifestPath);
  if (!manifest)
    return manifest.status();
  try {
    layout.target = manifest->at("target").get<std::string>();
    // "sm_90" for a cuda artifact; absent or null for a cpu one.
    if (manifest->contains("cuda_arch") && manifest->at("cuda_arch").is_string())
      layout.cudaArch = manifest->at("cuda_arch").get<std::string>();
    if (manifest->contains("cuda_kernels") && manifest->at("cuda_kernels").is_string()) {
      const std::string kernels = manifest->at("cuda_kernels").get<std::string>();
      if (Status status = checkFile(kernels, manifest->at("files").at(kernels), directory);
          !status)
        return status;
      layout.cudaKernels = directory + "/" + kernels;
    }
    layout.ranks = static_cast<int>(manifest->at("ranks").size());
    const std::string programFile = manifest->at("ranks").at(0).at("program").get<std::string>();
    if (Status status = checkFile(programFile, manifest->at("files").at(programFile), directory);
        !status)
      return status;
    std::string programPath = join(directory, programFile);
    auto programBytes = readProgram(programPath);
    if (!programBytes)
      return programBytes.status();
    auto mesh = meshOf(*schema::GetProgram(programBytes->data()), layout.ranks, programPath);
    if (!mesh)
      return mesh.status();
    layout.mesh = std::move(*mesh);
  } catch (const nlohmann::json::exception &error) {
    return fail(manifestPath, std::string("is malformed: ") + error.what());
  }
  return layout;
}

} // namespace shardc::rt
