//===- OutputGather.cpp - outputs gathered onto the output rank -----------===//
#include "runtime/session/OutputGather.h"

#include "runtime/session/MicroBatch.h"

#include <algorithm>
#include <memory>

namespace shardc::rt {
namespace {

/// Device memory for one point-to-point message of a device communicator,
/// released on every path.
class DeviceBuffer {
public:
  DeviceBuffer(Device &device) : device_(device) {}
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

/// Sends or receives `bytes` at host `data` over `world`; a device
/// communicator moves them through device memory on a stream of its own.
Status move(bool sending, void *data, size_t bytes, int peer, Communicator &world,
            Device &device) {
  if (!world.onDevice())
    return sending ? world.send(data, bytes, peer) : world.recv(data, bytes, peer);
  DeviceBuffer buffer(device);
  if (Status status = buffer.allocate(bytes); !status)
    return status;
  auto stream = device.createStream();
  if (!stream)
    return stream.status();
  world.setStream((*stream)->nativeHandle());
  if (sending) {
    if (Status status = device.copyToDevice(buffer.get(), data, bytes); !status)
      return status;
    if (Status status = world.send(buffer.get(), bytes, peer); !status)
      return status;
    if (Status status = world.flush(); !status)
      return status;
    return (*stream)->synchronize();
  }
  if (Status status = world.recv(buffer.get(), bytes, peer); !status)
    return status;
  if (Status status = (*stream)->synchronize(); !status)
    return status;
  return device.copyToHost(data, buffer.get(), bytes);
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

Status OutputGather::gather(size_t index, HostTensor &piece, Communicator &world,
                            Device &device) const {
  if (index >= outputs_.size() || outputs_[index].pieceRanks.empty())
    return {};
  const Output &output = outputs_[index];
  const size_t bytes = piece.bytes.size();
  if (rank_ != outputRank_) {
    if (std::find(output.pieceRanks.begin(), output.pieceRanks.end(), rank_) ==
        output.pieceRanks.end())
      return {};
    return move(true, piece.bytes.data(), bytes, outputRank_, world, device);
  }
  std::vector<HostTensor> pieces;
  for (int holder : output.pieceRanks) {
    if (holder == rank_) {
      pieces.push_back(piece);
      continue;
    }
    HostTensor received(piece.dtype, piece.shape);
    if (Status status = move(false, received.bytes.data(), bytes, holder, world, device); !status)
      return Status::error("gathering output " + std::to_string(index) + " from rank " +
                           std::to_string(holder) + ": " + status.message());
    pieces.push_back(std::move(received));
  }
  piece = joinAlong(pieces, output.dim);
  return {};
}

} // namespace shardc::rt
