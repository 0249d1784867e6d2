//===- ProgramChecks.cpp - a rank's program checked before it runs --------===//
#include "runtime/core/ProgramChecks.h"

#include "runtime/core/Artifact.h"
#include "runtime/io/ByteOrder.h"
#include "runtime/io/TensorBytes.h"

#include <cstdint>
#include <map>
#include <optional>

namespace shardc::rt {
namespace {

/// "float32 [2, 16]", for messages.
std::string describe(DType dtype, const Shape &shape) {
  return std::string(dtypeName(dtype)) + " " + formatShape(shape);
}

/// Whether a vector's elements are aligned for loads of T. FlatBuffers'
/// verifier checks the length field's alignment only, so a hostile file can
/// place a vector of 8-byte elements at an address that is 4 mod 8. (An
/// empty one may sit anywhere: the builder writes them so.)
template <typename T> bool aligned(const flatbuffers::Vector<T> *vector) {
  return !vector || vector->size() == 0 ||
         reinterpret_cast<uintptr_t>(vector->Data()) % alignof(T) == 0;
}

/// The checks of one program, buffer by buffer, then step by step. A
/// buffer's `root` is the buffer whose memory it is (itself but for views);
/// a root is `written` once a step wrote it, or from the start when its
/// bytes come from the caller, the weight file or a state's initial value.
class ProgramChecker {
public:
  ProgramChecker(const schema::Program &program, const std::vector<TensorSignature> &inputs,
                 const std::vector<TensorSignature> &outputs, const io::SafeTensorsFile &weights,
                 const std::string &path)
      : program(program), inputs(inputs), outputs(outputs), weights(weights), path(path) {}

  Status run() {
    if (program.version() < kOldestProgramVersion || program.version() > kProgramVersion)
      return fail("program version " + std::to_string(program.version()) + "; expected " +
                  std::to_string(kOldestProgramVersion) + " to " +
                  std::to_string(kProgramVersion));
    if (!program.buffers() || !program.steps())
      return fail("has no buffers or steps");
    if (program.microbatch_steps() > program.steps()->size())
      return fail("its micro-batch loop ends after step " +
                  std::to_string(program.microbatch_steps()) + " of " +
                  std::to_string(program.steps()->size()));
    if (program.arena_bytes() > static_cast<uint64_t>(INT64_MAX))
      return fail("arena of " + std::to_string(program.arena_bytes()) + " bytes is too large");
    std::vector<bool> boundInputs(inputs.size(), false);
    for (uint32_t id = 0; id < program.buffers()->size(); ++id)
      if (Status status = checkBuffer(id, boundInputs); !status)
        return status;
    for (size_t index = 0; index < inputs.size(); ++index)
      if (!boundInputs[index])
        return fail("the manifest's input '" + io::printable(inputs[index].name) +
                    "' has no buffer");
    for (uint32_t index = 0; index < program.steps()->size(); ++index)
      if (Status status = checkStep(index); !status)
        return status;
    return checkOutputs();
  }

private:
  Status fail(const std::string &message) const {
    return Status::error(path + ": " + message);
  }

