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
// (one node's NVLink), then experts, then pipeline stages, then data
// replicas: on ["dp"=2, "tp"=2] rank 1 is (dp 0, tp 1), rank 2 (dp 1, tp 0).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_MESHAXES_H
#define SHARDC_RUNTIME_CORE_MESHAXES_H

#include <optional>
#include <string>
#include <string_view>

namespace shardc::rt {

enum class AxisRole { Data, Pipeline, Expert, Tensor };

struct MeshAxisKind {
  AxisRole role;
  /// The axis's name in meshes, flags and messages.
  const char *name;
  /// Whether the compiler shards over it yet (pipeline and expert axes are
  /// named so that nothing else takes their names).
  bool supported;
};

/// Every axis, in mesh order (the first varies slowest across ranks).
inline constexpr MeshAxisKind kMeshAxes[] = {
    {AxisRole::Data, "dp", true},      // splits the batch; weights are repeated
    {AxisRole::Pipeline, "pp", false}, // will split the layers into stages
    {AxisRole::Expert, "ep", false},   // will split a mixture of experts' experts
    {AxisRole::Tensor, "tp", true},    // splits every linear layer's weight
};

constexpr const char *axisName(AxisRole role) {
  for (const MeshAxisKind &axis : kMeshAxes)
    if (axis.role == role)
      return axis.name;
  return "";
}

inline constexpr const char *kDataAxis = axisName(AxisRole::Data);
inline constexpr const char *kTensorAxis = axisName(AxisRole::Tensor);

/// The axis named `name`, if shardc knows one by that name.
inline std::optional<MeshAxisKind> meshAxisNamed(std::string_view name) {
  for (const MeshAxisKind &axis : kMeshAxes)
    if (name == axis.name)
      return axis;
  return std::nullopt;
}

/// "dp or tp": the axes the compiler shards over, for messages.
inline std::string supportedAxisNames() {
  std::string names;
  for (const MeshAxisKind &axis : kMeshAxes)
    if (axis.supported)
      names += (names.empty() ? "" : " or ") + std::string(axis.name);
  return names;
}

} // namespace shardc::rt

#endif
