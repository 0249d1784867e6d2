//===- Checkpoint.cpp - a training run's state on disk --------------------===//
#include "runtime/session/Checkpoint.h"
#include "runtime/session/TensorBlocks.h"

#include "runtime/io/AtomicFile.h"
#include "runtime/io/Checksum.h"
#include "runtime/io/SafeTensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>

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

/// training.states (of an artifact manifest, or a checkpoint's index) for
/// `ranks` ranks: every block within its tensor; a rank's offsets are null
/// where it holds no block (a pipeline's other stages), and some rank holds
/// one.
StatusOr<std::vector<StateBlock>> parseStateIndex(const nlohmann::json &entries, int64_t ranks,
                                                  const std::string &where) {
  if (!entries.is_array())
    return Status::error(where + ": expected an array");
  std::vector<StateBlock> index;
  for (const nlohmann::json &entry : entries) {
    const std::string at = where + "[" + std::to_string(index.size()) + "]";
    StateBlock block;
    if (!entry.is_object() || !entry.value("buffer", nlohmann::json()).is_string() ||
        !entry.value("tensor", nlohmann::json()).is_string())
      return Status::error(at + ": expected an object with a buffer and a tensor");
    block.buffer = entry.at("buffer").get<std::string>();
    block.tensor = entry.at("tensor").get<std::string>();
    auto shape = shapeOf(entry.value("shape", nlohmann::json()));
    auto part = shapeOf(entry.value("block", nlohmann::json()));
    const nlohmann::json offsets = entry.value("offsets", nlohmann::json());
    if (!shape || !part || part->size() != shape->size() || !offsets.is_array() ||
        offsets.size() != static_cast<size_t>(ranks))
      return Status::error(at + ": expected a shape, a block of its rank and offsets for each of " +
                           std::to_string(ranks) + " ranks");
    bool held = false;
    for (const nlohmann::json &rankOffsets : offsets) {
      if (rankOffsets.is_null()) {
        block.offsets.push_back(std::nullopt);
        continue;
      }
      auto start = shapeOf(rankOffsets);
      if (!start || !fits(*start, *part, *shape))
        return Status::error(at + ": a block outside its tensor " + formatShape(*shape));
      block.offsets.push_back(*start);
      held = true;
    }
    if (!held)
      return Status::error(at + ": no rank holds '" + io::printable(block.buffer) + "'");
    block.shape = *shape;
    block.block = *part;
    index.push_back(std::move(block));
  }
  return index;
}

/// What a resharded resume needs the model to share: the caller's
/// signature and the loss and optimizer (the plan may differ).
bool sameModel(const nlohmann::json &saved, const nlohmann::json &here, std::string &differs) {
  for (const char *key : {"inputs", "outputs"})
    if (saved.value(key, nlohmann::json()) != here.value(key, nlohmann::json())) {
      differs = key;
      return false;
    }
  const nlohmann::json savedTraining = saved.value("training", nlohmann::json::object());
  const nlohmann::json training = here.value("training", nlohmann::json::object());
  for (const char *key : {"loss_spec", "optimizer"})
    if (!savedTraining.is_object() ||
        savedTraining.value(key, nlohmann::json()) != training.value(key, nlohmann::json())) {
      differs = std::string("training ") + key;
      return false;
    }
  return true;
}

