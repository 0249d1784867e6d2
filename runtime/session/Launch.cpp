//===- Launch.cpp - what the launcher's environment says ------------------===//
#include "runtime/session/Launch.h"

#include <cstdlib>

namespace shardc::rt {
namespace {

/// The variable as an integer in [minimum, maximum]; none when unset.
StatusOr<std::optional<int>> integerVariable(const char *name, int minimum, int maximum) {
  const char *text = std::getenv(name);
  if (!text)
    return std::optional<int>();
  char *end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (!*text || *end || value < minimum || value > maximum)
    return Status::error(std::string(name) + "='" + text + "': expected an integer from " +
                         std::to_string(minimum) + " to " + std::to_string(maximum));
  return std::optional<int>(static_cast<int>(value));
}

} // namespace

StatusOr<LocalRank> localRank() {
  for (const char *name :
       {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID"}) {
    auto value = integerVariable(name, 0, 1 << 20);
    if (!value)
      return value.status();
    if (*value)
      return LocalRank{**value, std::string(name) + "=" + std::to_string(**value)};
  }
  return LocalRank{};
}

StatusOr<std::optional<TorchrunLaunch>> torchrunLaunch() {
  if (!std::getenv("WORLD_SIZE") && !std::getenv("RANK"))
    return std::optional<TorchrunLaunch>();
  TorchrunLaunch launch;
  auto size = integerVariable("WORLD_SIZE", 1, 1 << 20);
  if (!size)
    return size.status();
  if (!*size)
    return Status::error("RANK is set but WORLD_SIZE is not (a torchrun-style launch needs "
                         "RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT)");
  launch.size = **size;
  auto rank = integerVariable("RANK", 0, launch.size - 1);
  if (!rank)
    return rank.status();
  if (!*rank)
    return Status::error("WORLD_SIZE is set but RANK is not (a torchrun-style launch needs "
                         "RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT)");
  launch.rank = **rank;
  const char *address = std::getenv("MASTER_ADDR");
  if (!address || !*address) {
    if (launch.size > 1)
      return Status::error("RANK and WORLD_SIZE are set but MASTER_ADDR is not (the address "
                           "where rank 0 shares the NCCL id)");
    address = "127.0.0.1"; // one rank talks to nobody
  }
  launch.address = address;
  auto port = integerVariable("MASTER_PORT", 1, 65535);
  if (!port)
    return port.status();
  if (*port)
    launch.port = **port;
  return std::optional<TorchrunLaunch>(launch);
}

} // namespace shardc::rt
