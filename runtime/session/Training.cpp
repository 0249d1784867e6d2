//===- Training.cpp - run a training artifact step by step, checkpoint it -===//
#include "runtime/session/Training.h"

#include "runtime/io/StagedDirectory.h"
#include "runtime/session/OnnxExport.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace shardc::rt {
namespace {

/// A line rank 0 tells every rank of `world` (a folder or an error), with
/// whether it is good news; the others' `ok` and `text` become rank 0's.
Status tellFromRankZero(Communicator &world, bool &ok, std::string &text) {
  char message[4096] = {};
  message[0] = ok ? 1 : 0;
  std::strncpy(message + 1, text.c_str(), sizeof(message) - 2);
  if (Status status = world.broadcast(message, sizeof(message), 0); !status)
    return status;
  ok = message[0] != 0;
  text = message + 1;
  return {};
}

/// What a rank tells the others of the file it wrote: its size and CRC-32,
/// or kFailed.
struct WrittenFile {
  uint64_t bytes = 0;
  char crc32[8] = {};
};
constexpr uint64_t kFailed = ~uint64_t(0);

/// What the rank that holds a block of an export tells the others before
/// its bytes: its type and shape (at most 16 dims, as manifests allow).
struct BlockHeader {
  int32_t ok = 0, dtype = 0, dimensions = 0, unused = 0;
  int64_t dims[16] = {};
};

} // namespace

Status checkTrainable(const ArtifactLayout &layout) {
  if (!layout.training)
    return Status::error(layout.directory +
                         ": is not a training artifact (its manifest has no \"training\"; "
                         "compile it with shardc --train)");
  return {};
}

StatusOr<std::unique_ptr<Training>> Training::prepare(const Session &session,
                                                      std::chrono::milliseconds timeout) {
  if (Status status = checkTrainable(session.layout()); !status)
    return status;
  std::unique_ptr<Training> training(new Training(session, *session.layout().training));
  auto ranks = ThreadedRanks::prepare(session, timeout);
  if (!ranks)
    return ranks.status();
  training->threads_ = std::move(*ranks);
  return training;
}

StatusOr<std::unique_ptr<Training>> Training::prepare(const Session &session, Communicator &world) {
  if (Status status = checkTrainable(session.layout()); !status)
    return status;
  if (world.onDevice())
    return Status::error("training coordinates its ranks' checkpoints over a host communicator "
                         "(MPI's); a device one (NCCL's) is not supported yet");
  std::unique_ptr<Training> training(new Training(session, *session.layout().training));
  auto rank = session.prepareRank(session.firstLoadedRank(), world);
  if (!rank)
    return rank.status();
  training->rank_ = std::move(*rank);
  training->world_ = &world;
  return training;
}

StatePool &Training::states(int index) {
  PreparedRank &rank = threads_ ? threads_->rank(index) : *rank_;
  if (PipelineRank *pipeline = rank.pipeline())
    return pipeline->states();
  return rank.executor()->statePool();
}

StepLoss Training::lossOf(const std::vector<HostTensor> &outputs) const {
  // Both float32 scalars (parseTrainingSpec), as the program returns them.
  StepLoss loss;
  std::memcpy(&loss.loss, outputs.at(spec_.lossOutput).bytes.data(), sizeof(float));
  std::memcpy(&loss.gradNorm, outputs.at(spec_.gradNormOutput).bytes.data(), sizeof(float));
  return loss;
}

Status Training::keep(Status status) {
  if (!status && broken_)
    broken_ = Status::error("the training failed after step " + std::to_string(steps_) +
                            ", and its states are lost: " + status.message());
  return status;
}

StatusOr<StepLoss> Training::step(const std::vector<const HostTensor *> &inputs) {
  if (!broken_)
    return broken_;
  const int outputRank = session_.outputRank();
  if (threads_) {
    if (Status status = keep(threads_->run(inputs, RunOptions{}, runs_)); !status)
      return status;
    ++steps_;
    return lossOf(runs_.at(static_cast<size_t>(outputRank - session_.firstLoadedRank())).outputs);
  }
  RankRun run;
  if (Status status = keep(rank_->run(inputs, RunOptions{}, run)); !status)
    return status;
  ++steps_;
  // Only the output rank may hold the outputs; every rank learns the loss.
  float values[2] = {};
  if (world_->rank() == outputRank) {
    const StepLoss loss = lossOf(run.outputs);
    values[0] = loss.loss;
    values[1] = loss.gradNorm;
  }
  if (Status status = keep(world_->broadcast(values, sizeof(values), outputRank)); !status)
    return status;
  return StepLoss{values[0], values[1]};
}

Status Training::save(const std::string &directory) {
  if (!broken_)
    return broken_;
  if (world_)
    return saveOnRank(directory);
  auto staging = io::StagedDirectory::create(directory, checkReplaceableCheckpoint);
  if (!staging)
    return staging.status();
  std::vector<CheckpointFile> files;
  for (int index = 0; index < threads_->size(); ++index) {
    auto file = writeRankStates((*staging)->path(), session_.firstLoadedRank() + index, steps_,
                                states(index));
    if (!file)
      return file.status();
    files.push_back(std::move(*file));
  }
  if (Status status = writeCheckpointManifest((*staging)->path(), session_.layout(), steps_, files);
      !status)
    return status;
  return (*staging)->commit();
}

