//===- StageSearch.cpp - where to cut a program into pipeline stages ------===//
#include "passes/Pipeline/StageSearch.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shardc::pipeline {
namespace {

/// How many times the cheapest crossing a candidate cut may move, at first.
constexpr double kFirstCandidateFactor = 4;
/// Candidates the search wants per stage before it stops widening them.
constexpr int64_t kCandidatesPerStage = 8;
/// Plans whose step time is within this fraction of the best count as equal.
constexpr double kStepTolerance = 0.01;

double sendSeconds(const StageProblem &problem, int64_t bytes) {
  if (bytes == 0)
    return 0;
  return problem.linkLatencySeconds + double(bytes) / problem.linkBytesPerSecond;
}

double objective(const StageProblem &problem, double maxSeconds, double sumSeconds) {
  if (problem.interleaved)
    return double(problem.microbatches * problem.virtualStages + problem.pipelineRanks - 1) *
           maxSeconds;
  return sumSeconds + double(problem.microbatches - 1) * maxSeconds;
}

/// What a stage adds to the step: its compute and its send are separate
/// resources (the send of one micro-batch overlaps the next one's compute),
/// so the pipeline's pace is the slower of the two; the first micro-batch
/// waits for both.
double paceOf(const StageFigures &stage) { return std::max(stage.seconds, stage.sendSeconds); }
double latencyOf(const StageFigures &stage) { return stage.seconds + stage.sendSeconds; }

/// One way to reach a cut: the slowest pace so far, the sum of the stage
/// latencies so far, the sum of the squared computes (among equal steps
/// the most balanced plan wins: the slowest stage may be one op that no cut
/// splits, and the others should still be even), and where it came from.
struct Entry {
  double maxSeconds, sumSeconds, squaredCompute;
  size_t previousCandidate, previousEntry;
};

bool dominates(const Entry &a, const Entry &b) {
  return a.maxSeconds <= b.maxSeconds && a.sumSeconds <= b.sumSeconds &&
         a.squaredCompute <= b.squaredCompute;
}

/// Keeps the entries no other beats in all three.
void prune(std::vector<Entry> &entries) {
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    if (a.maxSeconds != b.maxSeconds)
      return a.maxSeconds < b.maxSeconds;
    return a.sumSeconds != b.sumSeconds ? a.sumSeconds < b.sumSeconds
                                        : a.squaredCompute < b.squaredCompute;
  });
  std::vector<Entry> kept;
  for (const Entry &entry : entries)
    if (std::none_of(kept.begin(), kept.end(),
                     [&](const Entry &other) { return dominates(other, entry); }))
      kept.push_back(entry);
  entries = std::move(kept);
}

/// The figures of every stage between two candidates, one sweep per end.
struct PairTable {
  size_t count;
  std::vector<StageFigures> figures; // [begin * count + end]
  const StageFigures &at(size_t begin, size_t end) const { return figures[begin * count + end]; }
};

PairTable tabulate(const StageProblem &problem, const std::vector<size_t> &candidates) {
  size_t count = candidates.size();
  PairTable table{count, std::vector<StageFigures>(count * count)};
  std::vector<size_t> counted(problem.weightBytes.size(), SIZE_MAX);
  for (size_t endIndex = 1; endIndex < count; ++endIndex) {
    size_t end = candidates[endIndex];
    double seconds = 0;
    int64_t weights = 0, live = 0;
    size_t beginIndex = endIndex;
    for (size_t op = end; op-- > 0;) {
      seconds += problem.opSeconds[op];
      live = std::max(live, problem.liveBytes[op]);
      for (unsigned weight : problem.opWeights[op])
        if (counted[weight] != end) {
          counted[weight] = end;
          weights += problem.weightBytes[weight];
        }
      if (beginIndex == 0 || candidates[beginIndex - 1] != op)
        continue;
      --beginIndex;
      StageFigures &figures = table.figures[beginIndex * count + endIndex];
      figures.begin = op;
      figures.end = end;
      figures.sendSeconds = sendSeconds(problem, problem.crossingBytes[end]);
      figures.seconds = seconds;
      figures.weightBytes = weights;
      figures.activationBytes =
          problem.microbatches * (problem.crossingBytes[op] + problem.crossingBytes[end]) + live;
    }
  }
  return table;
}

struct Search {
  const StageProblem &problem;
  const std::vector<size_t> &candidates;
  const PairTable &table;
  bool limitMemory;

  /// A stage may not span a forced cut nor exceed the budget.
  bool allowed(size_t beginIndex, size_t endIndex) const {
    size_t begin = candidates[beginIndex], end = candidates[endIndex];
    for (size_t forced : problem.forcedCuts)
      if (forced > begin && forced < end)
        return false;
    return !limitMemory || problem.memoryBudget <= 0 ||
           table.at(beginIndex, endIndex).memoryBytes() <= problem.memoryBudget;
  }

