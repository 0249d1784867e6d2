//===- ShardcModule.cpp - `import shardc`: compile and run from Python ---===//
//
// The runtime session with numpy in and out, shaped like onnxruntime's
// InferenceSession, and the compiler (CompileBinding.h):
//
//   import shardc
//   shardc.compile("model.onnx", "out4/", tp=2, dp=2, dims={"seq": 32})
//   session = shardc.Session("out/")                     # one device
//   session = shardc.Session("out4/", ranks="threads")   # a mesh, ranks as threads
//   outputs = session.run({"input_ids": x})              # {name: numpy array}
//
// The artifact is opened, checked and loaded once, in the constructor; the
// ranks' executors are prepared once, by the first run (ThreadedRanks.h), and
// every run after it only copies the inputs in and the outputs out. A run
// that fails drops them, and the next run prepares afresh. Errors raise
// shardc.Error (a RuntimeError) with the runtime's one line.
//
// A training artifact (shardc --train) runs its step instead, on ranks
// prepared once by the first call (Training.h), whose states carry over
// from step to step:
//
//   loss = session.train_step({"input_ids": x, "labels": y})   # float
//   session.save("ck/")            # a checkpoint, as shardrun --save writes
//   session.export_onnx("t.onnx")  # the trained model, as --export-onnx writes
//   session.resume("ck/")          # its states back; returns its step
//
// A step that fails loses the states: every later call raises that error.
//===----------------------------------------------------------------------===//
#include "python/CompileBinding.h"
#include "runtime/comm/InProcess.h"
#include "runtime/cpu/CpuBackend.h"
#include "runtime/session/Session.h"
#include "runtime/session/ThreadedRanks.h"
#include "runtime/session/Training.h"
#include "tools/Version.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

namespace py = pybind11;
using namespace shardc::rt;

namespace {

/// What the binding raises, as shardc.Error.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(const Status &status) {
  if (!status)
    throw Error(status.message());
}

/// The type name of `value`, for errors ("NoneType").
std::string typeName(const py::handle &value) {
  return py::str(py::type::handle_of(value).attr("__name__"));
}

/// The argument `name` as a path: a str, bytes or os.PathLike naming a
/// file (decoded as os.fsdecode does), without NUL characters (which no
/// file name holds). Anything else raises shardc.Error naming the argument,
/// never pybind's TypeError.
std::filesystem::path pathArgument(const char *name, const py::handle &value) {
  if (!py::isinstance<py::str>(value) && !py::isinstance<py::bytes>(value) &&
      !py::hasattr(value, "__fspath__"))
    throw Error(std::string(name) + ": expected a path (str, bytes or os.PathLike), got " +
                typeName(value));
  py::object text = py::module_::import("os").attr("fsdecode")(value);
  std::string path = text.cast<std::string>();
  if (path.find('\0') != std::string::npos)
    throw Error(std::string(name) + ": holds a NUL character");
  return path;
}

/// The int argument `name` within [low, high] (bool refused).
int intArgument(const char *name, const py::handle &value, int low, int high,
                const std::string &expected) {
  if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value))
    throw Error(std::string(name) + ": expected an int, got " + typeName(value));
  int overflow = 0;
  long long number = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow || number < low || number > high)
    throw Error(std::string(name) + "=" + std::string(py::str(value)) + ": expected " + expected);
  return int(number);
}

/// The feeds of a run or step: a dict {input name: numpy array}.
py::dict feedsArgument(const py::handle &value) {
  if (!py::isinstance<py::dict>(value))
    throw Error("feeds: expected a dict {input name: numpy array}, got " + typeName(value));
  return py::reinterpret_borrow<py::dict>(value);
}

/// A numpy array's bytes, row-major, as the runtime's tensor.
HostTensor toHost(const std::string &name, const py::handle &value) {
  py::array array = py::array::ensure(value, py::array::c_style);
  if (!array)
    throw Error("input '" + name + "': expected a numpy array");
  // The runtime reads native byte order: a big-endian array's values are
  // converted (numpy swaps the bytes), never read as they lie.
  if (!py::bool_(array.dtype().attr("isnative")))
    array = py::array::ensure(array.attr("astype")(array.dtype().attr("newbyteorder")("=")),
                              py::array::c_style);
  std::string dtypeName = py::str(array.dtype().attr("name"));
  std::optional<DType> dtype = dtypeFromName(dtypeName);
  if (!dtype)
    throw Error("input '" + name + "': numpy dtype " + dtypeName + " has no runtime type");
  Shape shape(array.shape(), array.shape() + array.ndim());
  HostTensor tensor(*dtype, shape);
  std::memcpy(tensor.bytes.data(), array.data(), tensor.bytes.size());
  return tensor;
}

