//===- TrainLoop.cpp - shardrun --train: steps, their lines, checkpoints --===//
#include "tools/shardrun/TrainLoop.h"

#include "runtime/io/MappedFile.h" // errnoMessage
#include "runtime/session/OnnxExport.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>

namespace shardc::shardrun {

using namespace rt;

namespace {

/// A float for the log: enough digits to give the float32 back, and null
/// where JSON has no number (the line printed says nan or inf).
std::string jsonNumber(float value) {
  if (!std::isfinite(value))
    return "null";
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", double(value));
  return text;
}

struct CloseFile {
  void operator()(std::FILE *file) const { std::fclose(file); }
};

} // namespace

void trainLoop(const Options &options, const Session &session, Training &training,
               TrainingData &data, bool reports, const std::string &how,
               const Failure &failEverywhere, const Failure &failAlone) {
  if (!options.resume.empty()) {
    auto checkpoint = readCheckpoint(options.resume, session.layout());
    if (!checkpoint)
      failEverywhere(checkpoint.message());
    if (Status status = training.resume(*checkpoint); !status)
      failAlone(status.message());
  }
  // An export that cannot be written fails before the steps, not after them.
  if (!options.exportOnnx.empty()) {
    auto plan = readExportPlan(session.layout());
    if (!plan)
      failEverywhere(plan.message());
    if (Status status = checkExportDestination(options.exportOnnx); !status)
      failEverywhere(status.message());
  }
  // A resumed run's log goes on after the lines of the steps before.
  std::unique_ptr<std::FILE, CloseFile> log;
  if (reports && !options.log.empty()) {
    log.reset(std::fopen(options.log.c_str(), options.resume.empty() ? "w" : "a"));
    if (!log)
      failAlone(options.log + ": cannot be written: " + io::errnoMessage(errno));
  }
  const int64_t first = training.steps() + 1;
  // The last checkpoint this run read or wrote: "ck at step 6".
  int64_t saved = -1;
  std::string savedIn, checkpoint;
  auto remember = [&](const std::string &directory) {
    saved = training.steps();
    savedIn = directory;
    checkpoint = directory + " at step " + std::to_string(saved);
  };
  if (!options.resume.empty())
    remember(options.resume);
  std::vector<double> seconds;
  for (int64_t step = first; step <= options.steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    auto loss = training.step(data.inputs(step));
    if (!loss)
      failAlone(loss.message());
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (reports) {
      std::printf("step %lld loss %.6g grad_norm %.6g\n", static_cast<long long>(step),
                  double(loss->loss), double(loss->gradNorm));
      std::fflush(stdout);
    }
    if (log) {
      std::fprintf(log.get(), "{\"step\": %lld, \"loss\": %s, \"grad_norm\": %s, \"ms\": %.3f}\n",
                   static_cast<long long>(step), jsonNumber(loss->loss).c_str(),
                   jsonNumber(loss->gradNorm).c_str(), seconds.back() * 1e3);
      if (std::fflush(log.get()) != 0)
        failAlone(options.log + ": cannot be written: " + io::errnoMessage(errno));
    }
    // Every rank has the loss, so every rank stops here, before a save
    // could replace the last good checkpoint with these states.
    if (!std::isfinite(loss->loss))
      failEverywhere(
          "step " + std::to_string(step) + ": the loss is " +
          (std::isnan(loss->loss) ? "nan" : "inf") + "; stopping" +
          (checkpoint.empty() ? "" : " (the last checkpoint, " + checkpoint + ", stays)"));
    if (!options.save.empty() && options.saveEvery && step % options.saveEvery == 0) {
      if (Status status = training.save(options.save); !status)
        failAlone(status.message());
      remember(options.save);
    }
  }
  if (!options.save.empty() && (saved != training.steps() || savedIn != options.save)) {
    if (Status status = training.save(options.save); !status)
      failAlone(status.message());
    remember(options.save);
  }
  if (!options.exportOnnx.empty())
    if (Status status = training.exportOnnx(options.exportOnnx); !status)
      failEverywhere(status.message());
  if (!reports)
    return;
  if (seconds.empty()) {
    std::printf("shardrun: nothing to train: the checkpoint is at step %lld of --steps %lld\n",
                static_cast<long long>(training.steps()), static_cast<long long>(options.steps));
  } else {
    std::sort(seconds.begin(), seconds.end());
    std::string ranks = session.layout().describe();
    if (session.layout().ranks > 1)
      ranks += " " + how;
    const std::string saves = options.save.empty() ? "" : ", checkpoint " + checkpoint;
    std::printf("shardrun: trained steps %lld to %lld, %s, %.3f ms/step (median)%s\n",
                static_cast<long long>(first), static_cast<long long>(options.steps), ranks.c_str(),
                seconds[seconds.size() / 2] * 1e3, saves.c_str());
  }
  std::fflush(stdout);
}

} // namespace shardc::shardrun
