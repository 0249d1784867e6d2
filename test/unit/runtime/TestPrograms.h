//===- TestPrograms.h - small exec programs built in a test -----*- C++ -*-===//
//
// The executor and pipeline tests write their programs with the FlatBuffers
// builder, as the compiler's artifact writer does; these are the pieces every
// such program has.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TEST_UNIT_RUNTIME_TESTPROGRAMS_H
#define SHARDC_TEST_UNIT_RUNTIME_TESTPROGRAMS_H

#include "runtime/core/Artifact.h"
#include "runtime/core/Mesh.h"
#include "runtime/core/Tensor.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace shardc::rt::test {

/// A collective step's `mesh_axes` parameter.
inline flatbuffers::Offset<schema::Param> meshAxesParam(flatbuffers::FlatBufferBuilder &b,
                                                        const std::vector<std::string> &axes) {
  std::vector<flatbuffers::Offset<flatbuffers::String>> names;
  for (const std::string &axis : axes)
    names.push_back(b.CreateString(axis));
  return schema::CreateParam(b, b.CreateString("mesh_axes"), 0, 0, b.CreateVector(names));
}

/// A training step's micro-batch loop: steps [0, steps) run `microbatches`
/// times (program.fbs).
struct MicrobatchLoop {
  uint32_t microbatches = 0;
  uint32_t steps = 0;
};

/// The bytes of the program of `mesh` with these buffers, steps and outputs
/// and an arena of `arenaBytes`.
inline std::vector<uint8_t>
finishProgram(flatbuffers::FlatBufferBuilder &b, uint64_t arenaBytes,
              const std::vector<flatbuffers::Offset<schema::Buffer>> &buffers,
              const std::vector<flatbuffers::Offset<schema::Step>> &steps,
              const std::vector<flatbuffers::Offset<schema::Output>> &outputs,
              const MeshShape &mesh, MicrobatchLoop loop = {}) {
  std::vector<flatbuffers::Offset<schema::MeshAxis>> axes;
  for (size_t i = 0; i < mesh.names.size(); ++i)
    axes.push_back(schema::CreateMeshAxisDirect(b, mesh.names[i].c_str(), mesh.sizes[i]));
  b.Finish(schema::CreateProgramDirect(b, kProgramVersion, arenaBytes, &buffers, &steps, &outputs,
                                       &axes, loop.microbatches, loop.steps),
           schema::ProgramIdentifier());
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

/// A float32 host tensor of `shape` holding `values`.
inline HostTensor floats(Shape shape, const std::vector<float> &values) {
  HostTensor tensor(DType::F32, std::move(shape));
  std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
  return tensor;
}

/// The values of a float32 host tensor.
inline std::vector<float> floatValues(const HostTensor &tensor) {
  std::vector<float> values(static_cast<size_t>(tensor.numel()));
  std::memcpy(values.data(), tensor.bytes.data(), tensor.bytes.size());
  return values;
}

} // namespace shardc::rt::test

#endif
