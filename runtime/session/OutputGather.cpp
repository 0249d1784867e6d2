//===- OutputGather.cpp - outputs gathered onto the output rank -----------===//
#include "runtime/session/OutputGather.h"

#include "runtime/session/MicroBatch.h"

#include <algorithm>
#include <cstring>
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
  // Pieces along a dim with only size-1 dims before it are contiguous
  // blocks of the whole: received in place, with no copy after (25 MB of
  // logits a step on GPT-2's dp=2).
  int64_t outer = 1;
  for (int dim = 0; dim < output.dim; ++dim)
    outer *= piece.shape[static_cast<size_t>(dim)];
  Shape wholeShape = piece.shape;
  wholeShape[static_cast<size_t>(output.dim)] *= static_cast<int64_t>(output.pieceRanks.size());
  HostTensor whole;
  if (outer == 1)
    whole = HostTensor(piece.dtype, wholeShape);
  std::vector<HostTensor> pieces;
  for (size_t k = 0; k < output.pieceRanks.size(); ++k) {
    const int holder = output.pieceRanks[k];
    std::byte *place = outer == 1 ? whole.bytes.data() + k * bytes : nullptr;
    if (holder == rank_) {
      if (place)
        std::memcpy(place, piece.bytes.data(), bytes);
      else
        pieces.push_back(piece);
      continue;
    }
    HostTensor received;
    if (!place) {
      received = HostTensor(piece.dtype, piece.shape);
      place = received.bytes.data();
    }
    if (Status status = move(false, place, bytes, holder, world, device); !status)
      return Status::error("gathering output " + std::to_string(index) + " from rank " +
                           std::to_string(holder) + ": " + status.message());
    if (outer != 1)
      pieces.push_back(std::move(received));
  }
  piece = outer == 1 ? std::move(whole) : joinAlong(pieces, output.dim);
  return {};
}

} // namespace shardc::rt