  std::optional<StagePlan> run() const {
    size_t count = candidates.size();
    auto stages = size_t(problem.stages);
    // frontier[s][c]: ways to cover ops [0, candidates[c]) with s + 1 stages.
    std::vector<std::vector<std::vector<Entry>>> frontier(stages,
                                                          std::vector<std::vector<Entry>>(count));
    for (size_t end = 1; end < count; ++end)
      if (allowed(0, end)) {
        const StageFigures &stage = table.at(0, end);
        frontier[0][end].push_back(
            {paceOf(stage), latencyOf(stage), stage.seconds * stage.seconds, 0, 0});
      }
    for (size_t stage = 1; stage < stages; ++stage)
      for (size_t end = stage + 1; end < count; ++end) {
        std::vector<Entry> &entries = frontier[stage][end];
        for (size_t begin = stage; begin < end; ++begin) {
          const std::vector<Entry> &before = frontier[stage - 1][begin];
          if (before.empty() || !allowed(begin, end))
            continue;
          const StageFigures &stage = table.at(begin, end);
          for (size_t index = 0; index < before.size(); ++index)
            entries.push_back({std::max(before[index].maxSeconds, paceOf(stage)),
                               before[index].sumSeconds + latencyOf(stage),
                               before[index].squaredCompute + stage.seconds * stage.seconds, begin,
                               index});
        }
        prune(entries);
      }
    const std::vector<Entry> &last = frontier[stages - 1][count - 1];
    if (last.empty())
      return std::nullopt;
    // The least step time; among plans within kStepTolerance of it the most
    // balanced (with one micro-batch every cut gives about the sum; and an
    // unbalanced plan wastes memory and the next micro-batch count).
    double bestStep = std::numeric_limits<double>::infinity();
    for (const Entry &entry : last)
      bestStep = std::min(bestStep, objective(problem, entry.maxSeconds, entry.sumSeconds));
    size_t best = 0;
    bool found = false;
    for (size_t index = 0; index < last.size(); ++index) {
      double step = objective(problem, last[index].maxSeconds, last[index].sumSeconds);
      if (step > bestStep * (1 + kStepTolerance))
        continue;
      if (!found || last[index].squaredCompute < last[best].squaredCompute)
        best = index;
      found = true;
    }
    StagePlan plan;
    size_t end = count - 1, entry = best;
    for (size_t stage = stages; stage-- > 0;) {
      const Entry &chosen = frontier[stage][end][entry];
      size_t begin = stage == 0 ? 0 : chosen.previousCandidate;
      plan.stages.push_back(table.at(begin, end));
      entry = chosen.previousEntry;
      end = begin;
    }
    std::reverse(plan.stages.begin(), plan.stages.end());
    plan.stepSeconds = stepSeconds(problem, plan.stages);
    return plan;
  }
};

} // namespace

StageFigures stageFigures(const StageProblem &problem, size_t begin, size_t end) {
  std::vector<size_t> bounds = {begin, end};
  return tabulate(problem, bounds).at(0, 1);
}

double stepSeconds(const StageProblem &problem, const std::vector<StageFigures> &stages) {
  double maxSeconds = 0, sumSeconds = 0;
  for (const StageFigures &stage : stages) {
    maxSeconds = std::max(maxSeconds, paceOf(stage));
    sumSeconds += latencyOf(stage);
  }
  return objective(problem, maxSeconds, sumSeconds);
}

std::vector<size_t> candidateCuts(const StageProblem &problem) {
  size_t ops = problem.opSeconds.size();
  int64_t cheapest = std::numeric_limits<int64_t>::max();
  for (size_t position = 1; position < ops; ++position)
    cheapest = std::min(cheapest, problem.crossingBytes[position]);
  // Enough places to cut that every stage can be balanced at a fine grain:
  // a few candidates per stage, not just one per cut.
  auto wanted = size_t(std::max<int64_t>(kCandidatesPerStage * problem.stages, 0));
  std::vector<size_t> inner;
  for (double factor = kFirstCandidateFactor; ops > 1; factor *= 2) {
    double threshold = factor * double(std::max<int64_t>(cheapest, 1));
    inner.clear();
    for (size_t position = 1; position < ops; ++position)
      if (double(problem.crossingBytes[position]) <= threshold ||
          std::find(problem.forcedCuts.begin(), problem.forcedCuts.end(), position) !=
              problem.forcedCuts.end())
        inner.push_back(position);
    if (inner.size() >= wanted || inner.size() == ops - 1)
      break;
  }
  std::vector<size_t> candidates = {0};
  candidates.insert(candidates.end(), inner.begin(), inner.end());
  candidates.push_back(ops);
  return candidates;
}

StageSearchResult searchStages(const StageProblem &problem) {
  StageSearchResult result;
  size_t ops = problem.opSeconds.size();
  if (problem.stages < 1 || size_t(problem.stages) > ops) {
    result.error = "the program has " + std::to_string(ops) +
                   " ops that stages divide (weights, constants and cheap ops of the inputs "
                   "alone are copied into every stage that needs them); it cannot be cut into " +
                   std::to_string(problem.stages) + " stages";
    return result;
  }
  std::vector<size_t> candidates = candidateCuts(problem);
  PairTable table = tabulate(problem, candidates);
  result.plan = Search{problem, candidates, table, true}.run();
  if (result.plan)
    return result;
  std::optional<StagePlan> unlimited = Search{problem, candidates, table, false}.run();
  if (!unlimited) {
    result.error = "the forced cuts leave no way to cut the program into " +
                   std::to_string(problem.stages) + " stages";
    return result;
  }
  size_t heaviest = 0;
  for (size_t stage = 1; stage < unlimited->stages.size(); ++stage)
    if (unlimited->stages[stage].memoryBytes() > unlimited->stages[heaviest].memoryBytes())
      heaviest = stage;
  result.overMemory = unlimited->stages[heaviest];
  result.overMemoryStage = heaviest;
  result.error = "over memory";
  return result;
}

} // namespace shardc::pipeline
