//===- MeshAxes.h - what each mesh axis means -------------------*- C++ -*-===//
//
// The one place that gives the mesh's axis names their meaning: shardc's
// flags (--dp, --tp, --mesh), the sharding search's policies, the report and
// the limits ask it rather than spelling "dp" or "tp" themselves, so a new
// axis (pipeline stages, experts) is added here first.
//
// THE AXIS ORDER: meshes are built with their axes in the order below, and
// ranks enumerate the mesh with the last axis fastest (Mesh.h). Tensor
// parallelism comes last, so a tensor-parallel group is consecutive ranks
// (one node's NVLink), then experts, then data replicas, and pipeline stages
// outermost (a stage's dp x tp ranks stay together): on ["dp"=2, "tp"=2]
// rank 1 is (dp 0, tp 1), rank 2 (dp 1, tp 0).
//
// The micro-batch axis "mb" is the compiler's, never a device mesh's: the
// sharding search splits the batch over it like dp, and the runtime runs
// its pieces one after another through the pipeline (docs/pipeline.md).
//
// Hybrid sharding (`--zero-group G`, HSDP) cuts the data-parallel ranks in
// two: "dp" is the group of G ranks ZeRO splits the model state over, and
// "dpr" the replicas of that group, which split the batch like dp but hold
// whole copies of the group's state. dpr comes first, so a ZeRO group is
// consecutive ranks (one node) and only its all-reduce of gradient slices
// crosses nodes.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_MESHAXES_H
#define SHARDC_RUNTIME_CORE_MESHAXES_H

#include <optional>
#include <string>
#include <string_view>

namespace shardc::rt {

enum class AxisRole { Pipeline, MicroBatch, Replica, Data, Expert, Tensor };

struct MeshAxisKind {
  AxisRole role;
  /// The axis's name in meshes, flags and messages.
  const char *name;
  /// Whether a user may name it in a mesh (the micro-batch axis is internal).
  bool supported;
  /// Whether the axis splits the batch and never a weight (but the expert
  /// axis the experts' of a MoE).
  bool splitsBatch;
};

/// Every axis, in mesh order (the first varies slowest across ranks).
inline constexpr MeshAxisKind kMeshAxes[] = {
    {AxisRole::Pipeline, "pp", true, false},    // cuts the layers into stages
    {AxisRole::MicroBatch, "mb", false, true},  // the batch's pieces, in time
    {AxisRole::Replica, "dpr", true, true},     // splits the batch; ZeRO groups are repeated
    {AxisRole::Data, "dp", true, true},         // splits the batch; weights are repeated
    {AxisRole::Expert, "ep", true, true},       // splits the batch, and a MoE's experts
    {AxisRole::Tensor, "tp", true, false},      // splits every linear layer's weight
};

constexpr const char *axisName(AxisRole role) {
  for (const MeshAxisKind &axis : kMeshAxes)
    if (axis.role == role)
      return axis.name;
  return "";
}

inline constexpr const char *kPipelineAxis = axisName(AxisRole::Pipeline);
inline constexpr const char *kMicroBatchAxis = axisName(AxisRole::MicroBatch);
inline constexpr const char *kReplicaAxis = axisName(AxisRole::Replica);
inline constexpr const char *kDataAxis = axisName(AxisRole::Data);
inline constexpr const char *kExpertAxis = axisName(AxisRole::Expert);
inline constexpr const char *kTensorAxis = axisName(AxisRole::Tensor);

/// The axis named `name`, if shardc knows one by that name.
inline std::optional<MeshAxisKind> meshAxisNamed(std::string_view name) {
  for (const MeshAxisKind &axis : kMeshAxes)
    if (name == axis.name)
      return axis;
  return std::nullopt;
}

/// Whether the axis named `name` splits the batch (dp, dpr, ep, mb).
inline bool splitsBatch(std::string_view name) {
  auto axis = meshAxisNamed(name);
  return axis && axis->splitsBatch;
}

/// Whether the axis named `name` holds data-parallel replicas of the
/// model (dp, and HSDP's dpr): the ranks a batch is split over and a
/// training step's gradients are summed over.
inline bool holdsDataReplicas(std::string_view name) {
  auto axis = meshAxisNamed(name);
  return axis && (axis->role == AxisRole::Data || axis->role == AxisRole::Replica);
}

} // namespace shardc::rt

#endif