py::array toNumpy(const HostTensor &tensor) {
  std::vector<py::ssize_t> shape(tensor.shape.begin(), tensor.shape.end());
  py::array array(py::dtype(dtypeName(tensor.dtype)), shape);
  std::memcpy(array.mutable_data(), tensor.bytes.data(), tensor.bytes.size());
  return array;
}

/// An artifact opened for running: every rank this process runs is loaded.
class PySession {
public:
  /// Opens `path` (the arguments as Python gave them: each checked here,
  /// so that a wrong one raises shardc.Error).
  PySession(const py::object &path, const py::object &rankArgument, const py::object &threads)
      : threads_(intArgument("threads", threads, 0, cpu::kMaxThreads,
                             "0 (one per core) to " + std::to_string(cpu::kMaxThreads))) {
    const std::filesystem::path directory = pathArgument("path", path);
    if (!rankArgument.is_none() &&
        (!py::isinstance<py::str>(rankArgument) || rankArgument.cast<std::string>() != "threads"))
      throw Error("ranks=" + std::string(py::repr(rankArgument)) +
                  ": expected 'threads' (or none, for one device)");
    const bool ranks = !rankArgument.is_none();
    auto opened = Session::open(directory.string());
    check(opened.status());
    session_ = std::make_unique<Session>(std::move(*opened));
    const int count = ranks ? session_->layout().ranks : 1;
    if (!ranks && session_->layout().ranks > 1)
      throw Error("the artifact was compiled for " + session_->layout().describe() +
                  "; run its ranks as threads with shardc.Session(..., ranks=\"threads\")");
    check(session_->checkLaunch(count));
    check(session_->planDevice());
    check(session_->loadRanks(0, count));
  }

  py::dict run(const py::object &feedArgument) {
    const py::dict feeds = feedsArgument(feedArgument);
    if (session_->layout().training)
      throw Error(session_->layout().directory +
                  ": is a training artifact: each run is a step, taken with train_step(feeds)");
    std::vector<HostTensor> tensors;
    const std::vector<const HostTensor *> ordered = orderFeeds(feeds, tensors);
    std::vector<RankRun> runs;
    {
      py::gil_scoped_release released;
      std::lock_guard<std::mutex> serialized(busy_);
      shareCores();
      if (!prepared_) {
        auto prepared = ThreadedRanks::prepare(*session_, comm::InProcessWorld::kDefaultTimeout);
        check(prepared.status());
        prepared_ = std::move(*prepared);
        ++prepares_;
      }
      Status status = prepared_->run(ordered, RunOptions{}, runs);
      if (!status)
        prepared_.reset(); // its world is aborted
      check(status);
    }
    // The rank that holds the whole outputs (a pipeline's last stage).
    const RankRun &run = runs[session_->outputRank()];
    py::dict outputs;
    for (size_t i = 0; i < run.outputs.size(); ++i)
      outputs[py::str(session_->outputs()[i].name)] = toNumpy(run.outputs[i]);
    return outputs;
  }

  float trainStep(const py::object &feedArgument) {
    const py::dict feeds = feedsArgument(feedArgument);
    std::vector<HostTensor> tensors;
    const std::vector<const HostTensor *> ordered = orderFeeds(feeds, tensors);
    py::gil_scoped_release released;
    std::lock_guard<std::mutex> serialized(busy_);
    auto loss = training().step(ordered);
    check(loss.status());
    return loss->loss;
  }

  void save(const py::object &path) {
    const std::filesystem::path directory = pathArgument("path", path);
    py::gil_scoped_release released;
    std::lock_guard<std::mutex> serialized(busy_);
    check(training().save(directory.string()));
  }

  void exportOnnx(const py::object &file) {
    const std::filesystem::path path = pathArgument("path", file);
    py::gil_scoped_release released;
    std::lock_guard<std::mutex> serialized(busy_);
    check(training().exportOnnx(path.string()));
  }

