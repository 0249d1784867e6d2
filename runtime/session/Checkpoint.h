//===- Checkpoint.h - a training run's state on disk ------------*- C++ -*-===//
//
// A checkpoint is a folder: checkpoint.json and, per rank,
// rank{r}.safetensors with every state buffer the rank holds (parameters,
// optimizer state, the step counter; its StatePool's states: its program's,
// or a pipeline rank's stages') by name, bit for bit.
//
//   {"format": "shardc-checkpoint", "version": 1, "step": 12, "ranks": 2,
//    "signature": {"inputs": [...], "outputs": [...], "mesh": {...},
//                  "training": {...}},
//    "files": {"rank0.safetensors": {"bytes": 4160, "crc32": "0a1b2c3d"}, ...}}
//
// `signature` is the artifact manifest's inputs, outputs, mesh and training
// objects: a checkpoint resumes into an artifact with the same ones (the
// same model compiled the same way, for any target), and each rank's
// states must then match its file's tensors name for name, type and shape.
// Data-parallel replicas hold equal states but each writes its own file:
// a rank never depends on another's file to resume.
//
// The folder is written into a staging folder beside it and renamed into
// place (io/StagedDirectory.h); an existing folder is replaced only when it
// is a checkpoint holding nothing but its own files.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_SESSION_CHECKPOINT_H
#define SHARDC_RUNTIME_SESSION_CHECKPOINT_H

#include "runtime/core/Artifact.h"
#include "runtime/core/StatePool.h"
#include "runtime/io/SafeTensors.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardc::rt {

constexpr const char *kCheckpointFormat = "shardc-checkpoint";
constexpr int kCheckpointVersion = 1;

/// Whether the existing folder `directory` may be replaced by a checkpoint
/// (io::ReplaceCheck): it holds a checkpoint.json of this format and
/// besides it only regular files that it lists.
Status checkReplaceableCheckpoint(const std::string &directory);

/// A rank's file as checkpoint.json lists it.
struct CheckpointFile {
  uint64_t bytes = 0;
  std::string crc32;
};

/// Writes the states of `pool` (between runs) as `folder`/rank{rank}.safetensors,
/// the rank and `step` in its metadata; returns its size and CRC-32.
StatusOr<CheckpointFile> writeRankStates(const std::string &folder, int rank, int64_t step,
                                         const StatePool &pool);

/// Writes `folder`/checkpoint.json of a checkpoint of `layout`'s artifact
/// after `step` steps, whose rank r wrote files[r].
Status writeCheckpointManifest(const std::string &folder, const ArtifactLayout &layout,
                               int64_t step, const std::vector<CheckpointFile> &files);

/// Where one state buffer (a parameter, an optimizer state, the step
/// counter) lies in its tensor on every rank: the artifact manifest's
/// training.states, which a checkpoint keeps as its index.
struct StateBlock {
  std::string buffer, tensor;
  Shape shape; ///< the whole tensor's
  Shape block; ///< each rank's part of it
  /// By rank: where that part starts; none where the rank holds no part
  /// (null in the JSON: a pipeline rank holds its stages' states only).
  std::vector<std::optional<Shape>> offsets;
};

/// A checkpoint's checkpoint.json, checked against an artifact.
struct Checkpoint {
  std::string directory;
  int64_t step = 0;
  std::vector<CheckpointFile> files; ///< by the saving artifact's rank
  /// Saved by another plan of the same model (another mesh, ZeRO stage):
  /// each rank's states are put together from `index`'s blocks.
  bool resharded = false;
  std::vector<StateBlock> index;
};

/// Reads `directory`/checkpoint.json and checks it against `layout`: the
/// format and version, as many ranks, the same signature. One line naming
/// the file and what differs.
StatusOr<Checkpoint> readCheckpoint(const std::string &directory, const ArtifactLayout &layout);

/// Rank `rank`'s file of `checkpoint`, once its size and CRC-32 match and
/// it holds the states of `pool`: each by name, of its type and shape, and
/// nothing else. An error names the file and the tensor.
StatusOr<io::SafeTensorsFile> openRankStates(const Checkpoint &checkpoint, int rank,
                                             const StatePool &pool);

/// Overwrites the states of `pool` (between runs) with the tensors of their
/// names in `file` (openRankStates'), bit for bit.
Status loadRankStates(const io::SafeTensorsFile &file, StatePool &pool);

/// `layout`'s own index (its manifest's training.states).
StatusOr<std::vector<StateBlock>> readStateIndex(const ArtifactLayout &layout);

/// Overwrites the states of `pool`, rank `rank` of an artifact whose
/// index is `mine`, with the blocks of a resharded checkpoint: each state's
/// part is copied from the saved parts of its tensor that overlap it (each
/// file opened once, its size and CRC-32 checked). An error names the
/// state: no saved tensor of its name, another shape or type, or parts
/// that leave some of it uncovered.
Status loadReshardedStates(const Checkpoint &checkpoint, const std::vector<StateBlock> &mine,
                           int rank, StatePool &pool);

} // namespace shardc::rt

#endif
