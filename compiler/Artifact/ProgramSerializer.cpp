//===- ProgramSerializer.cpp - an exec function as a FlatBuffer -----------===//
#include "compiler/Artifact/ProgramSerializer.h"
#include "compiler/Artifact/ElementTypes.h"

#include "dialects/Dist/DistDialect.h"
#include "dialects/Exec/ExecDialect.h"
#include "dialects/Graph/GraphDialect.h"

#include "runtime/schemas/program_generated.h"

using namespace mlir;
namespace schema = shardc::schema;

namespace shardc::artifact {
namespace {

/// How a buffer's storage is used beyond its kind (program.fbs).
struct BufferUse {
  bool zeroInit = false;
  bool accumulator = false;
  int32_t microbatchDim = -1;
};

} // namespace

LogicalResult checkStorageWrites(ArrayRef<func::FuncOp> programs) {
  llvm::StringMap<int> writes;
  llvm::StringMap<exec::WeightOp> named;
  for (func::FuncOp program : programs) {
    program.walk([&](exec::KernelOp kernel) {
      for (Value output : kernel.getOutputs()) {
        while (auto view = output.getDefiningOp<exec::ViewOp>())
          output = view.getSource();
        if (auto weight = output.getDefiningOp<exec::WeightOp>())
          ++writes[weight.getName()];
      }
    });
    program.walk([&](exec::WeightOp weight) {
      if (weight->hasAttr(graph::kTrainAttrName))
        named.try_emplace(weight.getName(), weight);
    });
  }
  for (auto &[name, weight] : named)
    if (writes.lookup(name) != 1)
      return weight.emitOpError() << "is trained storage written " << writes.lookup(name)
                                  << " times by the step; expected once";
  return success();
}

namespace {

class Serializer {
public:
  FailureOr<std::vector<uint8_t>> run(func::FuncOp program, const sharding::MeshShape &mesh) {
    // A training pipeline's stage writes its storage in one of its
    // programs and reads it in others: checked over the stage (writeArtifact).
    if (!program->hasAttr(dist::kPartAttrName) && failed(checkStorageWrites(program)))
      return failure();
    // Only a program that runs its micro-batches itself cuts its inputs (a
    // pipeline stage's are cut by the runtime's action list).
    program.walk([&](exec::MicrobatchLoopEndOp) { cutsInputs = true; });
    for (Operation &op : program.getBody().front())
      if (failed(visit(op)))
        return failure();
    auto arena = program->getAttrOfType<IntegerAttr>(exec::kArenaBytesAttrName);
    if (!arena)
      return program.emitError() << "has no memory plan (run shardc-plan-memory)";
    std::vector<flatbuffers::Offset<schema::MeshAxis>> axes;
    for (auto [name, size] : llvm::zip(mesh.names, mesh.sizes))
      axes.push_back(schema::CreateMeshAxis(builder, builder.CreateString(name), size));
    auto root = schema::CreateProgram(builder, kProgramVersion, arena.getInt(),
                                      builder.CreateVector(buffers), builder.CreateVector(steps),
                                      builder.CreateVector(outputs), builder.CreateVector(axes),
                                      microbatches, microbatchSteps);
    schema::FinishProgramBuffer(builder, root);
    return std::vector<uint8_t>(builder.GetBufferPointer(),
                                builder.GetBufferPointer() + builder.GetSize());
  }

  /// Must match the runtime's reader (runtime/core/Artifact.h).
  static constexpr uint32_t kProgramVersion = 4;

private:
  /// A training step writes each parameter and optimizer state exactly once:
  /// a state no step writes would be trained storage a pass copied (its
  /// copy then never learns), two writes a race on it.

  LogicalResult addBuffer(Value value, schema::Storage storage, uint64_t offset, StringRef name,
                          uint32_t index, BufferUse use = {}) {
    auto type = cast<MemRefType>(value.getType());
    std::optional<schema::DType> dtype = schemaDType(type.getElementType());
    if (!dtype)
      return emitError(value.getLoc())
             << "buffer element type " << type.getElementType() << " has no runtime representation";
    ids[value] = buffers.size();
    buffers.push_back(schema::CreateBuffer(
        builder, storage, *dtype, builder.CreateVector(type.getShape().data(), type.getRank()),
        offset, name.empty() ? 0 : builder.CreateString(name.str()), index, use.zeroInit,
        use.accumulator, use.microbatchDim));
    return success();
  }