Status Training::saveOnRank(const std::string &directory) {
  Communicator &world = *world_;
  // Rank 0 makes the staging folder (which it removes should the save fail).
  std::unique_ptr<io::StagedDirectory> staging;
  bool ok = false;
  std::string text;
  if (world.rank() == 0) {
    auto created = io::StagedDirectory::create(directory, checkReplaceableCheckpoint);
    ok = created.ok();
    text = ok ? (*created)->path() : created.message();
    if (ok)
      staging = std::move(*created);
  }
  if (Status status = tellFromRankZero(world, ok, text); !status)
    return status;
  if (!ok)
    return Status::error(text);
  const std::string folder = text;
  // Every rank writes its file; each learns whether all did.
  auto file = writeRankStates(folder, world.rank(), steps_, states(0));
  WrittenFile mine;
  mine.bytes = file ? file->bytes : kFailed;
  if (file)
    std::memcpy(mine.crc32, file->crc32.data(), std::min(file->crc32.size(), sizeof(mine.crc32)));
  std::vector<WrittenFile> written(static_cast<size_t>(world.size()));
  if (Status status = world.allGather(&mine, written.data(), sizeof(WrittenFile)); !status)
    return status;
  if (!file)
    return file.status();
  for (size_t rank = 0; rank < written.size(); ++rank)
    if (written[rank].bytes == kFailed)
      return Status::error("rank " + std::to_string(rank) +
                           " could not write its part of the checkpoint '" + directory + "'");
  // Rank 0 lists the files and moves the folder into place.
  if (world.rank() == 0) {
    std::vector<CheckpointFile> files;
    for (const WrittenFile &entry : written)
      files.push_back({entry.bytes, std::string(entry.crc32, sizeof(entry.crc32))});
    Status status = writeCheckpointManifest(folder, session_.layout(), steps_, files);
    if (status)
      status = staging->commit();
    ok = status.ok();
    text = status.message();
  }
  if (Status status = tellFromRankZero(world, ok, text); !status)
    return status;
  return ok ? Status() : Status::error(text);
}

Status Training::exportOnnx(const std::string &path) {
  if (!broken_)
    return broken_;
  StatusOr<ExportPlan> plan = readExportPlan(session_.layout());
  if (!plan)
    return plan.status();
  if (!world_) {
    auto values = assembleInitializers(*plan, [&](int rank, const std::string &buffer) {
      return states(rank - session_.firstLoadedRank()).readState(buffer);
    });
    if (!values)
      return values.status();
    return writeExport(*plan, *values, path);
  }
  // Every rank asks for the same blocks in the same order: the one that
  // holds each broadcasts its type and shape, then its bytes (a pipeline's
  // other ranks hold no such state), and rank 0 writes the file.
  Communicator &world = *world_;
  auto values =
      assembleInitializers(*plan, [&](int rank, const std::string &buffer) -> StatusOr<HostTensor> {
        StatusOr<HostTensor> block = HostTensor();
        BlockHeader header;
        if (world.rank() == rank) {
          block = states(0).readState(buffer);
          if (block && block->shape.size() <= std::size(header.dims)) {
            header.ok = 1;
            header.dtype = static_cast<int32_t>(block->dtype);
            header.dimensions = static_cast<int32_t>(block->shape.size());
            std::copy(block->shape.begin(), block->shape.end(), header.dims);
          }
        }
        if (Status status = world.broadcast(&header, sizeof(header), rank); !status)
          return status;
        if (!header.ok)
          return world.rank() == rank && !block
                     ? block.status()
                     : Status::error("rank " + std::to_string(rank) +
                                     " could not read its block of '" + buffer + "'");
        if (world.rank() != rank)
          block = HostTensor(static_cast<DType>(header.dtype),
                             Shape(header.dims, header.dims + header.dimensions));
        if (Status status = world.broadcast(block->bytes.data(), block->bytes.size(), rank);
            !status)
          return status;
        return block;
      });
  bool ok = values.ok();
  std::string text = values.ok() ? std::string() : values.message();
  if (ok && world.rank() == 0) {
    Status status = writeExport(*plan, *values, path);
    ok = status.ok();
    text = status.message();
  }
  if (Status status = tellFromRankZero(world, ok, text); !status)
    return status;
  return ok ? Status() : Status::error(text);
}

Status Training::resume(const Checkpoint &checkpoint) {
  if (!broken_)
    return broken_;
  const int ranks = threads_ ? threads_->size() : 1;
  if (checkpoint.resharded) {
    // Another plan's blocks: each rank puts its own together; a failure
    // part-way leaves states of no one step.
    StatusOr<std::vector<StateBlock>> mine = readStateIndex(session_.layout());
    if (!mine)
      return mine.status();
    for (int index = 0; index < ranks; ++index)
      if (Status status = keep(loadReshardedStates(
              checkpoint, *mine, session_.firstLoadedRank() + index, states(index)));
          !status)
        return status;
    steps_ = checkpoint.step;
    return {};
  }
  // Every file is checked before the first state is overwritten.
  std::vector<io::SafeTensorsFile> files;
  for (int index = 0; index < ranks; ++index) {
    auto file = openRankStates(checkpoint, session_.firstLoadedRank() + index, states(index));
    if (!file)
      return file.status();
    files.push_back(std::move(*file));
  }
  for (int index = 0; index < ranks; ++index)
    if (Status status = keep(loadRankStates(files[static_cast<size_t>(index)], states(index)));
        !status)
      return status;
  steps_ = checkpoint.step;
  return {};
}

} // namespace shardc::rt
