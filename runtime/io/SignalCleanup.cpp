//===- SignalCleanup.cpp - staging files removed when the process is stopped -===//

#include "runtime/io/SignalCleanup.h"

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace shardc::rt::io {
namespace {

/// More than any process stages at once (shardc: one directory and a file
/// or two; shardrun: one output file).
constexpr int kSlots = 64;
std::atomic<char *> slots[kSlots];

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction previous[std::size(kSignals)];

/// getdents64's record (the kernel's struct linux_dirent64, which glibc
/// does not declare).
struct DirectoryEntry {
  uint64_t inode;
  int64_t next;
  unsigned short length;
  unsigned char type;
  char name[1];
};

/// Removes the file at `path`, or the directory and the files in it, with
/// async-signal-safe calls only (no opendir: it allocates).
void removeFlat(const char *path) {
  if (::unlink(path) == 0)
    return;
  int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return;
  // Removing entries while reading the listing may skip some: read it
  // again until a pass removes nothing.
  for (bool removed = true; removed;) {
    removed = false;
    ::lseek(fd, 0, SEEK_SET);
    alignas(8) char buffer[4096];
    long count;
    while ((count = ::syscall(SYS_getdents64, fd, buffer, sizeof(buffer))) > 0)
      for (long at = 0; at < count;) {
        const auto *entry = reinterpret_cast<const DirectoryEntry *>(buffer + at);
        at += entry->length;
        if (std::strcmp(entry->name, ".") != 0 && std::strcmp(entry->name, "..") != 0 &&
            ::unlinkat(fd, entry->name, 0) == 0)
          removed = true;
      }
  }
  ::close(fd);
  ::rmdir(path);
}

void onStoppingSignal(int signal) {
  for (std::atomic<char *> &slot : slots)
    if (char *path = slot.exchange(nullptr))
      removeFlat(path); // the string is not freed: free() is not signal-safe
  // On to the handler that was there before: it sees the same signal when
  // this one returns (the signal is blocked while its handler runs).
  for (size_t i = 0; i < std::size(kSignals); ++i)
    if (kSignals[i] == signal)
      ::sigaction(signal, &previous[i], nullptr);
  ::raise(signal);
}

void installHandlers() {
  struct sigaction action {};
  action.sa_handler = onStoppingSignal;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    ::sigaction(kSignals[i], nullptr, &previous[i]);
    // A signal the process ignores (nohup's SIGHUP) stays ignored.
    if (previous[i].sa_handler != SIG_IGN)
      ::sigaction(kSignals[i], &action, nullptr);
  }
  ::signal(SIGXFSZ, SIG_IGN);
}

} // namespace

SignalCleanup::SignalCleanup(const std::string &path) {
  static std::once_flag installed;
  std::call_once(installed, installHandlers);
  char *copy = ::strdup(path.c_str());
  if (!copy)
    return;
  for (int slot = 0; slot < kSlots; ++slot) {
    char *empty = nullptr;
    if (slots[slot].compare_exchange_strong(empty, copy)) {
      slot_ = slot;
      return;
    }
  }
  std::free(copy);
}

IgnoredStoppingSignals::IgnoredStoppingSignals() {
  for (int signal : kSignals) {
    struct sigaction current {};
    if (::sigaction(signal, nullptr, &current) == 0 && current.sa_handler == SIG_IGN)
      ignored_.push_back(signal);
  }
}

void IgnoredStoppingSignals::reapply() const {
  for (int signal : ignored_)
    std::signal(signal, SIG_IGN);
}

SignalCleanup::SignalCleanup(SignalCleanup &&other) noexcept
    : slot_(std::exchange(other.slot_, -1)) {}

SignalCleanup::~SignalCleanup() { release(); }

void SignalCleanup::release() {
  if (slot_ < 0)
    return;
  std::free(slots[slot_].exchange(nullptr));
  slot_ = -1;
}

} // namespace shardc::rt::io
