//===- Communicator.cpp - what every communicator can do the same way -----===//
#include "runtime/core/Communicator.h"

#include <cstring>

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

} // namespace shardc::rt
