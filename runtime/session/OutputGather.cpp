//===- OutputGather.cpp - outputs gathered onto the output rank -----------===//
#include "runtime/session/OutputGather.h"

#include "runtime/session/MicroBatch.h"

#include <algorithm>
#include <cstring>
#include <memory>

namespace shardc::rt {
namespace {

/// Device memory for one gather over a device communicator,
/// released on every path.
class DeviceBuffer {
public:
  explicit DeviceBuffer(Device &device) : device_(device) {}
  ~DeviceBuffer() {
    if (memory_)
      device_.release(memory_);
  }
  Status allocate(size_t bytes) {
    auto memory = device_.allocate(bytes);
    if (!memory)
      return memory.status();
    memory_ = *memory;
    return {};
  }
  void *get() const { return memory_; }

private:
  Device &device_;
  void *memory_ = nullptr;
};

/// `group.gather` of host bytes: `in` (bytes) from every member into
/// `out` on the root; a device communicator is given device memory and a
/// stream of its own.
Status gatherHost(Communicator &group, const void *in, void *out, size_t bytes, int root,
                  Device &device) {
  if (!group.onDevice())
    return group.gather(in, out, bytes, root);
  // The root's piece goes straight to its block of the whole (in place).
  const bool isRoot = group.rank() == root;
  DeviceBuffer buffer(device);
  if (Status status = buffer.allocate(isRoot ? bytes * static_cast<size_t>(group.size()) : bytes);
      !status)
    return status;
  auto *mine =
      static_cast<std::byte *>(buffer.get()) + (isRoot ? bytes * static_cast<size_t>(root) : 0);
  auto stream = device.createStream();
  if (!stream)
    return stream.status();
  group.setStream((*stream)->nativeHandle());
  if (Status status = device.copyToDevice(mine, in, bytes); !status)
    return status;
  if (Status status = group.gather(mine, isRoot ? buffer.get() : nullptr, bytes, root); !status)
    return status;
  if (Status status = group.flush(); !status)
    return status;
  if (Status status = (*stream)->synchronize(); !status)
    return status;
  return isRoot ? device.copyToHost(out, buffer.get(), bytes * static_cast<size_t>(group.size()))
                : Status();
}

} // namespace

OutputGather::OutputGather(const ArtifactLayout &layout, int rank)
    : rank_(rank), outputRank_(layout.outputRank()) {
  const std::vector<int64_t> root = layout.mesh.coordinates(outputRank_);
  bool anyGathered = false;
  for (const std::optional<OutputSplit> &given : layout.outputSplits) {
    Output output;
    if (given) {
      anyGathered = true;
      output.dim = given->dim;
      for (int64_t piece = 0; piece < given->pieces; ++piece) {
        std::vector<int64_t> coords = root;
        int64_t rest = piece;
        for (auto axis = given->axes.rbegin(); axis != given->axes.rend(); ++axis) {
          const int64_t size = layout.mesh.sizes[static_cast<size_t>(*axis)];
          coords[static_cast<size_t>(*axis)] = rest % size;
          rest /= size;
        }
        output.pieceRanks.push_back(static_cast<int>(layout.mesh.rankOf(coords)));
      }
    }
    outputs_.push_back(std::move(output));
  }
  if (!anyGathered)
    outputs_.clear();
}

Status OutputGather::connect(Communicator &world) {
  for (size_t i = 0; i < outputs_.size(); ++i) {
    Output &output = outputs_[i];
    if (output.pieceRanks.empty())
      continue;
    // Outputs gathered over the same ranks share one group.
    auto same = std::find_if(outputs_.begin(), outputs_.begin() + i, [&](const Output &earlier) {
      return earlier.pieceRanks == output.pieceRanks;
    });
    if (same != outputs_.begin() + i) {
      output.group = same->group;
      continue;
    }
    auto member = std::find(output.pieceRanks.begin(), output.pieceRanks.end(), rank_);
    const bool inGroup = member != output.pieceRanks.end();
    auto group = world.split(inGroup ? 0 : -1,
                             inGroup ? static_cast<int>(member - output.pieceRanks.begin()) : 0);
    if (!group)
      return group.status();
    output.group = std::move(*group);
  }
  return {};
}

Status OutputGather::gather(size_t index, const HostTensor &piece, HostTensor &whole,
                            Device &device) const {
  if (!gathers(index) || !outputs_[index].group)
    return {};
  const Output &output = outputs_[index];
  const size_t bytes = piece.bytes.size();
  const int root = static_cast<int>(
      std::find(output.pieceRanks.begin(), output.pieceRanks.end(), outputRank_) -
      output.pieceRanks.begin());
  if (rank_ != outputRank_)
    return gatherHost(*output.group, piece.bytes.data(), nullptr, bytes, root, device);
  const size_t count = output.pieceRanks.size();
  Shape wholeShape = piece.shape;
  wholeShape[static_cast<size_t>(output.dim)] *= static_cast<int64_t>(count);
  if (whole.dtype != piece.dtype || whole.shape != wholeShape)
    whole = HostTensor(piece.dtype, wholeShape);
  // Pieces along a dim with only size-1 dims before it are contiguous
  // blocks of the whole: gathered in place; along another dim they are
  // placed after.
  int64_t outer = 1;
  for (int dim = 0; dim < output.dim; ++dim)
    outer *= piece.shape[static_cast<size_t>(dim)];
  std::vector<std::byte> packed(outer == 1 ? 0 : bytes * count);
  if (Status status = gatherHost(*output.group, piece.bytes.data(),
                                 outer == 1 ? whole.bytes.data() : packed.data(), bytes, root,
                                 device);
      !status)
    return Status::error("gathering output " + std::to_string(index) + ": " + status.message());
  if (outer == 1)
    return {};
  std::vector<HostTensor> pieces(count, HostTensor(piece.dtype, piece.shape));
  for (size_t k = 0; k < count; ++k)
    std::memcpy(pieces[k].bytes.data(), packed.data() + k * bytes, bytes);
  whole = joinAlong(pieces, output.dim);
  return {};
}

} // namespace shardc::rt
