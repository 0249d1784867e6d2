//===- Checkpoint.cpp - a training run's state on disk --------------------===//
#include "runtime/session/Checkpoint.h"

#include "runtime/io/AtomicFile.h"
#include "runtime/io/Checksum.h"
#include "runtime/io/SafeTensors.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

#include <sys/stat.h>

namespace shardc::rt {
namespace {

/// Far above any checkpoint.json (a few hundred bytes per rank); a larger
/// file named so is not one.
constexpr off_t kMaxManifestBytes = 64 << 20;

constexpr const char *kManifestName = "checkpoint.json";

/// The manifest keys a checkpoint must share with the artifact it resumes in.
constexpr const char *kSignatureKeys[] = {"inputs", "outputs", "mesh", "training"};

std::string join(const std::string &directory, const std::string &file) {
  return directory.empty() || directory.back() == '/' ? directory + file : directory + "/" + file;
}

std::string rankFile(int rank) { return "rank" + std::to_string(rank) + ".safetensors"; }

nlohmann::json signatureOf(const nlohmann::json &manifest) {
  nlohmann::json signature = nlohmann::json::object();
  for (const char *key : kSignatureKeys)
    signature[key] = manifest.contains(key) ? manifest.at(key) : nlohmann::json();
  return signature;
}

/// The regular file `path`'s size; none when it is missing or anything else.
std::optional<uint64_t> regularFileSize(const std::string &path) {
  struct stat info;
  if (::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode))
    return std::nullopt;
  return static_cast<uint64_t>(info.st_size);
}

/// `path` parsed as JSON; null when it is no regular file of a manifest's
/// size or does not parse.
nlohmann::json readJson(const std::string &path) {
  std::optional<uint64_t> size = regularFileSize(path);
  if (!size || *size > static_cast<uint64_t>(kMaxManifestBytes))
    return nullptr;
  std::ifstream in(path, std::ios::binary);
  nlohmann::json parsed = nlohmann::json::parse(std::istreambuf_iterator<char>(in), {}, nullptr,
                                                /*allow_exceptions=*/false);
  return parsed.is_discarded() ? nlohmann::json() : parsed;
}

/// The integer `value` holds, unless it is not one.
std::optional<int64_t> integerOf(const nlohmann::json &value) {
  if (!value.is_number_integer())
    return std::nullopt;
  return value.get<int64_t>();
}

StatusOr<Checkpoint> parseCheckpoint(const nlohmann::json &manifest, const std::string &directory,
                                     const ArtifactLayout &layout, const std::string &path) {
  auto fail = [&](const std::string &message) { return Status::error(path + ": " + message); };
  if (!manifest.is_object() || manifest.value("format", "") != kCheckpointFormat)
    return fail("is not a shardc checkpoint");
  std::optional<int64_t> version = integerOf(manifest.value("version", nlohmann::json()));
  if (version != kCheckpointVersion)
    return fail("checkpoint version " +
                (version ? std::to_string(*version) : std::string("(none)")) +
                "; this runtime reads version " + std::to_string(kCheckpointVersion));
  Checkpoint checkpoint;
  checkpoint.directory = directory;
  std::optional<int64_t> step = integerOf(manifest.value("step", nlohmann::json()));
  if (!step || *step < 0)
    return fail("step: expected a non-negative integer");
  checkpoint.step = *step;
  std::optional<int64_t> ranks = integerOf(manifest.value("ranks", nlohmann::json()));
  if (ranks != layout.ranks)
    return fail("holds the states of " + (ranks ? std::to_string(*ranks) : std::string("(none)")) +
                " rank(s); the artifact has " + layout.describe());
  const nlohmann::json expected = signatureOf(*layout.manifest);
  const nlohmann::json given = manifest.value("signature", nlohmann::json::object());
  for (const char *key : kSignatureKeys)
    if (!given.is_object() || given.value(key, nlohmann::json()) != expected.at(key))
      return fail(std::string("was saved for an artifact whose ") + key +
                  " differ from this one's (another model, mesh or training setup)");
  const nlohmann::json files = manifest.value("files", nlohmann::json::object());
  for (int rank = 0; rank < layout.ranks; ++rank) {
    const std::string name = rankFile(rank);
    const nlohmann::json facts = files.is_object() ? files.value(name, nlohmann::json()) : nullptr;
    std::optional<int64_t> bytes =
        integerOf(facts.is_object() ? facts.value("bytes", nlohmann::json()) : nlohmann::json());
    if (!bytes || *bytes < 0 || !facts.value("crc32", nlohmann::json()).is_string())
      return fail("files: lacks the size and CRC-32 of '" + name + "'");
    checkpoint.files.push_back(
        {static_cast<uint64_t>(*bytes), facts.at("crc32").get<std::string>()});
  }
  return checkpoint;
}

} // namespace

Status checkReplaceableCheckpoint(const std::string &directory) {
  const nlohmann::json manifest = readJson(join(directory, kManifestName));
  if (manifest.is_null())
    return Status::error("exists and is not a shardc checkpoint (no checkpoint.json)");
  const nlohmann::json *files =
      manifest.is_object() && manifest.contains("files") ? &manifest.at("files") : nullptr;
  if (!files || !files->is_object() || manifest.value("format", "") != kCheckpointFormat)
    return Status::error("holds a checkpoint.json that is not a shardc checkpoint's");
  std::error_code error;
  for (const std::filesystem::directory_entry &entry :
       std::filesystem::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if (name != kManifestName && !files->contains(name))
      return Status::error("holds '" + io::printable(name) +
                           "', which is not a file of the checkpoint");
    if (!regularFileSize(entry.path().string()))
      return Status::error("holds '" + io::printable(name) + "', which is not a regular file");
  }
  if (error)
    return Status::error("cannot be listed: " + error.message());
  return {};
}

