//===- SignalCleanup.h - staging files removed when the process is stopped ===//
//
// Writers stage their output beside the destination and rename it into
// place (AtomicFile, shardc's artifact directory). A failure removes the
// staging through the normal error path; this covers the process being
// stopped while it writes: on SIGINT, SIGTERM or SIGHUP every registered
// staging path is removed, then the signal goes on to the handler that was
// there before (LLVM's, which removes its own files, or the default, which
// ends the process). SIGKILL cannot be caught: its staging stays, under a
// hidden name that says what it is.
//
// Registering also makes SIGXFSZ ignored, so a write past `ulimit -f`
// fails with EFBIG like one on a full disk, and is cleaned up the same way,
// instead of killing the process.
//
// The handler only unlinks and removes directories (async-signal-safe
// calls); a registered directory must hold files only, no subfolders.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_IO_SIGNALCLEANUP_H
#define SHARDC_RUNTIME_IO_SIGNALCLEANUP_H

#include <string>
#include <vector>

namespace shardc::rt::io {

/// Removes `path` (a file, or a directory of files) if a stopping signal
/// arrives before release() or destruction. Should the registry be full,
/// the path is not watched; everything else works the same.
class SignalCleanup {
public:
  explicit SignalCleanup(const std::string &path);
  ~SignalCleanup();
  SignalCleanup(const SignalCleanup &) = delete;
  SignalCleanup &operator=(const SignalCleanup &) = delete;
  SignalCleanup(SignalCleanup &&other) noexcept;
  SignalCleanup &operator=(SignalCleanup &&) = delete;

  /// Stops watching: the path was renamed into place or removed.
  void release();

private:
  int slot_ = -1;
};

/// The stopping signals (SIGINT, SIGTERM, SIGHUP) the process was started
/// with ignored: nohup's SIGHUP, a background job's SIGINT. LLVM's InitLLVM
/// installs its handlers over an ignored signal, so `nohup shardc` died of
/// the hangup it was meant to survive (staging removed, then "cannot
/// write"). Read them before InitLLVM and reapply() after it.
class IgnoredStoppingSignals {
public:
  IgnoredStoppingSignals();
  /// Ignores again the signals that were ignored at construction.
  void reapply() const;

private:
  std::vector<int> ignored_;
};

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_SIGNALCLEANUP_H
