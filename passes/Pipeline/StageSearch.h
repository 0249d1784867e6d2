//===- StageSearch.h - where to cut a program into pipeline stages -*- C++ -*-===//
//
// The search behind shardc-pipeline-stages, on plain numbers so that it is
// tested without MLIR. A program is a sequence of ops (the sharded program's
// compute ops in order; weights, constants and what only the inputs derive
// are placed wherever they are used). Cutting it at positions 0 < c_1 <
// ... < c_{S-1} < n makes S contiguous stages. A stage's time per
// micro-batch is its ops' seconds plus sending what crosses its end (one
// latency per value, then the bytes); its
// memory is its weights, the micro-batches in flight's boundary
// activations, and its largest working set.
//
// The step time of a forward schedule over M micro-batches is, with C_s a
// stage's compute and X_s its send per micro-batch (separate resources: a
// send overlaps the next micro-batch's compute), the latency of the first
// micro-batch plus M - 1 times the slowest pace: sum (C_s + X_s) + (M - 1)
// max(C_s, X_s) for fill-drain (GPipe), and (M V + P - 1) max(C_s, X_s)
// for the interleaved schedule (P ranks, V stages each).
//
// The search is exact over its candidate cuts: a dynamic program over
// (stages so far, last cut) keeping every (max pace, summed latency) pair
// no other beats in both. Then, among plans within 1% of that step time
// (with one micro-batch every cut gives about the sum), a second dynamic
// program takes the most even one: the least sum of squared stage computes
// (a Pareto front of squares and summed latency, every stage within the best
// plan's slowest pace plus the 1%), which evens the other stages out even
// when the slowest is one op no cut splits.
// The candidates are the positions where few bytes cross: every one within
// 4x the cheapest, then the next cheapest until there are eight per stage
// (with all that cross as little as the last one), plus the forced cuts.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_PIPELINE_STAGESEARCH_H
#define SHARDC_PASSES_PIPELINE_STAGESEARCH_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardc::pipeline {

struct StageProblem {
  /// Per op, in program order.
  std::vector<double> opSeconds;
  /// Bytes of the values live while the op runs (its operands and results
  /// included): one micro-batch's working set.
  std::vector<int64_t> liveBytes;
  /// Per op, the weights it reads (indices into weightBytes).
  std::vector<std::vector<unsigned>> opWeights;
  std::vector<int64_t> weightBytes;
  /// Size n + 1: the bytes that cross position c (made before op c, used at
  /// or after it); 0 at both ends.
  std::vector<int64_t> crossingBytes;
  /// Size n + 1: how many values cross position c (each is its own send).
  std::vector<int64_t> crossingValues;
  /// A training step, per op: the bytes of its results the backward reads,
  /// which a stage keeps per micro-batch until its backward ran (empty for
  /// inference).
  std::vector<int64_t> keptBytes;
  /// --recompute: with a stage's forward computed again by its backward,
  /// the stage keeps only what crosses its ends per micro-batch in flight;
  /// what the backward reads is live for one micro-batch, and each forward
  /// op's own seconds (forwardSeconds, a training step's) count twice.
  /// Auto recomputes a stage only when it does not fit memoryBudget
  /// otherwise.
  enum class Recompute { Selective, Full, Auto };
  Recompute recompute = Recompute::Selective;
  std::vector<double> forwardSeconds;
  /// Per stage: the micro-batches whose activations it holds at once (the
  /// schedule's: 1F1B's stage s P - s, GPipe's M); empty: M on every stage.
  std::vector<int64_t> inFlight;

  int64_t stages = 2;
  int64_t pipelineRanks = 2;
  int64_t virtualStages = 1;
  int64_t microbatches = 1;
  bool interleaved = false;
  /// Positions that must be cuts.
  std::vector<size_t> forcedCuts;
  /// Bytes a stage may hold (0: no limit).
  int64_t memoryBudget = 0;
  /// A cut's send: one latency per value that crosses it, plus the bytes
  /// over the bandwidth.
  double linkLatencySeconds = 0;
  double linkBytesPerSecond = 1;
};

struct StageFigures {
  size_t begin = 0, end = 0; ///< ops [begin, end)
  double seconds = 0;        ///< compute per micro-batch
  double sendSeconds = 0;    ///< sending what crosses its end, per micro-batch
  int64_t weightBytes = 0;
  /// Per micro-batch: the boundary activations and what the backward reads.
  int64_t keptBytes = 0;
  /// The largest working set of one op.
  int64_t workingBytes = 0;
  /// keptBytes of the micro-batches in flight (StageProblem::inFlight) plus
  /// the working set.
  int64_t activationBytes = 0;
  /// Its backward computes its forward again (--recompute).
  bool recomputed = false;
  int64_t memoryBytes() const { return weightBytes + activationBytes; }
};

struct StagePlan {
  std::vector<StageFigures> stages;
  /// The schedule's estimated step time (see the top of this file).
  double stepSeconds = 0;
};

/// The figures of the stage [begin, end) of `problem`.
StageFigures stageFigures(const StageProblem &problem, size_t begin, size_t end);

/// The step time of stages with these figures under `problem`'s schedule.
double stepSeconds(const StageProblem &problem, const std::vector<StageFigures> &stages);

/// The best cuts, or an error: too few places to cut, or no cut whose
/// stages all fit the memory (naming the stage of the best plan that does
/// not, with its bytes).
struct StageSearchResult {
  std::optional<StagePlan> plan;
  std::string error;
  /// For a memory error: the offending stage of the best plan ignoring memory.
  std::optional<StageFigures> overMemory;
  size_t overMemoryStage = 0;
};
StageSearchResult searchStages(const StageProblem &problem);

/// The positions the search considers (sorted; forced cuts included).
std::vector<size_t> candidateCuts(const StageProblem &problem);

} // namespace shardc::pipeline

#endif
