//===- CommandLine.cpp - the driver's flags, parsed with llvm::cl ---------===//
#include "compiler/Driver/CommandLine.h"

#include "compiler/Driver/Diagnostics.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <unistd.h>

namespace cl = llvm::cl;
using llvm::StringRef;

namespace shardc::driver {
namespace {

/// Shows `option` under --help-hidden only, unless it is one of the tool's
/// or llvm::cl's own (--help, --version).
void hideUnlessListed(cl::Option &option, llvm::ArrayRef<const cl::OptionCategory *> categories) {
  if (option.getOptionHiddenFlag() != cl::NotHidden)
    return;
  // llvm::cl keeps its own category (--help, --version) private: known by name.
  for (const cl::OptionCategory *category : option.Categories)
    if (category->getName() == "Generic Options" || llvm::is_contained(categories, category))
      return;
  option.setHiddenFlag(cl::Hidden);
}

/// Redirects stderr into a temporary file while in scope: llvm::cl writes
/// an option's value errors ("requires a value!") to stderr itself rather
/// than to the stream it is given, in a form of its own.
class CapturedStderr {
public:
  CapturedStderr() {
    llvm::errs().flush();
    file_ = std::tmpfile();
    saved_ = file_ ? ::dup(STDERR_FILENO) : -1;
    if (saved_ >= 0 && ::dup2(::fileno(file_), STDERR_FILENO) < 0) {
      ::close(saved_);
      saved_ = -1;
    }
  }
  CapturedStderr(const CapturedStderr &) = delete;
  CapturedStderr &operator=(const CapturedStderr &) = delete;
  ~CapturedStderr() { release(); }

  /// Restores stderr and returns what was written to it meanwhile.
  std::string release() {
    std::string text;
    if (saved_ >= 0) {
      llvm::errs().flush();
      std::fflush(stderr);
      ::dup2(saved_, STDERR_FILENO);
      ::close(saved_);
      saved_ = -1;
      std::rewind(file_);
      char buffer[4096];
      for (size_t read; (read = std::fread(buffer, 1, sizeof buffer, file_)) > 0;)
        text.append(buffer, read);
    }
    if (file_)
      std::fclose(file_);
    file_ = nullptr;
    return text;
  }

private:
  std::FILE *file_ = nullptr;
  int saved_ = -1;
};

/// "--name" for a long option, "-o" for a one-letter one (llvm::cl's spelling).
std::string spelled(StringRef name) { return (name.size() == 1 ? "-" : "--") + name.str(); }

/// The tool's visible flag closest to `flag` ("--pp" -> "--dp"), or "" when
/// none is close.
std::string closestVisibleFlag(StringRef flag) {
  StringRef name = flag.ltrim('-');
  // One edit in a short name ("--pp" for "--tp"), else two or a third of
  // it (a swap, "--itres", is two). shardrun's ClosestFlag says the same.
  const unsigned limit = name.size() < 4 ? 1 : std::max<size_t>(2, name.size() / 3);
  StringRef best;
  unsigned bestDistance = limit + 1;
  for (auto &[key, option] : cl::getRegisteredOptions()) {
    if (key.empty() || option->getOptionHiddenFlag() != cl::NotHidden)
      continue;
    unsigned distance = name.edit_distance(key, /*AllowReplacements=*/true, limit);
    // Ties go to the first name in order: the table's order is a hash's.
    if (distance < bestDistance || (distance == bestDistance && key < best)) {
      bestDistance = distance;
      best = key;
    }
  }
  return best.empty() ? "" : spelled(best);
}

/// llvm::cl's first error line, as one line of ours.
std::string rephrase(StringRef line, StringRef tool) {
  // "Unknown command line argument '--pp=4'.  Try: 'shardc --help'"
  if (line.consume_front("Unknown command line argument '")) {
    StringRef argument = line.substr(0, line.find("'.  Try:"));
    StringRef flag = argument.split('=').first;
    std::string text = "unknown flag '" + flag.str() + "'";
    std::string closest = closestVisibleFlag(flag);
    if (!closest.empty())
      text += "; did you mean '" + closest + "'?";
    return text + " (see " + tool.str() + " --help)";
  }
  // "for the --tp option: requires a value!"
  if (line.consume_front("for the ")) {
    auto [flag, message] = line.split(" option: ");
    message.consume_back("!");
    if (message == "requires a value")
      return flag.str() + " needs a value";
    return flag.str() + ": " + llvm::join(llvm::split(message, "! "), "; ");
  }
  if (line.starts_with("Too many positional arguments"))
    return "more than one model given; expected one (see " + tool.str() + " --help)";
  line.consume_back("!");
  return line.str() + " (see " + tool.str() + " --help)";
}

} // namespace

bool parseToolCommandLine(int argc, char **argv, const ToolCommandLine &commandLine) {
  for (auto &entry : cl::getRegisteredOptions())
    hideUnlessListed(*entry.second, commandLine.categories);
  std::string version = commandLine.version;
  cl::SetVersionPrinter([version](llvm::raw_ostream &os) { os << version; });

  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  CapturedStderr captured;
  bool parsed = cl::ParseCommandLineOptions(argc, argv, commandLine.overview, &errorStream);
  std::string written = captured.release();
  if (parsed) {
    llvm::errs() << written; // nothing of ours: let it through
    return true;
  }
  // Both llvm::cl and its options prefix their lines with the program's file name.
  std::string prefix = llvm::sys::path::filename(argv[0]).str() + ": ";
  for (StringRef text : {StringRef(errors), StringRef(written)}) {
    llvm::SmallVector<StringRef> lines;
    text.split(lines, '\n', -1, /*KeepEmpty=*/false);
    for (StringRef line : lines) {
      line = line.trim();
      if (!line.consume_front(prefix) || line.empty())
        continue;
      printError(commandLine.tool, rephrase(line, commandLine.tool));
      return false;
    }
  }
  printError(commandLine.tool, "cannot parse the command line (see " + commandLine.tool.str() +
                                   " --help)");
  return false;
}

} // namespace shardc::driver