StatusOr<CheckpointFile> writeRankStates(const std::string &folder, int rank, int64_t step,
                                         const Executor &executor) {
  std::vector<io::NamedTensor> tensors;
  for (const StateTensor &state : executor.states()) {
    StatusOr<HostTensor> value = executor.readState(state.name);
    if (!value)
      return value.status();
    tensors.push_back({state.name, std::move(*value)});
  }
  const std::string path = join(folder, rankFile(rank));
  if (Status status = io::writeSafeTensors(path, tensors,
                                           {{"format", kCheckpointFormat},
                                            {"rank", std::to_string(rank)},
                                            {"step", std::to_string(step)}});
      !status)
    return status;
  std::optional<uint64_t> bytes = regularFileSize(path);
  StatusOr<std::string> crc = io::crc32File(path);
  if (!crc)
    return crc.status();
  if (!bytes)
    return Status::error(path + ": vanished once written");
  return CheckpointFile{*bytes, *crc};
}

Status writeCheckpointManifest(const std::string &folder, const ArtifactLayout &layout,
                               int64_t step, const std::vector<CheckpointFile> &files) {
  nlohmann::json listed = nlohmann::json::object();
  for (size_t rank = 0; rank < files.size(); ++rank)
    listed[rankFile(static_cast<int>(rank))] = {{"bytes", files[rank].bytes},
                                                {"crc32", files[rank].crc32}};
  const nlohmann::json manifest = {{"format", kCheckpointFormat},
                                   {"version", kCheckpointVersion},
                                   {"step", step},
                                   {"ranks", layout.ranks},
                                   {"signature", signatureOf(*layout.manifest)},
                                   {"files", std::move(listed)}};
  StatusOr<io::AtomicFile> file = io::AtomicFile::create(join(folder, kManifestName));
  if (!file)
    return file.status();
  if (Status status = file->write(manifest.dump(2) + "\n"); !status)
    return status;
  return file->commit();
}

StatusOr<Checkpoint> readCheckpoint(const std::string &directory, const ArtifactLayout &layout) {
  const std::string path = join(directory, kManifestName);
  if (!regularFileSize(path))
    return Status::error(path + ": is missing; '" + io::printable(directory) +
                         "' is not a shardc checkpoint");
  const nlohmann::json manifest = readJson(path);
  if (manifest.is_null())
    return Status::error(path + ": is not valid JSON");
  return parseCheckpoint(manifest, directory, layout, path);
}

StatusOr<io::SafeTensorsFile> openRankStates(const Checkpoint &checkpoint, int rank,
                                             const Executor &executor) {
  const std::string path = join(checkpoint.directory, rankFile(rank));
  const CheckpointFile &facts = checkpoint.files.at(static_cast<size_t>(rank));
  std::optional<uint64_t> bytes = regularFileSize(path);
  if (!bytes)
    return Status::error(path + ": is missing; the checkpoint is incomplete");
  if (*bytes != facts.bytes)
    return Status::error(path + ": holds " + std::to_string(*bytes) + " bytes; expected " +
                         std::to_string(facts.bytes) + " (truncated or replaced?)");
  if (Status status = io::verifyCrc32File(path, facts.crc32); !status)
    return status;
  StatusOr<io::SafeTensorsFile> file = io::SafeTensorsFile::open(path);
  if (!file)
    return file.status();
  const io::SafeTensorsMetadata &metadata = file->metadata();
  auto said = [&](const char *key) {
    auto found = metadata.find(key);
    return found == metadata.end() ? std::string("(none)") : found->second;
  };
  if (said("rank") != std::to_string(rank) || said("step") != std::to_string(checkpoint.step))
    return Status::error(path + ": holds the states of rank " + io::printable(said("rank")) +
                         " at step " + io::printable(said("step")) + "; expected rank " +
                         std::to_string(rank) + " at step " + std::to_string(checkpoint.step));
  for (const StateTensor &state : executor.states()) {
    const TensorView *value = file->find(state.name);
    if (!value)
      return Status::error(path + ": lacks the state '" + io::printable(state.name) + "'");
    if (value->dtype != state.view.dtype || value->shape != state.view.shape)
      return Status::error(path + ": state '" + io::printable(state.name) + "' is " +
                           dtypeName(value->dtype) + " " + formatShape(value->shape) +
                           "; the program's is " + dtypeName(state.view.dtype) + " " +
                           formatShape(state.view.shape));
  }
  for (const io::NamedView &tensor : file->tensors())
    if (!executor.findState(tensor.name))
      return Status::error(path + ": holds '" + io::printable(tensor.name) +
                           "', which is not a state of rank " + std::to_string(rank) +
                           "'s program");
  return file;
}

Status loadRankStates(const io::SafeTensorsFile &file, Executor &executor) {
  for (const StateTensor &state : executor.states())
    if (Status status = executor.writeState(state.name, *file.find(state.name)); !status)
      return status;
  return {};
}

} // namespace shardc::rt
