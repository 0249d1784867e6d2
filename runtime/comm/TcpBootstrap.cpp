//===- TcpBootstrap.cpp - rank 0's bytes to every rank over TCP -----------===//
//
// The wire format, both ways little-endian:
//   request  magic "SHDB" (u32), version (u32), rank (i32), size (i32), bytes (u64)
//   reply    status (u8: 0 ok, 1 refused), length (u32), then the bytes or
//            the reason rank 0 refused
// Rank 0 serves one connection at a time: the payload is an NCCL id (128
// bytes), so even thousands of ranks are served in well under a second.
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/TcpBootstrap.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace shardc::rt::comm {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kMagic = 0x42444853; // "SHDB" little-endian
constexpr uint32_t kVersion = 1;
constexpr size_t kRequestBytes = 24;
constexpr std::chrono::milliseconds kRetryInterval(100);

std::string seconds(std::chrono::milliseconds duration) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", duration.count() / 1000.0);
  return text;
}

/// Closes the descriptor when it goes out of scope.
class Socket {
public:
  explicit Socket(int fd = -1) : fd_(fd) {}
  Socket(Socket &&other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Socket &operator=(Socket &&other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~Socket() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

private:
  int fd_;
};

int millisecondsUntil(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, 1 << 30));
}

/// Waits until `fd` is ready for `events`; false at the deadline.
bool waitFor(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd entry{fd, events, 0};
    int ready = ::poll(&entry, 1, millisecondsUntil(deadline));
    if (ready > 0)
      return true;
    if (ready == 0 || errno != EINTR)
      return false;
  }
}

/// Sends or receives exactly `bytes`; an error says what went wrong.
Status sendAll(int fd, const void *data, size_t bytes, Clock::time_point deadline) {
  const auto *at = static_cast<const uint8_t *>(data);
  while (bytes) {
    if (!waitFor(fd, POLLOUT, deadline))
      return Status::error("timed out sending");
    ssize_t sent = ::send(fd, at, bytes, MSG_NOSIGNAL);
    if (sent < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (sent <= 0)
      return Status::error(std::string("send failed: ") + std::strerror(errno));
    at += sent;
    bytes -= static_cast<size_t>(sent);
  }
  return {};
}

Status receiveAll(int fd, void *data, size_t bytes, Clock::time_point deadline) {
  auto *at = static_cast<uint8_t *>(data);
  while (bytes) {
    if (!waitFor(fd, POLLIN, deadline))
      return Status::error("timed out receiving");
    ssize_t got = ::recv(fd, at, bytes, 0);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (got == 0)
      return Status::error("the connection was closed");
    if (got < 0)
      return Status::error(std::string("receive failed: ") + std::strerror(errno));
    at += got;
    bytes -= static_cast<size_t>(got);
  }
  return {};
}

void putU32(uint8_t *at, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    at[i] = static_cast<uint8_t>(value >> (8 * i));
}
void putU64(uint8_t *at, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    at[i] = static_cast<uint8_t>(value >> (8 * i));
}
uint32_t getU32(const uint8_t *at) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i)
    value |= static_cast<uint32_t>(at[i]) << (8 * i);
  return value;
}
uint64_t getU64(const uint8_t *at) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= static_cast<uint64_t>(at[i]) << (8 * i);
  return value;
}

Status reply(int fd, bool ok, const void *data, size_t bytes, Clock::time_point deadline) {
  uint8_t header[5];
  header[0] = ok ? 0 : 1;
  putU32(header + 1, static_cast<uint32_t>(bytes));
  if (Status status = sendAll(fd, header, sizeof header, deadline); !status)
    return status;
  return sendAll(fd, data, bytes, deadline);
}

