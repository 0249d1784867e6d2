//===- PipelineReport.h - a pipelined plan's stages, cuts and schedule -*- C++ -*-===//
//
// The `pipeline` section of a report (and its lines in the summary): per
// stage what the stage search estimated (dist.stage_estimate) beside what
// the report's own per-op costs give; per transfer its bytes; the schedule's
// step time and bubble beside the textbook bubble formula; and the uniform
// layer split (UniformSplit.h) priced with the same per-op costs as ours, so
// that the two slowest stages compare like with like.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_REPORT_PIPELINEREPORT_H
#define SHARDC_COMPILER_REPORT_PIPELINEREPORT_H

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <set>
#include <map>
#include <string>
#include <vector>

namespace shardc::report {

struct StageReport {
  std::string firstNode, lastNode; ///< ONNX nodes of its first and last op
  std::set<unsigned> layers;
  /// From the report's walk of the stage function, per rank and micro-batch.
  int64_t paramBytes = 0;
  /// A training step's gradients and optimizer states (masters included).
  int64_t gradBytes = 0, optimizerBytes = 0;
  /// The trained parameters (elements of the whole tensors) it updates: Ψ of
  /// ZeRO's formulas for the stage.
  int64_t parameters = 0;
  int64_t workingSetBytes = 0; ///< peak live activations of one micro-batch
  int64_t gatheredBytes = 0;   ///< ZeRO-3's weights gathered in flight, at their peak
  double computeSeconds = 0;
  double commSeconds = 0; ///< its collectives (transfers are the link's)
  /// The stage search's estimate (dist.stage_estimate).
  double seconds = 0, sendSeconds = 0;
  int64_t activationBytes = 0; ///< with the micro-batches in flight
  /// A training step's compute by part: per micro-batch the forward and the
  /// backward, once per step the update.
  double forwardSeconds = 0, backwardSeconds = 0, updateSeconds = 0;
  /// A training stage's collectives by kind: per micro-batch those of its
  /// forward and of its backward, per step those of its update (the
  /// gradients' sums and the optimizer's); inference's are its forward's.
  std::map<std::string, double> forwardComm, backwardComm, updateComm;
  /// Its backward_input runs its forward again first (--recompute).
  bool recomputed = false;
  /// The model's forward FLOPs in it over the step (attention whole).
  double forwardFlops = 0;
  /// A training stage's activations kept per micro-batch in flight (the
  /// stage search's), and Korthikanti et al.'s count for its layers.
  int64_t keptBytes = 0;
  double korthikantiBytes = 0;
};

struct TransferReport {
  int64_t id = 0, from = 0, to = 0;
  std::string source; ///< the ONNX node computing the value
  int64_t bytes = 0;  ///< per rank and micro-batch
  double seconds = 0;
};

struct PipelineFigures {
  std::string schedule;
  /// A training step's --recompute policy (StageReport::recomputed: what
  /// it chose per stage).
  std::string recompute = "selective";
  int64_t pipelineRanks = 1, virtualStages = 1, microbatches = 1;
  int64_t stageRanks = 1; ///< ranks per stage (its dp x tp)
  double stepSeconds = 0; ///< dist.step_seconds
  std::vector<StageReport> stages;
  std::vector<TransferReport> transfers;
  size_t layers = 0;
  std::vector<double> uniformSeconds; ///< per stage of the uniform split

  bool training = false;

  bool interleaved() const { return schedule == "interleaved"; }
  /// The idle share of balanced stages with free sends: (p-1)/(m+p-1) for
  /// gpipe and 1f1b, (p-1)/(v*m+p-1) interleaved; training's zero-bubble
  /// schedules with F = B = W: (p-1)/(3m+p-1) for zb-h1 (it idles
  /// (p-1)(F+B-W)), 0 for zb-h2 in its steady state.
  double bubbleFormula() const;
  /// A training pipeline: its schedule (Schedule.h) run on the stages'
  /// forward, backward and update seconds, each with its collectives (no
  /// overlap), the backward split evenly into B and W (a linear's input and
  /// weight gradients cost one forward GEMM each), a recomputed stage's
  /// forward and its collectives run again before B; sends are free. None
  /// without training or compute.
  struct Simulated {
    double stepSeconds = 0;
    double bubble = 0; ///< the largest idle share over the pp ranks
    /// The busiest pp rank, whose idle time is the step's least.
    int64_t busiestRank = 0;
  };
  std::optional<Simulated> simulate() const;
  /// The idle share of a pp rank's estimated step: 1 - M * sum(C_s) / (P * step);
  /// a training pipeline's, simulated (simulate()).
  double bubble() const;
  /// The global ranks running `stage` (pp coordinate outermost).
  std::vector<int64_t> ranksOf(size_t stage) const;
  /// A training pipeline's step by what its busiest pp rank spends it on
  /// (StepBreakdown); nullopt where simulate() has none.
  std::optional<struct StepBreakdown> breakdown() const;
};

/// What a step's seconds go to, summing to the step: compute (a training
/// step's forward and backward), the optimizer's compute, collectives by
/// kind (none overlapped), a pipeline's idle time, the runtime's result
/// gathers. Inference pipelines give their stages' pace (M times the
/// slowest, `stages`) and the idle rest.
struct StepBreakdown {
  double compute = 0, optimizer = 0, stages = 0, bubble = 0, resultGathers = 0;
  std::map<std::string, double> communication;
  llvm::json::Value json(bool training, bool pipeline) const;
};

llvm::json::Value pipelineJson(const PipelineFigures &figures);
void printPipelineSummary(const PipelineFigures &figures, bool priced, llvm::raw_ostream &os);

} // namespace shardc::report

#endif
