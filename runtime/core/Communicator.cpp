//===- Communicator.cpp - what every communicator can do the same way -----===//
#include "runtime/core/Communicator.h"

#include <cstring>
#include <memory>

namespace shardc::rt {

Status Communicator::gather(const void *in, void *out, size_t bytesPerRank, int root) {
  if (rank() != root) {
    if (Status status = send(in, bytesPerRank, root); !status)
      return status;
    return flush();
  }
  auto *blocks = static_cast<std::byte *>(out);
  for (int peer = 0; peer < size(); ++peer) {
    std::byte *block = blocks + static_cast<size_t>(peer) * bytesPerRank;
    if (peer != root) {
      if (Status status = recv(block, bytesPerRank, peer); !status)
        return status;
    } else if (block != in) {
      // Device memory cannot be copied from here: the caller places it.
      if (onDevice())
        return Status::error("gather: a device root's own block must be in place");
      std::memcpy(block, in, bytesPerRank);
    }
  }
  return {};
}

Status Communicator::allGatherRows(const void *in, void *out, size_t rows, size_t rowBytes) {
  if (onDevice())
    return Status::error("all_gather: interleaved rows need host memory");
  const size_t n = static_cast<size_t>(size()), blockBytes = rows * rowBytes;
  if (rows && rowBytes && (blockBytes / rows != rowBytes || blockBytes > SIZE_MAX / n))
    return Status::error("all_gather: " + std::to_string(n) + " blocks of " + std::to_string(rows) +
                         " rows of " + std::to_string(rowBytes) +
                         " bytes overflow the address space");
  // Not value-initialized: every byte is written by the gather.
  std::unique_ptr<std::byte[]> blocks(new std::byte[n * blockBytes]);
  if (Status status = allGather(in, blocks.get(), blockBytes); !status)
    return status;
  interleaveBlocks(blocks.get(), static_cast<std::byte *>(out), n, rows, rowBytes);
  return {};
}

Status Communicator::sendTagged(const void *data, size_t bytes, int peer, uint64_t tag) {
  if (Status status = send(&tag, sizeof tag, peer); !status)
    return status;
  return send(data, bytes, peer);
}

Status Communicator::recvTagged(void *data, size_t bytes, int peer, uint64_t tag,
                                const std::function<std::string(uint64_t tag)> &name) {
  uint64_t arrived = 0;
  if (Status status = recv(&arrived, sizeof arrived, peer); !status)
    return status;
  if (arrived != tag)
    return Status::error("expected " + name(tag) + " from group rank " + std::to_string(peer) +
                         "; got " + name(arrived) + " (the ranks disagree on the order)");
  return recv(data, bytes, peer);
}

void interleaveBlocks(const std::byte *blocks, std::byte *rows, size_t n, size_t outer,
                      size_t row) {
  if (!row)
    return;
  for (size_t j = 0; j < n; ++j)
    for (size_t o = 0; o < outer; ++o)
      std::memcpy(rows + (o * n + j) * row, blocks + (j * outer + o) * row, row);
}

} // namespace shardc::rt
