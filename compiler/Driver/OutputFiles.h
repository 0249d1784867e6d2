//===- OutputFiles.h - the driver's output paths, checked and written -*- C++ -*-===//
//
// shardc's outputs replace only what shardc may replace (an artifact it
// wrote, a regular file), and are checked before compiling, so that a bad
// path costs nothing and a good one is not followed by an error after the
// artifact was written.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_DRIVER_OUTPUTFILES_H
#define SHARDC_COMPILER_DRIVER_OUTPUTFILES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace shardc::driver {

/// Fails (one line) when the file `path` may not be written: a directory, a
/// device, a missing folder (runtime/io/AtomicFile.h, replaceableFile).
llvm::Error checkOutputFile(llvm::StringRef path);

/// Writes `text` to the file `path` through a staging file beside it and
/// one rename: a failure leaves what was there untouched.
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef text);

} // namespace shardc::driver

#endif
