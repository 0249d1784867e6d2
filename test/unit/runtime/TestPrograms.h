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
#include <utility>
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

/// A float32 buffer of a program that floatProgram builds.
struct BufferSpec {
  schema::Storage storage = schema::Storage::Arena;
  std::vector<int64_t> shape;
  uint64_t offset = 0;        ///< an arena buffer's
  const char *name = nullptr; ///< a weight's or a state's
  uint32_t index = 0;         ///< an input's
  bool zeroInit = false, accumulator = false;
};

/// A step of `kernel` on buffers, with integer parameters.
struct StepSpec {
  const char *kernel;
  std::vector<uint32_t> inputs, outputs;
  std::vector<std::pair<const char *, std::vector<int64_t>>> params = {};
};

/// The bytes of the float32 program of `mesh` with these buffers, steps and
/// outputs (name, buffer) and an arena of `arenaBytes`.
inline std::vector<uint8_t>
floatProgram(const std::vector<BufferSpec> &buffers, const std::vector<StepSpec> &steps,
             const std::vector<std::pair<const char *, uint32_t>> &outputs, const MeshShape &mesh,
             uint64_t arenaBytes = 256) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<schema::Buffer>> made;
  for (const BufferSpec &buffer : buffers)
    made.push_back(schema::CreateBufferDirect(b, buffer.storage, schema::DType::F32,
                                              &buffer.shape, buffer.offset, buffer.name,
                                              buffer.index, buffer.zeroInit, buffer.accumulator));
  std::vector<flatbuffers::Offset<schema::Step>> madeSteps;
  for (const StepSpec &step : steps) {
    std::vector<flatbuffers::Offset<schema::Param>> params;
    for (const auto &[key, ints] : step.params)
      params.push_back(schema::CreateParamDirect(b, key, &ints));
    madeSteps.push_back(schema::CreateStepDirect(b, step.kernel, &step.inputs, &step.outputs,
                                                 &params, step.kernel));
  }
  std::vector<flatbuffers::Offset<schema::Output>> madeOutputs;
  for (const auto &[name, buffer] : outputs)
    madeOutputs.push_back(schema::CreateOutputDirect(b, name, buffer));
  return finishProgram(b, arenaBytes, made, madeSteps, madeOutputs, mesh);
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
