//===- CompileBinding.cpp - shardc.compile: the compiler from Python ------===//
#include "python/CompileBinding.h"

#include "compiler/Driver/Compile.h"
#include "compiler/Driver/Diagnostics.h"
#include "tools/shardrun/ClosestFlag.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace py = pybind11;
using shardc::driver::CompileOptions;

namespace shardc::python {
namespace {

/// Raised as shardc.Error with `message`.
struct CompileError {
  std::string message;
};

std::string typeName(const py::handle &value) {
  return py::str(py::type::handle_of(value).attr("__name__"));
}

/// A flag's value as its text: a str, a path (bytes or os.PathLike,
/// decoded as os.fsdecode does) or a number (as Python prints it), without
/// NUL characters (which no flag holds). Booleans are refused: `tp=True` is
/// a mistake.
std::string flagText(const std::string &name, const py::handle &value) {
  std::string text;
  if (py::isinstance<py::str>(value) || py::isinstance<py::bytes>(value) ||
      py::hasattr(value, "__fspath__"))
    text = py::str(py::module_::import("os").attr("fsdecode")(value));
  else if (!py::isinstance<py::bool_>(value) &&
           (py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value)))
    text = py::str(value);
  else
    throw CompileError{name + ": expected a str, a number or a path, got " + typeName(value)};
  if (text.find('\0') != std::string::npos)
    throw CompileError{name + ": holds a NUL character"};
  return text;
}

/// A sequence's items as flag texts, each passed through `item`.
std::vector<std::string> listText(const std::string &name, const py::handle &value,
                                  const std::function<std::string(const py::handle &)> &item) {
  if (py::isinstance<py::str>(value) || py::isinstance<py::bytes>(value) ||
      !py::isinstance<py::sequence>(value))
    throw CompileError{name + ": expected a list, got " + typeName(value)};
  std::vector<std::string> texts;
  for (const py::handle &element : value)
    texts.push_back(item(element));
  return texts;
}

/// The values of a repeatable flag, as written: one str, or a list of them.
std::vector<std::string> repeated(const std::string &name, const py::handle &value) {
  if (py::isinstance<py::str>(value))
    return {flagText(name, value)};
  return listText(name, value, [&](const py::handle &item) { return flagText(name, item); });
}

/// `--dim`-style values from a dict ({"seq": 32} -> "seq=32", the value
/// through `valueText`) or as written ("NAME=VALUE", or a list of them).
std::vector<std::string> bindings(const std::string &name, const py::handle &value,
                                  const std::function<std::string(const py::handle &)> &valueText) {
  if (!py::isinstance<py::dict>(value))
    return repeated(name, value);
  std::vector<std::string> texts;
  for (const auto &[key, item] : value.cast<py::dict>())
    texts.push_back(flagText(name, key) + "=" + valueText(item));
  return texts;
}

/// A shape as --input-shape writes it: [2, 16] -> "2x16", [] -> "scalar".
std::string shapeText(const std::string &name, const py::handle &value) {
  if (py::isinstance<py::str>(value))
    return flagText(name, value);
  std::vector<std::string> dims = listText(name, value, [&](const py::handle &dim) {
    return flagText(name, dim);
  });
  if (dims.empty())
    return "scalar";
  std::string text;
  for (const std::string &dim : dims)
    text += (text.empty() ? "" : "x") + dim;
  return text;
}

/// Items joined by commas: betas=(0.9, 0.95), constant values [1, 2, 3].
std::string commaText(const std::string &name, const py::handle &value) {
  if (py::isinstance<py::str>(value) || py::isinstance<py::bytes>(value) ||
      py::hasattr(value, "__fspath__") || !py::isinstance<py::sequence>(value))
    return flagText(name, value);
  std::string text;
  for (const std::string &item :
       listText(name, value, [&](const py::handle &element) { return flagText(name, element); }))
    text += (text.empty() ? "" : ",") + item;
  return text;
}

using Setter = std::function<void(CompileOptions &, const std::string &, const py::handle &)>;

Setter text(std::string CompileOptions::*field) {
  return [field](CompileOptions &options, const std::string &name, const py::handle &value) {
    options.*field = flagText(name, value);
  };
}

Setter flag(bool CompileOptions::*field) {
  return [field](CompileOptions &options, const std::string &name, const py::handle &value) {
    if (!py::isinstance<py::bool_>(value))
      throw CompileError{name + ": expected True or False, got " + typeName(value)};
    options.*field = value.cast<bool>();
  };
}

Setter list(std::vector<std::string> CompileOptions::*field) {
  return [field](CompileOptions &options, const std::string &name, const py::handle &value) {
    options.*field = repeated(name, value);
  };
}

/// The keywords, each the flag it stands for. A value of None is a flag
/// not given.
const std::map<std::string, Setter> &keywords() {
  static const std::map<std::string, Setter> table = {
      {"emit", text(&CompileOptions::emit)},
      {"target", text(&CompileOptions::target)},
      {"cuda_arch", text(&CompileOptions::cudaArch)},
      {"dtype", text(&CompileOptions::dtype)},
      {"dims",
       [](CompileOptions &options, const std::string &name, const py::handle &value) {
         options.dims = bindings(name, value, [&](const py::handle &n) { return flagText(name, n); });
       }},
      {"input_shapes",
       [](CompileOptions &options, const std::string &name, const py::handle &value) {
         options.inputShapes =
             bindings(name, value, [&](const py::handle &shape) { return shapeText(name, shape); });
       }},
      {"constant_inputs",
       [](CompileOptions &options, const std::string &name, const py::handle &value) {
         options.constantInputs =
             bindings(name, value, [&](const py::handle &item) { return commaText(name, item); });
       }},
      {"tp", text(&CompileOptions::tensorParallel)},
      {"dp", text(&CompileOptions::dataParallel)},
      {"ep", text(&CompileOptions::expertParallel)},
      {"pp", text(&CompileOptions::pipelineParallel)},
      {"sp", flag(&CompileOptions::sequenceParallel)},
      {"mesh",
       [](CompileOptions &options, const std::string &name, const py::handle &value) {
         if (!py::isinstance<py::dict>(value)) {
           options.mesh = flagText(name, value);
           return;
         }
         std::string mesh;
         for (const std::string &axis :
              bindings(name, value, [&](const py::handle &n) { return flagText(name, n); }))
           mesh += (mesh.empty() ? "" : ",") + axis;
         options.mesh = mesh;
       }},
      {"microbatches", text(&CompileOptions::microbatches)},
      {"schedule", text(&CompileOptions::schedule)},
      {"virtual_stages", text(&CompileOptions::virtualStages)},
      {"recompute", text(&CompileOptions::recompute)},
      // A list names one node per item (its commas escaped as the flag
      // wants them); a str is the flag's own NODE,... text.
      {"pp_split",
       [](CompileOptions &options, const std::string &name, const py::handle &value) {
         if (py::isinstance<py::str>(value)) {
           options.pipelineSplits = {flagText(name, value)};
           return;
         }
         options.pipelineSplits = listText(name, value, [&](const py::handle &node) {
           std::string escaped;
           for (char c : flagText(name, node))
             escaped += c == ',' ? std::string("\\,") : std::string(1, c);
           return escaped;
         });
       }},
      {"moe_capacity_factor", text(&CompileOptions::moeCapacityFactor)},
      {"max_ranks",
       [](CompileOptions &options, const std::string &name, const py::handle &value) {
         if (py::isinstance<py::bool_>(value) || !py::isinstance<py::int_>(value))
           throw CompileError{name + ": expected an int, got " + typeName(value)};
         options.maxRanks = value.cast<int64_t>();
       }},
      {"weights_dirs", list(&CompileOptions::weightsDirs)},
      {"device",
       [](CompileOptions &options, const std::string &name, const py::handle &value) {
         options.device = flagText(name, value);
         options.deviceGiven = true;
       }},
      {"device_memory", text(&CompileOptions::deviceMemory)},
      {"report", text(&CompileOptions::reportPath)},
      {"verbose", flag(&CompileOptions::verbose)},
      {"train", flag(&CompileOptions::train)},
      {"loss", text(&CompileOptions::loss)},
      {"optimizer", text(&CompileOptions::optimizer)},
      {"lr", text(&CompileOptions::learningRate)},
      {"betas",
       [](CompileOptions &options, const std::string &name, const py::handle &value) {
         options.betas = commaText(name, value);
       }},
      {"eps", text(&CompileOptions::epsilon)},
      {"weight_decay", text(&CompileOptions::weightDecay)},
      {"no_decay_1d", flag(&CompileOptions::noDecay1d)},
      {"momentum", text(&CompileOptions::momentum)},
      {"grad_clip", text(&CompileOptions::gradClip)},
      {"freeze", list(&CompileOptions::freeze)},
      {"untie", flag(&CompileOptions::untie)},
      {"zero", text(&CompileOptions::zero)},
      {"fsdp", flag(&CompileOptions::fsdp)},
      {"zero_group", text(&CompileOptions::zeroGroup)},
      {"bucket_mb", text(&CompileOptions::bucketMb)},
  };
  return table;
}

CompileOptions compileOptions(const py::handle &model, const py::handle &output,
                              const py::kwargs &kwargs) {
  CompileOptions options;
  options.modelPath = flagText("model", model);
  options.outputPath = flagText("output", output);
  std::vector<std::string> known;
  for (const auto &[name, setter] : keywords())
    known.push_back(name);
  for (const auto &[key, value] : kwargs) {
    std::string name = key.cast<std::string>();
    auto keyword = keywords().find(name);
    if (keyword == keywords().end()) {
      std::string closest = shardrun::closestFlag(name, known);
      throw CompileError{"unknown keyword '" + name + "'" +
                         (closest.empty() ? "" : "; did you mean '" + closest + "'?")};
    }
    if (!value.is_none())
      keyword->second(options, name, value);
  }
  return options;
}

/// One compile at a time: the driver's diagnostics go to one stream per
/// process while redirected.
std::mutex compiling;

void compile(const py::object &error, const py::handle &model, const py::handle &output,
             const py::kwargs &kwargs) {
  CompileOptions options;
  try {
    options = compileOptions(model, output, kwargs);
  } catch (const CompileError &bad) {
    PyErr_SetString(error.ptr(), ("shardc.compile: " + bad.message).c_str());
    throw py::error_already_set();
  }
  std::string messages;
  int status;
  {
    py::gil_scoped_release released;
    std::lock_guard<std::mutex> lock(compiling);
    llvm::raw_string_ostream stream(messages);
    driver::DiagnosticsTo redirect(stream);
    status = driver::compile(options, "shardc.compile");
  }
  // The errors (one line each) raise; what else the driver printed
  // (warnings, the --verbose summary) is the caller's to see.
  std::string errors, rest;
  std::istringstream lines(messages);
  for (std::string line; std::getline(lines, line);)
    (line.rfind("shardc.compile: error: ", 0) == 0 ? errors : rest) += line + "\n";
  if (!rest.empty())
    py::module_::import("sys").attr("stderr").attr("write")(rest);
  if (status != 0) {
    if (!errors.empty())
      errors.pop_back();
    PyErr_SetString(error.ptr(), errors.empty() ? "shardc.compile failed" : errors.c_str());
    throw py::error_already_set();
  }
}

} // namespace

void defineCompile(py::module_ &module, const py::object &error) {
  // The pass manager's command-line options (printing, timing, crash
  // reproducers) must exist for the driver to apply them; the shardc tool
  // registers them before parsing its flags, as here at import.
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  module.def(
      "compile",
      [error](const py::object &model, const py::object &output, const py::kwargs &kwargs) {
        compile(error, model, output, kwargs);
      },
      py::arg("model"), py::arg("output"),
      "Compiles the model (.onnx, .onnxtext or .mlir) as the shardc tool does, writing the "
      "artifact folder `output` (or with emit='graph' etc. that phase's MLIR file). Each "
      "keyword is one of shardc's flags, '-' written '_': tp=2, dp=2, sp=True, "
      "mesh={'pp': 2, 'tp': 2}, dims={'seq': 32}, input_shapes={'x': [2, 16]}, "
      "constant_inputs={'k': [4]}, pp_split=['node'], weights_dirs=[...], report='plan.json', "
      "train=True, loss='causal-lm:logits', betas=(0.9, 0.95), freeze=['wte'], ...; None "
      "leaves a flag out. Errors raise shardc.Error");
}

} // namespace shardc::python
