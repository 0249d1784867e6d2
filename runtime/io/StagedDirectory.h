//===- StagedDirectory.h - a folder written beside its place, then renamed -*- C++ -*-===//
//
// A folder of files that must appear whole or not at all (a training
// checkpoint): a process killed while it writes must leave the folder it
// replaces as it was. The files are written into a hidden staging folder
// beside the destination (`.NAME.partial-PID`), and commit() moves it into
// place with one rename: exchanged atomically with the folder it replaces
// (renameat2 RENAME_EXCHANGE), whose files are then removed.
//
// An existing destination is replaced only when the caller's check accepts
// what it holds, and never when it is a symlink, something other than a
// directory, or the working folder or a folder above it: the rules of
// shardc's own artifact output (compiler/Artifact/ArtifactDirectory.h). The
// staging folder is removed on every failure and on SIGINT, SIGTERM or
// SIGHUP (SignalCleanup.h); SIGKILL leaves it behind, hidden, and the
// destination whole. It must hold files only.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_IO_STAGEDDIRECTORY_H
#define SHARDC_RUNTIME_IO_STAGEDDIRECTORY_H

#include "runtime/io/ErrorText.h"
#include "runtime/io/SignalCleanup.h"

#include <functional>
#include <memory>
#include <string>

namespace shardc::rt::io {

/// Whether an existing folder may be replaced: success, or why not, as the
/// words that follow its quoted path ("holds 'x', which is not a file of
/// the checkpoint").
using ReplaceCheck = std::function<Status(const std::string &directory)>;

/// `path` without trailing slashes (`ck/` is `ck`), once a folder may be
/// written there: nothing exists there yet (and its parent folder does), or
/// a directory that `replaceable` accepts. The error is one line naming the
/// path and why it is refused.
StatusOr<std::string> checkFolderDestination(const std::string &path,
                                             const ReplaceCheck &replaceable);

class StagedDirectory {
public:
  /// Checks `destination` (checkFolderDestination) and creates the staging
  /// folder beside it.
  static StatusOr<std::unique_ptr<StagedDirectory>> create(const std::string &destination,
                                                           ReplaceCheck replaceable);
  /// Removes the staging folder and its files unless committed.
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory &) = delete;
  StagedDirectory &operator=(const StagedDirectory &) = delete;

  /// The staging folder, where the files are written.
  const std::string &path() const { return path_; }

  /// Checks the destination again (it may have changed meanwhile) and moves
  /// the staging folder into its place, replacing the folder there.
  Status commit();

private:
  StagedDirectory(std::string destination, std::string path, ReplaceCheck replaceable,
                  SignalCleanup cleanup)
      : destination_(std::move(destination)), path_(std::move(path)),
        replaceable_(std::move(replaceable)), cleanup_(std::move(cleanup)) {}

  std::string destination_, path_;
  ReplaceCheck replaceable_;
  SignalCleanup cleanup_;
  bool committed_ = false;
};

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_STAGEDDIRECTORY_H