  Status checkBuffer(uint32_t id, std::vector<bool> &boundInputs) {
    const schema::Buffer &buffer = *program.buffers()->Get(id);
    std::string where = "buffer " + std::to_string(id);
    if (buffer.dtype() > schema::DType::MAX)
      return fail(where + " has an unknown element type");
    if (!buffer.shape())
      return fail(where + " has no shape");
    if (!aligned(buffer.shape()))
      return fail(where + " has a misaligned shape");
    DType dtype = static_cast<DType>(buffer.dtype());
    Shape shape(buffer.shape()->begin(), buffer.shape()->end());
    std::optional<uint64_t> bytes = io::checkedByteCount(dtype, shape);
    if (!bytes)
      return fail(where + " has the shape " + formatShape(shape) +
                  ", whose byte count is negative or too large");
    uint32_t root = id;
    bool written = false;
    switch (buffer.storage()) {
    case schema::Storage::Arena:
      if (!io::inRange(buffer.offset(), *bytes, program.arena_bytes()))
        return fail(where + " (" + std::to_string(*bytes) + " bytes at offset " +
                    std::to_string(buffer.offset()) + ") lies outside the arena of " +
                    std::to_string(program.arena_bytes()) + " bytes");
      break;
    case schema::Storage::Weight: {
      std::string name = io::printable(buffer.name() ? buffer.name()->str() : std::string());
      const TensorView *weight = weights.find(buffer.name() ? buffer.name()->str() : "");
      if (!weight)
        return fail("weight '" + name + "' is missing from " + weights.path());
      if (weight->dtype != dtype || weight->shape != shape)
        return fail("weight '" + name + "' is " + describe(weight->dtype, weight->shape) +
                    " in " + weights.path() + "; the program expects " + describe(dtype, shape));
      written = true;
      break;
    }
    case schema::Storage::Input: {
      if (buffer.index() >= inputs.size())
        return fail(where + " is input " + std::to_string(buffer.index()) +
                    ", which the manifest lacks");
      const TensorSignature &input = inputs[buffer.index()];
      if (Status status = checkMicrobatchDim(buffer, input, where); !status)
        return status;
      // A micro-batch's piece of the input the caller gives whole.
      Shape piece = input.shape;
      if (buffer.microbatch_dim() >= 0)
        piece[size_t(buffer.microbatch_dim())] /= int64_t(program.microbatches());
      if (input.dtype != dtype || piece != shape)
        return fail(where + " is input '" + io::printable(input.name) + "' as " +
                    describe(dtype, shape) + "; the manifest declares " +
                    describe(input.dtype, input.shape) +
                    (buffer.microbatch_dim() >= 0
                         ? " in " + std::to_string(program.microbatches()) + " micro-batches"
                         : std::string()));
      boundInputs[buffer.index()] = true;
      written = true;
      break;
    }
    case schema::Storage::State:
      if (buffer.accumulator() && !buffer.zero_init())
        return fail(where + " is an accumulator that does not start as zeros");
      if (Status status = checkState(id, dtype, shape); !status)
        return status;
      written = true;
      break;
    case schema::Storage::View: {
      if (buffer.index() >= id)
        return fail("view " + std::to_string(id) + " refers to a later buffer");
      const schema::Buffer &source = *program.buffers()->Get(buffer.index());
      if (source.dtype() != buffer.dtype() ||
          io::checkedByteCount(dtype, Shape(source.shape()->begin(), source.shape()->end())) !=
              bytes)
        return fail("view " + std::to_string(id) + " changes the element type or count");
      root = roots[buffer.index()];
      break;
    }
    default:
      return fail(where + " has an unknown storage kind");
    }
    roots.push_back(root);
    writtenRoots.push_back(written); // only roots' entries are read
    return {};
  }

  /// A state starts as the weight file's tensor of its name (checked like a
  /// weight's) or as zeros; buffers that name one state must agree on it,
  /// since they share its memory.
  Status checkState(uint32_t id, DType dtype, const Shape &shape) {
    const schema::Buffer &buffer = *program.buffers()->Get(id);
    const std::string name = buffer.name() ? buffer.name()->str() : std::string();
    if (name.empty())
      return fail("buffer " + std::to_string(id) + " is a state without a name");
    if (!buffer.zero_init()) {
      const TensorView *initial = weights.find(name);
      if (!initial)
        return fail("state '" + io::printable(name) + "' is missing from " + weights.path() +
                    " (and is not zero_init)");
      if (initial->dtype != dtype || initial->shape != shape)
        return fail("state '" + io::printable(name) + "' is " +
                    describe(initial->dtype, initial->shape) + " in " + weights.path() +
                    "; the program expects " + describe(dtype, shape));
    }
    auto [first, added] = states.try_emplace(name, id);
    if (added)
      return {};
    const schema::Buffer &other = *program.buffers()->Get(first->second);
    if (other.dtype() != buffer.dtype() ||
        Shape(other.shape()->begin(), other.shape()->end()) != shape ||
        other.zero_init() != buffer.zero_init())
      return fail("buffers " + std::to_string(first->second) + " and " + std::to_string(id) +
                  " are the state '" + io::printable(name) +
                  "' with another element type, shape or initial value");
    return {};
  }