StatusOr<Checkpoint> parseCheckpoint(const nlohmann::json &manifest, const std::string &directory,
                                     const ArtifactLayout &layout, const std::string &path) {
  auto fail = [&](const std::string &message) { return Status::error(path + ": " + message); };
  // A json() default: value("format", "") throws on a format that is no string.
  if (!manifest.is_object() || manifest.value("format", nlohmann::json()) != kCheckpointFormat)
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
  if (!ranks || *ranks < 1 || *ranks > (int64_t(1) << 20))
    return fail("ranks: expected a positive integer");
  const nlohmann::json expected = signatureOf(*layout.manifest);
  const nlohmann::json given = manifest.value("signature", nlohmann::json::object());
  bool same = *ranks == layout.ranks && given.is_object();
  for (const char *key : kSignatureKeys)
    same = same && given.value(key, nlohmann::json()) == expected.at(key);
  // Another plan of the same model resumes from the index of where each
  // state's blocks lie; without one (an older checkpoint or artifact) only
  // the artifact that saved it does.
  const nlohmann::json training = layout.manifest->value("training", nlohmann::json::object());
  if (!same && manifest.contains("index") && training.is_object() && training.contains("states")) {
    std::string differs;
    if (!given.is_object() || !sameModel(given, *layout.manifest, differs))
      return fail("was saved for an artifact whose " + differs +
                  " differ from this one's (another model or training setup)");
    auto index = parseStateIndex(manifest.at("index"), *ranks, "index");
    if (!index)
      return fail(index.message());
    checkpoint.resharded = true;
    checkpoint.index = std::move(*index);
  } else if (*ranks != layout.ranks) {
    return fail("holds the states of " + std::to_string(*ranks) + " rank(s); the artifact has " +
                layout.describe());
  } else if (!same) {
    for (const char *key : kSignatureKeys)
      if (!given.is_object() || given.value(key, nlohmann::json()) != expected.at(key))
        return fail(std::string("was saved for an artifact whose ") + key +
                    " differ from this one's (another model, mesh or training setup)");
  }
  const nlohmann::json files = manifest.value("files", nlohmann::json::object());
  for (int rank = 0; rank < *ranks; ++rank) {
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
  if (!files || !files->is_object() ||
      manifest.value("format", nlohmann::json()) != kCheckpointFormat)
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
                                         const StatePool &pool) {
  std::vector<io::NamedTensor> tensors;
  for (const StateTensor &state : pool.states()) {
    StatusOr<HostTensor> value = pool.readState(state.name);
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
  nlohmann::json manifest = {{"format", kCheckpointFormat},
                             {"version", kCheckpointVersion},
                             {"step", step},
                             {"ranks", layout.ranks},
                             {"signature", signatureOf(*layout.manifest)},
                             {"files", std::move(listed)}};
  const nlohmann::json training = layout.manifest->value("training", nlohmann::json::object());
  if (training.is_object() && training.contains("states"))
    manifest["index"] = training.at("states");
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

namespace {

/// Saved rank `rank`'s file, once its size, CRC-32 and metadata (rank and
/// step) are the checkpoint's.
StatusOr<io::SafeTensorsFile> openSavedFile(const Checkpoint &checkpoint, int rank) {
  const std::string path = join(checkpoint.directory, rankFile(rank));
  const CheckpointFile &facts = checkpoint.files.at(static_cast<size_t>(rank));
  std::optional<uint64_t> bytes = regularFileSize(path);
  if (!bytes)
    return Status::error(path + ": is missing; the checkpoint is incomplete");
  if (*bytes != facts.bytes)
    return Status::error(path + ": holds " + std::to_string(*bytes) + " bytes; expected " +
                         std::to_string(facts.bytes) + " (truncated or replaced?)");
  // The CRC-32 is the copy's, read once: what is checked is what is loaded.
  StatusOr<io::FileCopy> copy = io::FileCopy::read(path);
  if (!copy)
    return copy.status();
  if (Status status = io::matchCrc32(path, facts.crc32, copy->crc32()); !status)
    return status;
  StatusOr<io::SafeTensorsFile> file = io::SafeTensorsFile::parse(std::move(*copy));
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
  return file;
}

} // namespace

StatusOr<io::SafeTensorsFile> openRankStates(const Checkpoint &checkpoint, int rank,
                                             const StatePool &pool) {
  StatusOr<io::SafeTensorsFile> file = openSavedFile(checkpoint, rank);
  if (!file)
    return file.status();
  const std::string path = join(checkpoint.directory, rankFile(rank));
  for (const StateTensor &state : pool.states()) {
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
    if (!pool.findState(tensor.name))
      return Status::error(path + ": holds '" + io::printable(tensor.name) +
                           "', which is not a state of rank " + std::to_string(rank) +
                           "'s program");
  return file;
}

Status loadRankStates(const io::SafeTensorsFile &file, StatePool &pool) {
  for (const StateTensor &state : pool.states())
    if (Status status = pool.writeState(state.name, *file.find(state.name)); !status)
      return status;
  return {};
}

StatusOr<std::vector<StateBlock>> readStateIndex(const ArtifactLayout &layout) {
  const nlohmann::json training = layout.manifest->value("training", nlohmann::json::object());
  if (!training.is_object() || !training.contains("states"))
    return Status::error(layout.directory + "/manifest.json: training.states: missing");
  return parseStateIndex(training.at("states"), layout.ranks,
                         layout.directory + "/manifest.json: training.states");
}

Status loadReshardedStates(const Checkpoint &checkpoint, const std::vector<StateBlock> &mine,
                           int rank, StatePool &pool) {
  std::map<std::string, const StateBlock *> ownBlock;
  for (const StateBlock &block : mine)
    ownBlock[block.buffer] = &block;
  std::multimap<std::string, const StateBlock *> saved;
  for (const StateBlock &block : checkpoint.index)
    saved.emplace(block.tensor, &block);
  std::map<int, io::SafeTensorsFile> files;
  std::vector<std::pair<std::string, HostTensor>> values;
  for (const StateTensor &state : pool.states()) {
    auto own = ownBlock.find(state.name);
    if (own == ownBlock.end() || own->second->block != state.view.shape ||
        !own->second->offsets.at(static_cast<size_t>(rank)))
      return Status::error("state '" + io::printable(state.name) +
                           "': the artifact's index does not place it on rank " +
                           std::to_string(rank) + " (training.states)");
    const StateBlock &target = *own->second;
    const Shape &at = *target.offsets.at(static_cast<size_t>(rank));
    HostTensor value(state.view.dtype, state.view.shape);
    std::vector<uint8_t> covered(static_cast<size_t>(value.numel()), 0);
    auto [first, last] = saved.equal_range(target.tensor);
    if (first == last)
      return Status::error(checkpoint.directory + ": holds no tensor '" +
                           io::printable(target.tensor) + "' (state '" + io::printable(state.name) +
                           "' of this artifact)");
    for (auto it = first; it != last; ++it) {
      const StateBlock &source = *it->second;
      if (source.shape != target.shape)
        return Status::error(checkpoint.directory + ": tensor '" + io::printable(target.tensor) +
                             "' is " + formatShape(source.shape) + "; this artifact's is " +
                             formatShape(target.shape));
      // dp replicas of a block (and a pipeline stage's replica of a tied
      // weight) hold the same values.
      std::set<Shape> taken;
      for (size_t from = 0; from < source.offsets.size(); ++from) {
        if (!source.offsets[from] || !taken.insert(*source.offsets[from]).second)
          continue;
        const Shape &start = *source.offsets[from];
        bool overlaps = true;
        for (size_t dim = 0; dim < at.size(); ++dim)
          overlaps = overlaps && start[dim] < at[dim] + state.view.shape[dim] &&
                     at[dim] < start[dim] + source.block[dim];
        if (!overlaps || numElements(source.block) == 0)
          continue;
        int fromRank = static_cast<int>(from);
        if (!files.count(fromRank)) {
          StatusOr<io::SafeTensorsFile> file = openSavedFile(checkpoint, fromRank);
          if (!file)
            return file.status();
          files.emplace(fromRank, std::move(*file));
        }
        const TensorView *part = files.at(fromRank).find(source.buffer);
        if (!part || part->shape != source.block || part->dtype != state.view.dtype)
          return Status::error(join(checkpoint.directory, rankFile(fromRank)) + ": state '" +
                               io::printable(source.buffer) + "' is not the " +
                               dtypeName(state.view.dtype) + " " + formatShape(source.block) +
                               " block its index says");
        copyOverlap(static_cast<const std::byte *>(part->data), part->shape, start,
                    value.bytes.data(), value.shape, at, dtypeSize(value.dtype), &covered);
      }
    }
    int64_t got = std::count(covered.begin(), covered.end(), uint8_t(1));
    if (got != value.numel())
      return Status::error(checkpoint.directory + ": the saved blocks of '" +
                           io::printable(target.tensor) + "' cover " + std::to_string(got) +
                           " of the " + std::to_string(value.numel()) + " elements of state '" +
                           io::printable(state.name) + "'");
    values.emplace_back(state.name, std::move(value));
  }
  // Every state is put together before the first is overwritten.
  for (auto &[name, value] : values)
    if (Status status = pool.writeState(name, value.view()); !status)
      return status;
  return {};
}

} // namespace shardc::rt
