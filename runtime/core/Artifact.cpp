//===- Artifact.cpp - load and check a compiled artifact ------------------===//
#include "runtime/core/Artifact.h"

#include "runtime/io/Checksum.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>

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

/// Checks the sizes and CRC-32s the manifest lists.
Status checkFiles(const nlohmann::json &files, const std::string &directory) {
  for (const auto &[file, facts] : files.items()) {
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
  }
  return {};
}

/// Every buffer and step index in range, every input/weight named.
Status checkProgram(const schema::Program &program, const io::SafeTensorsFile &weights,
                    const std::string &path) {
  if (program.version() != kProgramVersion)
    return fail(path, "program version " + std::to_string(program.version()) +
                          "; expected " + std::to_string(kProgramVersion));
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
  std::string manifestPath = join(directory, "manifest.json");
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
    artifact.target = manifest.at("target").get<std::string>();
    auto inputs = signatureOf(manifest.at("inputs"), manifestPath);
    auto outputs = signatureOf(manifest.at("outputs"), manifestPath);
    if (!inputs)
      return inputs.status();
    if (!outputs)
      return outputs.status();
    artifact.inputs = *inputs;
    artifact.outputs = *outputs;
    const nlohmann::json &ranks = manifest.at("ranks");
    artifact.ranks = static_cast<int>(ranks.size());
    if (rank < 0 || rank >= artifact.ranks)
      return fail(manifestPath, "has " + std::to_string(artifact.ranks) + " rank(s); rank " +
                                    std::to_string(rank) + " does not exist");
    if (Status status = checkFiles(manifest.at("files"), directory); !status)
      return status;
    const nlohmann::json &entry = ranks.at(rank);
    std::string programPath = join(directory, entry.at("program").get<std::string>());
    std::string weightsPath = join(directory, entry.at("weights").get<std::string>());
    auto programBytes = readFile(programPath);
    if (!programBytes)
      return programBytes.status();
    artifact.programBytes = std::move(*programBytes);
    flatbuffers::Verifier verifier(artifact.programBytes.data(), artifact.programBytes.size());
    if (!schema::ProgramBufferHasIdentifier(artifact.programBytes.data()) ||
        !schema::VerifyProgramBuffer(verifier))
      return fail(programPath, "is not a shardc program (corrupted?)");
    artifact.program = schema::GetProgram(artifact.programBytes.data());
    auto weights = io::SafeTensorsFile::open(weightsPath);
    if (!weights)
      return Status::error(weights.error());
    artifact.weights = std::make_unique<io::SafeTensorsFile>(std::move(*weights));
    if (Status status = checkProgram(*artifact.program, *artifact.weights, programPath); !status)
      return status;
  } catch (const nlohmann::json::exception &error) {
    return fail(manifestPath, std::string("is malformed: ") + error.what());
  }
  return artifact;
}

} // namespace shardc::rt