  int64_t resume(const py::object &path) {
    const std::filesystem::path directory = pathArgument("path", path);
    py::gil_scoped_release released;
    std::lock_guard<std::mutex> serialized(busy_);
    auto checkpoint = readCheckpoint(directory.string(), session_->layout());
    check(checkpoint.status());
    check(training().resume(*checkpoint));
    return checkpoint->step;
  }

  std::vector<std::string> inputNames() const { return namesOf(session_->inputs()); }
  std::vector<std::string> outputNames() const { return namesOf(session_->outputs()); }
  int ranks() const { return session_->layout().ranks; }
  int prepares() const { return prepares_; }

private:
  /// `feeds` as tensors (kept in `tensors`), in the artifact's input order.
  std::vector<const HostTensor *> orderFeeds(const py::dict &feeds,
                                             std::vector<HostTensor> &tensors) const {
    tensors.reserve(feeds.size());
    NamedInputs named;
    for (const auto &[key, value] : feeds) {
      std::string name = py::str(key);
      tensors.push_back(toHost(name, value));
      named.emplace_back(name, &tensors.back());
    }
    auto ordered = session_->orderInputs(named);
    check(ordered.status());
    return *ordered;
  }

  /// The cores are shared: each rank's kernels (and GEMMs) get a share.
  void shareCores() const {
    cpu::setThreads(threads_);
    cpu::setThreads(std::max(1, cpu::threads() / session_->layout().ranks));
  }

  /// The training of a training artifact, its ranks prepared by the first call.
  Training &training() {
    if (!training_) {
      shareCores();
      auto prepared = Training::prepare(*session_, comm::InProcessWorld::kDefaultTimeout);
      check(prepared.status());
      training_ = std::move(*prepared);
    }
    return *training_;
  }

  static std::vector<std::string> namesOf(const std::vector<TensorSignature> &signature) {
    std::vector<std::string> names;
    for (const TensorSignature &tensor : signature)
      names.push_back(tensor.name);
    return names;
  }

  std::unique_ptr<Session> session_;
  int threads_;
  /// Held by each call that runs the ranks or touches their state, with the
  /// GIL released: calls from several Python threads take turns, since the
  /// prepared ranks, their arenas and the training state are one per
  /// session (a session per thread runs in parallel).
  std::mutex busy_;
  /// Declared after session_, whose programs they run: destroyed first.
  std::unique_ptr<ThreadedRanks> prepared_;
  std::unique_ptr<Training> training_;
  int prepares_ = 0;
};

} // namespace

PYBIND11_MODULE(shardc, module) {
  module.doc() = "Compile models with shardc and run its artifacts (numpy in, numpy out)";
  module.attr("__version__") = SHARDC_VERSION;
  auto &error = py::register_exception<Error>(module, "Error", PyExc_RuntimeError);
  shardc::python::defineCompile(module, error);
  py::class_<PySession>(module, "Session")
      .def(py::init<const py::object &, const py::object &, const py::object &>(),
           py::arg("path"), py::arg("ranks") = py::none(), py::arg("threads") = 0,
           "Opens the artifact folder `path`: one device, or with ranks='threads' every rank "
           "of its mesh as a thread of this process; `threads` CPU threads in all (0: every "
           "core), shared by the ranks")
      .def("run", &PySession::run, py::arg("feeds"),
           "Runs once: {input name: numpy array} in, {output name: numpy array} out")
      .def("train_step", &PySession::trainStep, py::arg("feeds"),
           "Runs a training artifact's next step on the batch {input name: numpy array}: "
           "the loss before its update")
      .def("save", &PySession::save, py::arg("path"),
           "Saves a training artifact's states as the checkpoint folder `path` (replacing "
           "only a checkpoint that holds nothing else)")
      .def("export_onnx", &PySession::exportOnnx, py::arg("path"),
           "Writes the source model with a training artifact's trained weights (tied copies "
           "too) as the ONNX file `path`, for onnxruntime (replacing only a model it exported)")
      .def("resume", &PySession::resume, py::arg("path"),
           "Loads the states of the checkpoint folder `path` (saved for the same model, mesh "
           "and training setup): the step it was saved at")
      .def_property_readonly("input_names", &PySession::inputNames)
      .def_property_readonly("output_names", &PySession::outputNames)
      .def_property_readonly("ranks", &PySession::ranks)
      .def_property_readonly("prepares", &PySession::prepares,
                             "How many times the ranks were prepared: once, by the first run "
                             "(again only after a run that failed)");
}
