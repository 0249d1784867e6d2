//===- CommandLine.h - the driver's flags, parsed with llvm::cl -*- C++ -*-===//
//
// llvm::cl registers hundreds of LLVM back-end and MLIR options in every tool
// that links libLLVM, and reports its parse errors in several lines, some of
// them written straight to stderr. This wraps it so that a tool's --help
// lists its own options, --help-hidden everything else, and every parse error
// is one `TOOL: error: ...` line.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_DRIVER_COMMANDLINE_H
#define SHARDC_COMPILER_DRIVER_COMMANDLINE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/CommandLine.h"

#include <string>

namespace shardc::driver {

/// What a tool tells the parser about itself.
struct ToolCommandLine {
  llvm::StringRef tool;     // the error prefix: "shardc"
  llvm::StringRef overview; // the first line of --help
  /// The tool's own options: --help lists these (and --help, --version);
  /// every other option is shown by --help-hidden only.
  llvm::ArrayRef<const llvm::cl::OptionCategory *> categories;
  std::string version; // what --version prints
};

/// Parses argv into the registered options. On a parse error prints one line
/// (an unknown flag named once, with the closest of the tool's own flags) and
/// returns false. --help and --version print and exit.
bool parseToolCommandLine(int argc, char **argv, const ToolCommandLine &commandLine);

} // namespace shardc::driver

#endif
