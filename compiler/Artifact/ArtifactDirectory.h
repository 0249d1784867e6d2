//===- ArtifactDirectory.h - where an artifact may be written ---*- C++ -*-===//
//
// `shardc -o DIR` replaces DIR only when it is an artifact shardc wrote: a
// real directory (not a symlink) holding a manifest.json whose format is
// "shardc-artifact" and, besides it, only regular files that manifest lists.
// Anything else — other files, a symlink, a file, a device, the working
// folder or a folder above it — is refused with one line, untouched.
//
// The artifact is written into a hidden staging folder beside DIR
// (`.DIR.partial-PID`) and moved into place by one rename: with an existing
// artifact the two are exchanged atomically (renameat2), then the old one,
// now in the staging folder, is removed. The staging folder is removed on
// every failure: an error, a full disk, SIGINT, SIGTERM or SIGHUP
// (runtime/io/SignalCleanup.h).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_ARTIFACT_ARTIFACTDIRECTORY_H
#define SHARDC_COMPILER_ARTIFACT_ARTIFACTDIRECTORY_H

#include "runtime/io/SignalCleanup.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace shardc::artifact {

/// `path` without trailing slashes (`out/` is `out`), once it is known that
/// an artifact may be written there: nothing exists there yet (and its
/// folder does), or it is an artifact shardc wrote. The error is one line
/// naming the path and why it is refused.
llvm::Expected<std::string> checkArtifactDestination(llvm::StringRef path);

/// The folder an artifact is written into before it takes `destination`'s
/// place. Removed when destroyed uncommitted.
class StagingDirectory {
public:
  /// Checks `destination` (checkArtifactDestination) and creates the
  /// staging folder beside it.
  static llvm::Expected<std::unique_ptr<StagingDirectory>> create(llvm::StringRef destination);
  ~StagingDirectory();
  StagingDirectory(const StagingDirectory &) = delete;
  StagingDirectory &operator=(const StagingDirectory &) = delete;

  llvm::StringRef path() const { return path_; }

  /// Checks the destination again and moves the staging folder into its
  /// place, replacing the artifact there.
  llvm::Error commit();

private:
  StagingDirectory(std::string destination, std::string path, rt::io::SignalCleanup cleanup)
      : destination_(std::move(destination)), path_(std::move(path)),
        cleanup_(std::move(cleanup)) {}

  std::string destination_, path_;
  rt::io::SignalCleanup cleanup_;
  bool committed_ = false;
};

} // namespace shardc::artifact

#endif
