//===- FlagArgs.h - a tool's arguments, flag by flag ------------*- C++ -*-===//
//
// The runtime's tools (shardrun, shardc-calibrate) link no LLVM, so they
// read their own flags; this is the walk they share: "--flag value" and
// "--flag=value" alike, a missing value reported through the tool's `die`.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TOOLS_SHARDRUN_FLAGARGS_H
#define SHARDC_TOOLS_SHARDRUN_FLAGARGS_H

#include <optional>
#include <string>
#include <vector>

namespace shardc::shardrun {

class FlagArgs {
public:
  using Die = void (*)(const std::string &message);

  FlagArgs(int argc, char **argv, Die die) : args_(argv + 1, argv + argc), die_(die) {}

  /// Moves to the next argument; false after the last.
  bool next() {
    if (++index_ >= args_.size())
      return false;
    arg_ = args_[index_];
    inlineValue_.reset();
    if (size_t equals = arg_.find('='); arg_.rfind("--", 0) == 0 && equals != std::string::npos) {
      inlineValue_ = arg_.substr(equals + 1);
      arg_ = arg_.substr(0, equals);
    }
    return true;
  }

  /// The current argument, without an "=value" part.
  const std::string &arg() const { return arg_; }

  /// The current flag's value: after "=", else the next argument.
  std::string value() {
    if (inlineValue_)
      return *inlineValue_;
    if (index_ + 1 >= args_.size()) {
      die_(arg_ + " needs a value"); // exits
      return {};
    }
    return args_[++index_];
  }

private:
  std::vector<std::string> args_;
  Die die_;
  size_t index_ = size_t(-1);
  std::string arg_;
  std::optional<std::string> inlineValue_;
};

} // namespace shardc::shardrun

#endif // SHARDC_TOOLS_SHARDRUN_FLAGARGS_H
