//===- PipelinePlan.h - a pipeline artifact's schedule ----------*- C++ -*-===//
//
// The manifest's `pipeline` section (docs/pipeline.md) as the runtime uses
// it: the stages' program signatures, the transfers between stages, how
// caller inputs and outputs are cut into micro-batches, and the action list
// of every pp coordinate. parsePipelinePlan checks every field against the
// rest of the manifest before anything runs: a manifest is hostile input,
// and a wrong index would otherwise surface as a hang between ranks.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_PIPELINEPLAN_H
#define SHARDC_RUNTIME_CORE_PIPELINEPLAN_H

#include "runtime/core/Mesh.h"
#include "runtime/core/MeshAxes.h"
#include "runtime/core/Status.h"
#include "runtime/core/Tensor.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <vector>

namespace shardc::rt {

/// A value one stage produces and a later one takes, per micro-batch.
struct PipelineTransfer {
  int from = 0, to = 0;
  DType dtype = DType::F32;
  Shape shape;
};

/// One entry of a stage program's signature: a caller tensor, a transfer, or
/// the micro-batch index (an int64 [1] input the runtime fills with m, from
/// which a program that takes a caller input whole picks micro-batch m's rows).
struct StageTensor {
  TensorSignature tensor;
  int transfer = -1; ///< the transfer it is, or -1
  int caller = -1;   ///< else the caller input/output it is (the manifest's position)
  bool microbatchIndex = false;
};

struct StageSignature {
  std::vector<StageTensor> inputs, outputs;
};

struct PipelineAction {
  enum class Op { Forward, Send, Recv };
  Op op = Op::Forward;
  int stage = -1;    ///< forward only
  int transfer = -1; ///< send and recv only
  int microbatch = 0;
};

struct PipelinePlan {
  int stages = 1, microbatches = 1, virtualStages = 1;
  /// The size of the mesh's pp axis and its position in the mesh.
  int ppSize = 1, ppAxis = -1;
  std::string schedule;
  /// Per caller input / output (in the manifest's order): the dimension
  /// micro-batches cut, or none (whole to every micro-batch; an output
  /// keeps the last micro-batch's).
  std::vector<std::optional<int>> inputDims, outputDims;
  std::vector<PipelineTransfer> transfers;
  std::vector<StageSignature> programs;             ///< by stage
  std::vector<std::vector<PipelineAction>> actions; ///< by pp coordinate
  int outputRank = 0;

  /// The pp coordinate that holds `stage`.
  int coordinateOf(int stage) const { return stage % ppSize; }
  /// The stages a pp coordinate holds, in stage order.
  std::vector<int> stagesAt(int coordinate) const;
};

/// The plan of `manifest` (which has a "pipeline" object) for `mesh` and the
/// caller signature `inputs`/`outputs`; an error is one line naming
/// `manifestPath` and the field ("pipeline.transfers[2].to: ...").
StatusOr<PipelinePlan> parsePipelinePlan(const nlohmann::json &manifest, const MeshShape &mesh,
                                         const std::vector<TensorSignature> &inputs,
                                         const std::vector<TensorSignature> &outputs,
                                         const std::string &manifestPath);

/// `shape` with dimension `dim` divided by `pieces` (the micro-batch's).
Shape microbatchShape(Shape shape, std::optional<int> dim, int pieces);

} // namespace shardc::rt

#endif
