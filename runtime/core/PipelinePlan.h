//===- PipelinePlan.h - a pipeline artifact's schedule ----------*- C++ -*-===//
//
// The manifest's `pipeline` section (docs/pipeline.md) as the runtime uses
// it: the stages' programs and their signatures, the transfers between
// programs, how caller inputs and outputs are cut into micro-batches, and
// the action list of every pp coordinate. An inference pipeline has one
// forward program per stage; a training pipeline (the manifest has a
// "training" section) also backward and update programs per stage.
// parsePipelinePlan checks every field against the rest of the manifest,
// and runs each action list on paper, before anything runs: a manifest is
// hostile input, and a wrong index or order would otherwise surface as a
// hang between ranks.
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

/// A value one program produces and another takes, per micro-batch (per
/// step between update programs).
struct PipelineTransfer {
  int from = 0, to = 0; ///< the stages
  DType dtype = DType::F32;
  Shape shape;
  /// The programs (PipelinePlan::programs) that list it among their outputs
  /// and among their inputs: one each.
  int producer = -1, consumer = -1;
};

/// What part of a training step a stage's program is, in the order the
/// manifest sorts a stage's programs.
enum class ProgramPart { Forward, BackwardInput, BackwardWeight, Update };
/// "forward", "backward_input", "backward_weight", "update": the manifest's
/// name of the part and of the action that runs it.
const char *programPartName(ProgramPart part);
std::optional<ProgramPart> programPartFromName(const std::string &name);

/// One entry of a stage program's signature: a caller tensor, a transfer, or
/// the micro-batch index (an int64 [1] input the runtime fills with m, from
/// which a program that takes a caller input whole picks micro-batch m's rows).
struct StageTensor {
  TensorSignature tensor;
  int transfer = -1; ///< the transfer it is, or -1
  int caller = -1;   ///< else the caller input/output it is (the manifest's position)
  bool microbatchIndex = false;
};

/// One program of a stage: its part and signature (per micro-batch; an
/// update's per step).
struct PipelineProgram {
  int stage = 0;
  ProgramPart part = ProgramPart::Forward;
  int level = 0; ///< an update's (0 for the other parts)
  std::vector<StageTensor> inputs, outputs;

  /// An update runs once per step, the other parts once per micro-batch.
  bool perStep() const { return part == ProgramPart::Update; }
};

struct PipelineAction {
  /// The first four run the program of the part of the same name (in
  /// ProgramPart's order: part() converts).
  enum class Op { Forward, BackwardInput, BackwardWeight, Update, Send, Recv };
  Op op = Op::Forward;
  int stage = -1;    ///< the program's stage
  int level = 0;     ///< an update's level
  int program = -1;  ///< the program it runs (PipelinePlan::programs)
  int transfer = -1; ///< send and recv only
  int microbatch = 0; ///< 0 for an update and its transfers

  bool runs() const { return op != Op::Send && op != Op::Recv; }
  /// The part of the program a running action runs.
  ProgramPart part() const { return static_cast<ProgramPart>(op); }
  static Op runOf(ProgramPart part) { return static_cast<Op>(part); }
};

struct PipelinePlan {
  /// The manifest has a "training" section: backward and update programs
  /// and actions are allowed, and a transfer may stay on its rank.
  bool training = false;
  int stages = 1, microbatches = 1, virtualStages = 1;
  /// The size of the mesh's pp axis and its position in the mesh.
  int ppSize = 1, ppAxis = -1;
  std::string schedule;
  /// Per caller input / output (in the manifest's order): the dimension
  /// micro-batches cut, or none (whole to every micro-batch; an output
  /// keeps the last micro-batch's).
  std::vector<std::optional<int>> inputDims, outputDims;
  std::vector<PipelineTransfer> transfers;
  /// Sorted by stage, then part, then level, one of each (an inference
  /// pipeline's: one per stage, in stage order).
  std::vector<PipelineProgram> programs;
  std::vector<std::vector<PipelineAction>> actions; ///< by pp coordinate
  int outputRank = 0;

  /// The pp coordinate that holds `stage`.
  int coordinateOf(int stage) const { return stage % ppSize; }
  /// The stages a pp coordinate holds, in stage order.
  std::vector<int> stagesAt(int coordinate) const;
  /// The programs of those stages, in the programs' order (what the ranks
  /// with that coordinate list, Artifact.h).
  std::vector<int> programsAt(int coordinate) const;
  /// The program of (stage, part, level), or -1.
  int programOf(int stage, ProgramPart part, int level = 0) const;
  /// "stage 1" (a forward), "stage 1 backward_input", "stage 0 update level 2".
  std::string programName(int program) const;
  /// Whether transfer `t`'s two ends are on one pp coordinate, so the value
  /// can stay on the rank.
  bool staysOnRank(int transfer) const {
    return coordinateOf(transfers[transfer].from) == coordinateOf(transfers[transfer].to);
  }
};

/// The plan of `manifest` (which has a "pipeline" object, and a "training"
/// one for a training pipeline) for `mesh` and the caller signature
/// `inputs`/`outputs`; an error is one line naming `manifestPath` and the
/// field ("pipeline.transfers[2].to: ...").
StatusOr<PipelinePlan> parsePipelinePlan(const nlohmann::json &manifest, const MeshShape &mesh,
                                         const std::vector<TensorSignature> &inputs,
                                         const std::vector<TensorSignature> &outputs,
                                         const std::string &manifestPath);

/// `shape` with dimension `dim` divided by `pieces` (the micro-batch's).
Shape microbatchShape(Shape shape, std::optional<int> dim, int pieces);

} // namespace shardc::rt

#endif
