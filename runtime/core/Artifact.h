//===- Artifact.h - load and check a compiled artifact ----------*- C++ -*-===//
//
// An artifact directory (written by shardc, compiler/Artifact) holds
// manifest.json and, per rank, a program (FlatBuffer, runtime/schemas) and a
// weight file (safetensors). Loading checks the format version, every
// file's size and CRC-32, the program's identifier, version and structure,
// and that the weights hold every tensor the program names: any mismatch is
// one line naming the file and what is wrong.
//
// A pipeline artifact (docs/pipeline.md) gives each rank one program per
// program of the stages it holds (a training pipeline's stage has its
// forward, backward and update parts, which share the stage's weight file);
// its manifest's `pipeline` section is checked whole when the layout is
// read, and each program against its signature when the rank loads it. A training artifact's
// `training` section (TrainingSpec.h) is checked when the layout is read.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_ARTIFACT_H
#define SHARDC_RUNTIME_CORE_ARTIFACT_H

#include "runtime/core/Mesh.h"
#include "runtime/core/PipelinePlan.h"
#include "runtime/core/Status.h"
#include "runtime/core/Tensor.h"
#include "runtime/core/TrainingSpec.h"
#include "runtime/io/SafeTensors.h"
#include "runtime/schemas/program_generated.h"

#include <nlohmann/json_fwd.hpp>

#include <map>
#include <memory>
#include <set>
#include <optional>
#include <string>
#include <vector>

namespace shardc::rt {

/// The artifact format and program versions this runtime reads. Program
/// version 2 added the mesh, version 3 state buffers (training), version 4
/// micro-batch loops (accumulators, inputs cut per micro-batch); an older
/// program (no mesh: one device; no state) reads the same, so all are
/// accepted.
constexpr int kArtifactVersion = 2;
constexpr uint32_t kProgramVersion = 4;
constexpr uint32_t kOldestProgramVersion = 1;

struct Artifact {
  std::string directory;
  std::string target;
  int ranks = 1;
  /// The loaded rank and the mesh all ranks share (no axes: one device).
  int rank = 0;
  MeshShape mesh;
  /// The pipeline stage this program is part of, or -1 outside a pipeline.
  int stage = -1;
  /// The program's signature: the caller's, or a pipeline stage's.
  std::vector<TensorSignature> inputs, outputs;
  /// The loaded rank's program (points into programBytes) and weights,
  /// which other ranks of the process may share (OpenedWeightFiles).
  std::vector<uint8_t> programBytes;
  const schema::Program *program = nullptr;
  std::shared_ptr<const io::SafeTensorsFile> weights;
};

/// The weight files earlier loads of this process opened, by their name in
/// the manifest. Ranks whose blocks are equal share a file (artifact
/// version 2); ranks loaded into one process with the same map share its
/// copy too, so the file is read and checked once (and its weights held
/// and let go together, SafeTensorsFile::hold), and the CPU's packed
/// copies of its weights are made once (runtime/cpu/SharedPackedWeights.h).
using OpenedWeightFiles = std::map<std::string, std::shared_ptr<const io::SafeTensorsFile>>;

/// An output the program returns split along `dim` over batch axes (dp,
/// ep): `axes` are mesh positions, major first, and `pieces` their group
/// size. The runtime gathers the pieces onto the output rank.
struct OutputSplit {
  int dim = 0;
  std::vector<int> axes;
  int64_t pieces = 1;
};

/// What a launcher needs before it starts ranks: how many the artifact was
/// compiled for, on which mesh, for which target. Reads the manifest and
/// rank 0's program (not the weights), so it is cheap; every rank's load
/// then starts from it, so neither is read twice.
struct ArtifactLayout {
  std::string directory;
  std::string target;
  /// The GPU architecture a cuda artifact's kernels were built for ("sm_90");
  /// empty for other targets.
  std::string cudaArch;
  /// The fatbin of the kernels shardc generated for the fused steps (path,
  /// size and CRC checked); empty when there are none.
  std::string cudaKernels;
  int ranks = 1;
  MeshShape mesh;
  /// What the caller gives and gets: whole tensors, as the manifest lists them.
  std::vector<TensorSignature> inputs, outputs;
  /// Per output, the gather the runtime does (manifest outputs[i].gather).
  std::vector<std::optional<OutputSplit>> outputSplits;
  /// The outputs as each rank's program returns them: a gathered output's
  /// piece, the others whole.
  std::vector<TensorSignature> rankOutputs;
  /// The schedule of a pipeline artifact; null for any other.
  std::shared_ptr<const PipelinePlan> pipeline;
  /// What a training artifact's steps take and give (manifest "training");
  /// none for an inference artifact.
  std::optional<TrainingSpec> training;
  /// The rank that holds the whole outputs once a run ends (pipeline.output_rank; 0 otherwise).
  int outputRank() const { return pipeline ? pipeline->outputRank : 0; }
  /// "4 ranks (mesh dp=2, tp=2)", "1 rank", for messages.
  std::string describe() const;

  /// The parsed manifest, shared by every rank's load.
  std::shared_ptr<const nlohmann::json> manifest;
  /// Rank 0's program file (the manifest's name for it) and its checked
  /// bytes, which rank 0's load takes instead of reading the file again.
  std::string firstProgramFile;
  std::shared_ptr<const std::vector<uint8_t>> firstProgram;
  /// Files whose size and CRC-32 were checked here, not checked again.
  std::set<std::string> checkedFiles;
};
StatusOr<ArtifactLayout> readArtifactLayout(const std::string &directory);

/// Loads `rank`'s share of the artifact `layout` was read from: the rank's
/// program and weights (their sizes and CRC-32s checked, and every other
/// file the manifest lists but the other ranks' ones). A pipeline artifact's
/// rank holds several programs: load them with loadStages.
StatusOr<Artifact> loadArtifact(const ArtifactLayout &layout, int rank);

/// Every program `rank` runs: loadArtifact's one outside a pipeline, else
/// one per program of the stages the rank holds, in the programs' order
/// (PipelinePlan::programsAt). A weight file `opened`
/// holds is taken from it (already checked); one opened here is added.
StatusOr<std::vector<Artifact>> loadStages(const ArtifactLayout &layout, int rank,
                                           OpenedWeightFiles *opened = nullptr);

} // namespace shardc::rt

#endif
