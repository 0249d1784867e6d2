//===- Artifact.h - load and check a compiled artifact ----------*- C++ -*-===//
//
// An artifact directory (written by shardc, compiler/Artifact) holds
// manifest.json and, per rank, a program (FlatBuffer, runtime/schemas) and a
// weight file (safetensors). Loading checks the format version, every
// file's size and CRC-32, the program's identifier, version and structure,
// and that the weights hold every tensor the program names: any mismatch is
// one line naming the file and what is wrong.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_ARTIFACT_H
#define SHARDC_RUNTIME_CORE_ARTIFACT_H

#include "runtime/core/Mesh.h"
#include "runtime/core/Status.h"
#include "runtime/core/Tensor.h"
#include "runtime/io/SafeTensors.h"
#include "runtime/schemas/program_generated.h"

#include <memory>
#include <string>
#include <vector>

namespace shardc::rt {

/// The artifact format and program versions this runtime reads. Program
/// version 2 added the mesh; a version 1 program (no mesh, one device) reads
/// the same, so both are accepted.
constexpr int kArtifactVersion = 1;
constexpr uint32_t kProgramVersion = 2;
constexpr uint32_t kOldestProgramVersion = 1;

struct TensorSignature {
  std::string name;
  DType dtype;
  Shape shape;
};

struct Artifact {
  std::string directory;
  std::string target;
  int ranks = 1;
  /// The loaded rank and the mesh all ranks share (no axes: one device).
  int rank = 0;
  MeshShape mesh;
  std::vector<TensorSignature> inputs, outputs;
  /// The loaded rank's program (points into programBytes) and weights.
  std::vector<uint8_t> programBytes;
  const schema::Program *program = nullptr;
  std::unique_ptr<io::SafeTensorsFile> weights;
};

/// Loads `rank`'s share of the artifact in `directory`: the manifest, the
/// rank's program and weights (their sizes and CRC-32s checked).
StatusOr<Artifact> loadArtifact(const std::string &directory, int rank);

/// What a launcher needs before it starts ranks: how many the artifact was
/// compiled for, on which mesh, for which target. Reads the manifest and
/// rank 0's program (not the weights), so it is cheap.
struct ArtifactLayout {
  std::string target;
  /// The GPU architecture a cuda artifact's kernels were built for ("sm_90");
  /// empty for other targets.
  std::string cudaArch;
  /// The fatbin of the kernels shardc generated for the fused steps (path,
  /// size and CRC checked); empty when there are none.
  std::string cudaKernels;
  int ranks = 1;
  MeshShape mesh;
  /// "4 ranks (mesh dp=2, tp=2)", "1 rank", for messages.
  std::string describe() const;
};
StatusOr<ArtifactLayout> readArtifactLayout(const std::string &directory);

} // namespace shardc::rt

#endif