  /// An input cut into micro-batches: the program runs them (a loop of
  /// steps), along a dim the input has, which they divide.
  Status checkMicrobatchDim(const schema::Buffer &buffer, const TensorSignature &input,
                            const std::string &where) const {
    int32_t dim = buffer.microbatch_dim();
    if (dim < 0)
      return dim == -1 ? Status() : fail(where + " has a negative micro-batch dim");
    if (program.microbatches() < 2)
      return fail(where + " is cut into micro-batches, but the program runs none");
    if (size_t(dim) >= input.shape.size() ||
        input.shape[size_t(dim)] % int64_t(program.microbatches()) != 0)
      return fail(where + " cuts input '" + io::printable(input.name) + "' " +
                  formatShape(input.shape) + " along dim " + std::to_string(dim) + " into " +
                  std::to_string(program.microbatches()) + " micro-batches, which it does not have");
    return {};
  }

  bool isWritten(uint32_t id) const { return writtenRoots[roots[id]]; }

  Status checkStep(uint32_t index) {
    const schema::Step &step = *program.steps()->Get(index);
    std::string where =
        "step " + std::to_string(index) + " (" + io::printable(step.kernel()->str()) + ")";
    uint32_t count = program.buffers()->size();
    if (step.params())
      for (const schema::Param *param : *step.params())
        if (!aligned(param->ints()) || !aligned(param->floats()))
          return fail(where + " has a misaligned parameter '" + io::printable(param->key()->str()) +
                      "'");
    if (step.inputs())
      for (uint32_t id : *step.inputs()) {
        if (id >= count)
          return fail(where + " refers to a missing buffer");
        if (!isWritten(id))
          return fail(where + " reads buffer " + std::to_string(id) +
                      " before any step wrote it");
      }
    if (step.outputs())
      for (uint32_t id : *step.outputs()) {
        if (id >= count)
          return fail(where + " refers to a missing buffer");
        // Weights are read-only (the CPU reads the weight file's read-only copy itself);
        // what a step updates from run to run is a state.
        const schema::Buffer &root = *program.buffers()->Get(roots[id]);
        if (root.storage() == schema::Storage::Weight)
          return fail(where + " writes buffer " + std::to_string(id) + ", the weight '" +
                      io::printable(root.name()->str()) + "', which is read-only");
        writtenRoots[roots[id]] = true;
      }
    return {};
  }

  Status checkOutputs() const {
    size_t given = program.outputs() ? program.outputs()->size() : 0;
    if (given != outputs.size())
      return fail("has " + std::to_string(given) + " output(s); the manifest lists " +
                  std::to_string(outputs.size()));
    for (size_t i = 0; i < given; ++i) {
      const schema::Output &output = *program.outputs()->Get(static_cast<uint32_t>(i));
      const TensorSignature &expected = outputs[i];
      std::string where =
          "output " + std::to_string(i) + " '" + io::printable(output.name()->str()) + "'";
      if (output.name()->str() != expected.name)
        return fail(where + " is '" + io::printable(expected.name) + "' in the manifest");
      if (output.buffer() >= program.buffers()->size())
        return fail(where + " refers to a missing buffer");
      const schema::Buffer &buffer = *program.buffers()->Get(output.buffer());
      DType dtype = static_cast<DType>(buffer.dtype());
      Shape shape(buffer.shape()->begin(), buffer.shape()->end());
      if (dtype != expected.dtype || shape != expected.shape)
        return fail(where + " is " + describe(dtype, shape) + "; the manifest declares " +
                    describe(expected.dtype, expected.shape));
      if (!isWritten(output.buffer()))
        return fail(where + " is never written");
    }
    return {};
  }

  const schema::Program &program;
  const std::vector<TensorSignature> &inputs, &outputs;
  const io::SafeTensorsFile &weights;
  const std::string &path;
  std::vector<uint32_t> roots;
  std::vector<bool> writtenRoots;
  std::map<std::string, uint32_t> states; // the first buffer of each state
};

} // namespace

Status checkProgram(const schema::Program &program, const std::vector<TensorSignature> &inputs,
                    const std::vector<TensorSignature> &outputs,
                    const io::SafeTensorsFile &weights, const std::string &path) {
  return ProgramChecker(program, inputs, outputs, weights, path).run();
}

std::vector<uint32_t> storageRoots(const schema::Program &program) {
  std::vector<uint32_t> roots(program.buffers()->size());
  for (uint32_t id = 0; id < roots.size(); ++id) {
    const schema::Buffer &buffer = *program.buffers()->Get(id);
    // A view names an earlier buffer (checkProgram).
    roots[id] = buffer.storage() == schema::Storage::View ? roots[buffer.index()] : id;
  }
  return roots;
}

} // namespace shardc::rt