/// A socket listening on `port` on every interface: IPv6 taking IPv4 too
/// where the host has IPv6, plain IPv4 otherwise.
StatusOr<Socket> listenOn(int port, int backlog) {
  std::string lastError;
  for (int family : {AF_INET6, AF_INET}) {
    Socket socket(::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!socket.valid()) {
      lastError = std::strerror(errno);
      continue;
    }
    int one = 1, zero = 0;
    ::setsockopt(socket.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int bound;
    if (family == AF_INET6) {
      ::setsockopt(socket.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
      sockaddr_in6 address{};
      address.sin6_family = AF_INET6;
      address.sin6_addr = in6addr_any;
      address.sin6_port = htons(static_cast<uint16_t>(port));
      bound = ::bind(socket.fd(), reinterpret_cast<sockaddr *>(&address), sizeof address);
    } else {
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_addr.s_addr = htonl(INADDR_ANY);
      address.sin_port = htons(static_cast<uint16_t>(port));
      bound = ::bind(socket.fd(), reinterpret_cast<sockaddr *>(&address), sizeof address);
    }
    if (bound != 0 || ::listen(socket.fd(), backlog) != 0) {
      lastError = std::strerror(errno);
      if (errno == EADDRINUSE)
        break; // the other family would say the same
      continue;
    }
    return socket;
  }
  return Status::error("rank 0 cannot listen on port " + std::to_string(port) + ": " + lastError);
}

/// One connection to rank 0: checks the request and answers it. Sets
/// `joined` to the rank served; an error for a request that must stop the
/// launch (another world size, a repeated rank). A stranger (no magic) is
/// dropped without an error.
Status serve(int fd, const TcpRendezvous &where, const void *data, size_t bytes,
             std::set<int> &served, Clock::time_point deadline) {
  uint8_t request[kRequestBytes];
  if (Status status = receiveAll(fd, request, sizeof request, deadline); !status)
    return {};
  if (getU32(request) != kMagic || getU32(request + 4) != kVersion)
    return {};
  const int rank = static_cast<int32_t>(getU32(request + 8));
  const int size = static_cast<int32_t>(getU32(request + 12));
  const uint64_t theirBytes = getU64(request + 16);
  std::string refusal;
  if (size != where.size)
    refusal = "rank " + std::to_string(rank) +
              " was launched with WORLD_SIZE=" + std::to_string(size) +
              " but rank 0 with WORLD_SIZE=" + std::to_string(where.size);
  else if (rank <= 0 || rank >= where.size)
    refusal = "rank " + std::to_string(rank) + " is not a rank of a " + std::to_string(where.size) +
              "-rank world";
  else if (served.count(rank))
    refusal = "two processes were launched as rank " + std::to_string(rank);
  else if (theirBytes != bytes)
    refusal = "rank " + std::to_string(rank) + " expects " + std::to_string(theirBytes) +
              " bytes but rank 0 has " + std::to_string(bytes);
  if (!refusal.empty()) {
    (void)reply(fd, false, refusal.data(), refusal.size(), deadline);
    return Status::error(refusal);
  }
  if (Status status = reply(fd, true, data, bytes, deadline); !status)
    return {}; // the rank went away; it may connect again
  served.insert(rank);
  return {};
}

Status runRankZero(const TcpRendezvous &where, const void *data, size_t bytes) {
  const auto deadline = Clock::now() + where.timeout;
  auto listening = listenOn(where.port, std::min(where.size, 4096));
  if (!listening)
    return listening.status();
  std::set<int> served;
  while (static_cast<int>(served.size()) < where.size - 1) {
    if (!waitFor(listening->fd(), POLLIN, deadline)) {
      std::string missing;
      int listed = 0;
      for (int rank = 1; rank < where.size; ++rank)
        if (!served.count(rank) && listed++ < 8)
          missing += (missing.empty() ? "" : ", ") + std::to_string(rank);
      if (listed > 8)
        missing += " and " + std::to_string(listed - 8) + " more";
      return Status::error("rank" + std::string(listed > 1 ? "s " : " ") + missing +
                           " did not join within " + seconds(where.timeout) +
                           " (rank 0 listened on port " + std::to_string(where.port) + ")");
    }
    Socket client(::accept4(listening->fd(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!client.valid())
      continue;
    if (Status status = serve(client.fd(), where, data, bytes, served, deadline); !status)
      return status;
  }
  return {};
}

/// A connected socket to rank 0, or the last reason none was.
StatusOr<Socket> connectOnce(const TcpRendezvous &where, Clock::time_point deadline,
                             std::string &lastError) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo *found = nullptr;
  const std::string port = std::to_string(where.port);
  if (int code = ::getaddrinfo(where.address.c_str(), port.c_str(), &hints, &found); code != 0) {
    lastError = std::string("cannot resolve '") + where.address + "': " + ::gai_strerror(code);
    return Status::error(lastError);
  }
  StatusOr<Socket> result = Status::error("no address");
  for (addrinfo *at = found; at; at = at->ai_next) {
    Socket socket(::socket(at->ai_family, at->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!socket.valid())
      continue;
    if (::connect(socket.fd(), at->ai_addr, at->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        lastError = std::strerror(errno);
        continue;
      }
      // At most a second per attempt: a dropped SYN must not eat the budget.
      auto attempt = std::min(deadline, Clock::now() + std::chrono::seconds(1));
      int error = ETIMEDOUT;
      socklen_t length = sizeof error;
      if (waitFor(socket.fd(), POLLOUT, attempt))
        ::getsockopt(socket.fd(), SOL_SOCKET, SO_ERROR, &error, &length);
      if (error != 0) {
        lastError = std::strerror(error);
        continue;
      }
    }
    result = std::move(socket);
    break;
  }
  ::freeaddrinfo(found);
  return result;
}

Status runOtherRank(const TcpRendezvous &where, void *data, size_t bytes) {
  const auto deadline = Clock::now() + where.timeout;
  const std::string rankZero = "rank 0 at " + where.address + ":" + std::to_string(where.port);
  std::string lastError = "no attempt";
  for (;;) {
    auto connected = connectOnce(where, deadline, lastError);
    if (connected) {
      uint8_t request[kRequestBytes];
      putU32(request, kMagic);
      putU32(request + 4, kVersion);
      putU32(request + 8, static_cast<uint32_t>(where.rank));
      putU32(request + 12, static_cast<uint32_t>(where.size));
      putU64(request + 16, bytes);
      uint8_t header[5];
      Status status = sendAll(connected->fd(), request, sizeof request, deadline);
      if (status)
        status = receiveAll(connected->fd(), header, sizeof header, deadline);
      if (status) {
        const uint32_t length = getU32(header + 1);
        if (header[0] != 0) {
          std::string reason(std::min<uint32_t>(length, 4096), '\0');
          (void)receiveAll(connected->fd(), reason.data(), reason.size(), deadline);
          return Status::error(rankZero + " refused: " + reason);
        }
        if (length != bytes)
          return Status::error(rankZero + " sent " + std::to_string(length) + " bytes, expected " +
                               std::to_string(bytes));
        status = receiveAll(connected->fd(), data, bytes, deadline);
        if (status)
          return {};
      }
      lastError = status.message();
    }
    const auto now = Clock::now();
    if (now >= deadline)
      return Status::error("could not reach " + rankZero + " within " + seconds(where.timeout) +
                           " (" + lastError + ")");
    std::this_thread::sleep_for(std::min<Clock::duration>(kRetryInterval, deadline - now));
  }
}

} // namespace

Status tcpBroadcast(const TcpRendezvous &where, void *data, size_t bytes) {
  if (where.size < 1 || where.rank < 0 || where.rank >= where.size)
    return Status::error("rank " + std::to_string(where.rank) + " is not a rank of a " +
                         std::to_string(where.size) + "-rank world");
  if (where.port <= 0 || where.port > 65535)
    return Status::error("port " + std::to_string(where.port) + " is not a TCP port");
  if (where.size == 1)
    return {};
  return where.rank == 0 ? runRankZero(where, data, bytes) : runOtherRank(where, data, bytes);
}

} // namespace shardc::rt::comm