  LogicalResult visit(Operation &op) {
    if (auto input = dyn_cast<exec::InputOp>(op)) {
      BufferUse use;
      if (auto dim = input->getAttrOfType<IntegerAttr>(dist::kMicrobatchDimAttrName);
          dim && cutsInputs)
        use.microbatchDim = int32_t(dim.getInt());
      return addBuffer(input, schema::Storage::Input, 0, input.getName(), input.getIndex(), use);
    }
    if (auto weight = dyn_cast<exec::WeightOp>(op)) {
      // A training step's parameter (or its compute-type copy), optimizer
      // state or accumulator: the rank's own storage, kept across steps
      // (docs/training.md); states and accumulators start as zeros.
      StringRef role = graph::trainRole(weight);
      if (!role.empty())
        return addBuffer(weight, schema::Storage::State, 0, weight.getName(), 0,
                         {graph::startsAsZeros(role), role == graph::kTrainAccumulator});
      return addBuffer(weight, schema::Storage::Weight, 0, weight.getName(), 0);
    }
    if (auto end = dyn_cast<exec::MicrobatchLoopEndOp>(op)) {
      if (microbatches)
        return end.emitOpError() << "ends a second micro-batch loop; a program has one";
      microbatches = uint32_t(end.getMicrobatches());
      microbatchSteps = uint32_t(steps.size());
      return success();
    }
    if (auto constant = dyn_cast<exec::ConstantOp>(op))
      return addBuffer(constant, schema::Storage::Weight, 0, constant.getName(), 0);
    if (auto alloc = dyn_cast<exec::AllocOp>(op)) {
      if (!alloc.getOffset())
        return alloc.emitOpError() << "has no offset (run shardc-plan-memory)";
      return addBuffer(alloc, schema::Storage::Arena, *alloc.getOffset(), "", 0);
    }
    if (auto view = dyn_cast<exec::ViewOp>(op))
      return addBuffer(view, schema::Storage::View, 0, "", ids.lookup(view.getSource()));
    if (auto output = dyn_cast<exec::OutputOp>(op)) {
      outputs.push_back(schema::CreateOutput(builder, builder.CreateString(output.getName().str()),
                                             ids.lookup(output.getBuffer())));
      return success();
    }
    if (auto kernel = dyn_cast<exec::KernelOp>(op))
      return addStep(kernel);
    if (isa<func::ReturnOp>(op))
      return success();
    return op.emitOpError() << "cannot be serialized into a program";
  }

  LogicalResult addStep(exec::KernelOp kernel) {
    std::vector<uint32_t> inputs, outputs;
    for (Value input : kernel.getInputs())
      inputs.push_back(ids.lookup(input));
    for (Value output : kernel.getOutputs())
      outputs.push_back(ids.lookup(output));
    std::vector<flatbuffers::Offset<schema::Param>> params;
    for (NamedAttribute param : kernel.getParams()) {
      auto encoded = encodeParam(param);
      if (failed(encoded))
        return kernel.emitOpError()
               << "parameter '" << param.getName().getValue() << "' has no runtime representation";
      params.push_back(*encoded);
    }
    steps.push_back(schema::CreateStep(builder, builder.CreateString(kernel.getKernel().str()),
                                       builder.CreateVector(inputs), builder.CreateVector(outputs),
                                       builder.CreateVector(params),
                                       builder.CreateString(kernel.getSource().str())));
    return success();
  }

  /// Integers (bools, enums, arrays) as ints, floats as floats, strings as strings.
  FailureOr<flatbuffers::Offset<schema::Param>> encodeParam(NamedAttribute param) {
    std::vector<int64_t> ints;
    std::vector<double> floats;
    std::vector<std::string> strings;
    auto integer = [](IntegerAttr attr) {
      return attr.getType().isInteger(1) ? static_cast<int64_t>(attr.getValue().getZExtValue())
                                         : attr.getValue().getSExtValue();
    };
    Attribute value = param.getValue();
    if (auto attr = dyn_cast<IntegerAttr>(value))
      ints.push_back(integer(attr));
    else if (auto attr = dyn_cast<FloatAttr>(value))
      floats.push_back(attr.getValueAsDouble());
    else if (auto attr = dyn_cast<StringAttr>(value))
      strings.push_back(attr.str());
    else if (auto attr = dyn_cast<DenseI64ArrayAttr>(value))
      ints.assign(attr.asArrayRef().begin(), attr.asArrayRef().end());
    else if (auto array = dyn_cast<ArrayAttr>(value)) {
      for (Attribute element : array) {
        if (auto text = dyn_cast<StringAttr>(element))
          strings.push_back(text.str());
        else if (auto number = dyn_cast<IntegerAttr>(element))
          ints.push_back(integer(number));
        else
          return failure();
      }
    } else {
      return failure();
    }
    return schema::CreateParamDirect(builder, param.getName().str().c_str(), &ints, &floats,
                                     strings.empty() ? nullptr : &stringOffsets(strings));
  }

  std::vector<flatbuffers::Offset<flatbuffers::String>> &
  stringOffsets(const std::vector<std::string> &strings) {
    scratchStrings.clear();
    for (const std::string &text : strings)
      scratchStrings.push_back(builder.CreateString(text));
    return scratchStrings;
  }

  flatbuffers::FlatBufferBuilder builder;
  llvm::DenseMap<Value, uint32_t> ids;
  std::vector<flatbuffers::Offset<schema::Buffer>> buffers;
  std::vector<flatbuffers::Offset<schema::Step>> steps;
  std::vector<flatbuffers::Offset<schema::Output>> outputs;
  std::vector<flatbuffers::Offset<flatbuffers::String>> scratchStrings;
  /// The micro-batch loop (exec.microbatch_loop_end): none while 0.
  uint32_t microbatches = 0, microbatchSteps = 0;
  bool cutsInputs = false;
};

} // namespace

FailureOr<std::vector<uint8_t>> serializeProgram(func::FuncOp program,
                                                 const sharding::MeshShape &mesh) {
  return Serializer().run(program, mesh);
}

} // namespace shardc::artifact
