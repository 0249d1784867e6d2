//===- ArtifactWriter.h - write the artifact shardrun loads -----*- C++ -*-===//
//
//   OUT/manifest.json        format, version, target, signature, mesh, ranks,
//                            file sizes and CRC-32s
//   OUT/rank{r}.program      the rank's exec program (FlatBuffer, runtime/schemas)
//   OUT/rank{r}.safetensors  the rank's weights and constants
//
// The directory appears only once complete: it is written beside OUT and
// renamed into place, replacing only an artifact shardc wrote
// (ArtifactDirectory.h).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_ARTIFACT_ARTIFACTWRITER_H
#define SHARDC_COMPILER_ARTIFACT_ARTIFACTWRITER_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace shardc::artifact {

/// The artifact format this compiler writes; the runtime refuses others.
constexpr int kArtifactVersion = 2;

/// The largest arena (per rank) an artifact may plan: 1 TiB, several times
/// any device's or host's memory today.
constexpr int64_t kMaxArenaBytes = int64_t(1) << 40;

struct ArtifactOptions {
  std::string target = "cpu";
  std::string cudaArch; ///< with target "cuda": "sm_90", ...
  std::string model;    ///< the source model's path, recorded in the manifest
};

/// Writes `module`'s exec program (after the memory plan) as an artifact
/// directory. Errors are emitted as diagnostics; nothing is left behind.
mlir::LogicalResult writeArtifact(mlir::ModuleOp module, llvm::StringRef directory,
                                  const ArtifactOptions &options);

} // namespace shardc::artifact

#endif
