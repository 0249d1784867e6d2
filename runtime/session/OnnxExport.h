//===- OnnxExport.h - a training artifact's trained model as ONNX -*- C++ -*-===//
//
// `shardrun --train --export-onnx OUT.onnx` (and Session.export_onnx) write
// the source model with every trained initializer holding its trained
// value, for onnxruntime or any ONNX runtime to deploy. What it needs is in
// the artifact (docs/training.md): the source model without the trained
// data (training.export.model) and, per trained buffer, its initializer,
// its box of it and the block of it each rank holds (training.parameters),
// plus the ties (training.ties): an initializer an export held twice, which
// gets the trained original (transposed where it was).
//
// The ranks' blocks are put back together into each initializer (data-
// parallel replicas hold the same block: the first rank's is read; in a
// pipeline only the ranks of the stages that hold a buffer have one), every
// element of a trained initializer must be covered, and the file is written
// atomically. An existing OUT is replaced only when it is an export
// shardrun wrote (its metadata_props has shardc.export).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_SESSION_ONNXEXPORT_H
#define SHARDC_RUNTIME_SESSION_ONNXEXPORT_H

#include "runtime/core/Artifact.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shardc::rt {

/// One trained buffer: the block of `shape` at `boxOffsets` of the
/// initializer of `storedShape`, of which rank r holds the block at
/// blocks[r] (its state's shape); none where r holds no block of it (a
/// pipeline rank holds its stages' buffers only).
struct ExportParameter {
  std::string buffer, initializer;
  Shape storedShape, boxOffsets, shape;
  std::vector<std::optional<Shape>> blocks;
  /// Stacked experts: the model's initializer of each slice along dim 0
  /// (`initializer` names the stack, which the model lacks).
  std::vector<std::string> parts;
};

/// The initializer `initializer` holds `of`'s value (transposed).
struct ExportTie {
  std::string initializer, of;
  bool transposed = false;
};

struct ExportPlan {
  std::string modelPath; ///< the embedded model, in the artifact
  uint64_t modelBytes = 0;
  std::string modelCrc32;
  std::vector<ExportParameter> parameters;
  std::vector<ExportTie> ties;
};

/// The export section of `layout`'s training artifact, checked: one line
/// naming the manifest and what is wrong or missing (an artifact of an
/// older shardc, one whose model could not be embedded: the compiler's
/// reason).
StatusOr<ExportPlan> readExportPlan(const ArtifactLayout &layout);

/// Rank `rank`'s block of the trained buffer `buffer` (its state; a rank
/// the plan places a block of it on).
using ReadBlock = std::function<StatusOr<HostTensor>(int rank, const std::string &buffer)>;

/// The trained value of every initializer the plan writes, ties included,
/// from the blocks `read` gives. It asks for the blocks in the plan's
/// order, each distinct block of each buffer once (under MPI every rank
/// asks alike).
StatusOr<std::map<std::string, HostTensor>> assembleInitializers(const ExportPlan &plan,
                                                                 const ReadBlock &read);

/// Whether `path` may be written: a new file in a folder that exists, or an
/// export shardrun wrote (checked before training too, so that a run does
/// not end in an export it cannot write).
Status checkExportDestination(const std::string &path);

/// Checks that `path` may be written (checkExportDestination), then writes the embedded model with `values` there, atomically.
Status writeExport(const ExportPlan &plan, const std::map<std::string, HostTensor> &values,
                   const std::string &path);

} // namespace shardc::rt

#endif
