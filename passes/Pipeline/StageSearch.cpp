//===- StageSearch.cpp - where to cut a program into pipeline stages ------===//
#include "passes/Pipeline/StageSearch.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <tuple>

namespace shardc::pipeline {
namespace {

/// How many times the cheapest crossing a candidate cut may move, at first.
constexpr double kFirstCandidateFactor = 4;
/// Candidates the search wants per stage before it stops widening them.
constexpr int64_t kCandidatesPerStage = 24;
/// The widest gap between candidates, as a fraction of a mean stage's compute.
constexpr double kCandidateResolution = 0.02;
/// Plans whose step time is within this fraction of the best count as equal.
constexpr double kStepTolerance = 0.01;

/// Sending what crosses `position`: each value is a send of its own.
double sendSeconds(const StageProblem &problem, size_t position) {
  return double(problem.crossingValues[position]) * problem.linkLatencySeconds +
         double(problem.crossingBytes[position]) / problem.linkBytesPerSecond;
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

int64_t inFlightOf(const StageProblem &problem, size_t stage) {
  return problem.inFlight.empty() ? problem.microbatches : problem.inFlight[stage];
}

/// `figures` as stage `stage` of the plan: its activations are those of the
/// micro-batches the schedule keeps in flight there.
StageFigures asStage(const StageProblem &problem, StageFigures figures, size_t stage) {
  figures.activationBytes = inFlightOf(problem, stage) * figures.keptBytes + figures.workingBytes;
  return figures;
}

/// One way to reach a cut: the slowest pace so far, the sum of the stage
/// latencies so far, and where it came from.
struct Entry {
  double maxSeconds, sumSeconds;
  size_t previousCandidate, previousEntry;
};

/// Keeps the entries no other beats in both the max and the sum.
void prune(std::vector<Entry> &entries) {
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return a.maxSeconds != b.maxSeconds ? a.maxSeconds < b.maxSeconds : a.sumSeconds < b.sumSeconds;
  });
  std::vector<Entry> kept;
  for (const Entry &entry : entries)
    if (kept.empty() || entry.sumSeconds < kept.back().sumSeconds)
      kept.push_back(entry);
  entries = std::move(kept);
}

/// The figures of every stage between two candidates, one sweep per end:
/// as kept, and (with --recompute) as computed again by the backward.
struct PairTable {
  size_t count;
  std::vector<StageFigures> figures, recomputedFigures; // [begin * count + end]
  const StageFigures &at(size_t begin, size_t end) const { return figures[begin * count + end]; }
  const StageFigures &recomputedAt(size_t begin, size_t end) const {
    return recomputedFigures[begin * count + end];
  }
};

PairTable tabulate(const StageProblem &problem, const std::vector<size_t> &candidates) {
  size_t count = candidates.size();
  bool recompute = problem.recompute != StageProblem::Recompute::Selective;
  assert((!recompute || problem.forwardSeconds.size() == problem.opSeconds.size()) &&
         "recompute needs each op's forward seconds");
  PairTable table{count, std::vector<StageFigures>(count * count),
                  std::vector<StageFigures>(recompute ? count * count : 0)};
  std::vector<size_t> counted(problem.weightBytes.size(), SIZE_MAX);
  for (size_t endIndex = 1; endIndex < count; ++endIndex) {
    size_t end = candidates[endIndex];
    double seconds = 0, forward = 0;
    int64_t weights = 0, live = 0, kept = 0;
    size_t beginIndex = endIndex;
    for (size_t op = end; op-- > 0;) {
      seconds += problem.opSeconds[op];
      if (recompute)
        forward += problem.forwardSeconds[op];
      live = std::max(live, problem.liveBytes[op]);
      if (!problem.keptBytes.empty())
        kept += problem.keptBytes[op];
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
      figures.sendSeconds = sendSeconds(problem, end);
      figures.seconds = seconds;
      figures.weightBytes = weights;
      figures.keptBytes = problem.crossingBytes[op] + problem.crossingBytes[end] + kept;
      figures.workingBytes = live;
      figures.activationBytes = problem.microbatches * figures.keptBytes + live;
      if (!recompute)
        continue;
      // What the backward reads is live for the one micro-batch whose
      // backward runs, and the forward runs twice.
      StageFigures &again = table.recomputedFigures[beginIndex * count + endIndex];
      again = figures;
      again.recomputed = true;
      again.seconds += forward;
      again.keptBytes -= kept;
      again.workingBytes += kept;
      again.activationBytes = problem.microbatches * again.keptBytes + again.workingBytes;
    }
  }
  return table;
}

struct Search {
  const StageProblem &problem;
  const std::vector<size_t> &candidates;
  const PairTable &table;
  bool limitMemory;

  /// Stage `stage` over the candidates `beginIndex` to `endIndex`, as the
  /// recompute policy has it: kept, computed again, or (auto) computed
  /// again only when kept it does not fit the budget.
  StageFigures stageAt(size_t stage, size_t beginIndex, size_t endIndex) const {
    StageFigures kept = asStage(problem, table.at(beginIndex, endIndex), stage);
    using Recompute = StageProblem::Recompute;
    if (problem.recompute == Recompute::Selective ||
        (problem.recompute == Recompute::Auto &&
         (problem.memoryBudget <= 0 || kept.memoryBytes() <= problem.memoryBudget)))
      return kept;
    return asStage(problem, table.recomputedAt(beginIndex, endIndex), stage);
  }

  /// Stage `stage` may not span a forced cut nor exceed the budget.
  bool allowed(size_t stage, size_t beginIndex, size_t endIndex) const {
    size_t begin = candidates[beginIndex], end = candidates[endIndex];
    for (size_t forced : problem.forcedCuts)
      if (forced > begin && forced < end)
        return false;
    return !limitMemory || problem.memoryBudget <= 0 ||
           stageAt(stage, beginIndex, endIndex).memoryBytes() <= problem.memoryBudget;
  }

  /// fronts[s][c]: the ways to cover ops [0, candidates[c]) with s + 1
  /// stages that `fits(stage, begin, end)` allows, as Pareto fronts of two keys each stage
  /// adds to by `extend(before or null, stage)`.
  using Fronts = std::vector<std::vector<std::vector<Entry>>>;
  template <typename Fits, typename Extend> Fronts buildFronts(Fits fits, Extend extend) const {
    size_t count = candidates.size();
    auto stages = size_t(problem.stages);
    Fronts fronts(stages, std::vector<std::vector<Entry>>(count));
    for (size_t end = 1; end < count; ++end)
      if (fits(0, 0, end))
        fronts[0][end].push_back(extend(nullptr, stageAt(0, 0, end)));
    for (size_t stage = 1; stage < stages; ++stage)
      for (size_t end = stage + 1; end < count; ++end) {
        std::vector<Entry> &entries = fronts[stage][end];
        for (size_t begin = stage; begin < end; ++begin) {
          const std::vector<Entry> &before = fronts[stage - 1][begin];
          if (before.empty() || !fits(stage, begin, end))
            continue;
          const StageFigures figures = stageAt(stage, begin, end);
          for (size_t index = 0; index < before.size(); ++index) {
            Entry entry = extend(&before[index], figures);
            entry.previousCandidate = begin;
            entry.previousEntry = index;
            entries.push_back(entry);
          }
        }
        prune(entries);
      }
    return fronts;
  }

  /// The plan that entry `index` of the whole program's front stands for.
  StagePlan planOfEntry(const Fronts &fronts, size_t index) const {
    std::vector<size_t> ends;
    size_t end = candidates.size() - 1, entry = index;
    for (size_t stage = size_t(problem.stages); stage-- > 0;) {
      ends.push_back(end);
      const Entry &chosen = fronts[stage][end][entry];
      entry = chosen.previousEntry;
      end = stage == 0 ? 0 : chosen.previousCandidate;
    }
    return planOf(ends);
  }

  /// The plan of least step time: every (max pace, summed latency) pair no
  /// other beats.
  std::optional<StagePlan> fastest() const {
    Fronts fronts =
        buildFronts([&](size_t stage, size_t begin, size_t end) {
                      return allowed(stage, begin, end);
                    },
                    [](const Entry *before, const StageFigures &stage) {
                      return Entry{std::max(before ? before->maxSeconds : 0.0, paceOf(stage)),
                                   (before ? before->sumSeconds : 0.0) + latencyOf(stage), 0, 0};
                    });
    const std::vector<Entry> &last = fronts.back().back();
    if (last.empty())
      return std::nullopt;
    size_t best = 0;
    for (size_t index = 1; index < last.size(); ++index)
      if (objective(problem, last[index].maxSeconds, last[index].sumSeconds) <
          objective(problem, last[best].maxSeconds, last[best].sumSeconds))
        best = index;
    return planOfEntry(fronts, best);
  }

  /// The most even plan (least sum of squared stage computes) whose every
  /// stage keeps the pace within `pace` and whose step is within `step`:
  /// every (squares, summed latency) pair no other beats, then the plans of
  /// the whole program checked whole, most even first.
  std::optional<StagePlan> mostEven(double pace, double step) const {
    // Entry::maxSeconds holds the sum of squared computes here.
    Fronts fronts = buildFronts(
        [&](size_t stage, size_t begin, size_t end) {
          return allowed(stage, begin, end) && paceOf(stageAt(stage, begin, end)) <= pace;
        },
        [](const Entry *before, const StageFigures &stage) {
          return Entry{(before ? before->maxSeconds : 0.0) + stage.seconds * stage.seconds,
                       (before ? before->sumSeconds : 0.0) + latencyOf(stage), 0, 0};
        });
    const std::vector<Entry> &last = fronts.back().back();
    for (size_t index = 0; index < last.size(); ++index)
      if (StagePlan plan = planOfEntry(fronts, index); plan.stepSeconds <= step)
        return plan;
    return std::nullopt;
  }

  /// The least step time; then, among plans within kStepTolerance of it,
  /// the most even (with one micro-batch every cut gives about the sum, and
  /// an uneven plan wastes memory and the next micro-batch count).
  std::optional<StagePlan> run() const {
    std::optional<StagePlan> fast = fastest();
    if (!fast)
      return std::nullopt;
    double pace = 0;
    for (const StageFigures &stage : fast->stages)
      pace = std::max(pace, paceOf(stage));
    // The even plan keeps the fastest plan's slowest stage: trading it for
    // evenness elsewhere would make the pace, which every micro-batch
    // waits for, worse (and with it the balance the report gives).
    std::optional<StagePlan> even = mostEven(pace, fast->stepSeconds * (1 + kStepTolerance));
    return even ? even : fast;
  }

  /// The plan whose stages end at `ends` (candidate indices, last first).
  StagePlan planOf(std::vector<size_t> ends) const {
    std::reverse(ends.begin(), ends.end());
    StagePlan plan;
    size_t begin = 0;
    for (size_t end : ends) {
      plan.stages.push_back(stageAt(plan.stages.size(), begin, end));
      begin = end;
    }
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

namespace {

/// The compute of the ops before each position (one more than the ops).
std::vector<double> computeBefore(const StageProblem &problem) {
  std::vector<double> before(problem.opSeconds.size() + 1, 0);
  for (size_t op = 0; op < problem.opSeconds.size(); ++op)
    before[op + 1] = before[op] + problem.opSeconds[op];
  return before;
}

/// kCandidateResolution of a mean stage's compute, in seconds.
double candidateResolution(const StageProblem &problem, const std::vector<double> &before) {
  return kCandidateResolution * before.back() / double(std::max<int64_t>(problem.stages, 1));
}

/// `positions` (sorted) thinned to the cheapest crossing (the first among
/// equals) of each run whose compute spans less than half the resolution:
/// cuts that close together balance stages alike, and each costs the
/// search a row of its tables (a step whose weights are read without casts
/// has a cheap crossing around every norm and residual add of a layer).
std::vector<size_t> thinCandidates(const StageProblem &problem,
                                   const std::vector<size_t> &positions) {
  std::vector<double> before = computeBefore(problem);
  double gap = candidateResolution(problem, before) / 2;
  std::vector<size_t> thinned;
  double runStart = -1;
  for (size_t position : positions) {
    if (thinned.empty() || before[position] - runStart >= gap) {
      thinned.push_back(position);
      runStart = before[position];
    } else if (problem.crossingBytes[position] < problem.crossingBytes[thinned.back()]) {
      thinned.back() = position;
    }
  }
  return thinned;
}

/// `candidates` with cuts added until no two neighbours are more than
/// kCandidateResolution of a mean stage's compute apart (where ops allow):
/// the cheapest crossing inside each wider gap.
std::vector<size_t> refineCandidates(const StageProblem &problem,
                                     const std::vector<size_t> &candidates) {
  std::vector<double> before = computeBefore(problem);
  double resolution = candidateResolution(problem, before);
  std::vector<size_t> refined = {candidates.front()};
  std::vector<std::pair<size_t, size_t>> gaps;
  for (size_t index = 1; index < candidates.size(); ++index)
    gaps.push_back({candidates[index - 1], candidates[index]});
  while (!gaps.empty()) {
    auto [begin, end] = gaps.back();
    gaps.pop_back();
    if (end - begin < 2 || before[end] - before[begin] <= resolution) {
      refined.push_back(end);
      continue;
    }
    // The cheapest in the gap's middle half (nearest the middle among
    // equals), so each split shrinks the gap: halves, not slivers. Ops too
    // long to leave a middle half take the position nearest the middle.
    double middle = (before[begin] + before[end]) / 2, quarter = (before[end] - before[begin]) / 4;
    auto key = [&](size_t position) {
      double off = std::abs(before[position] - middle);
      return std::make_tuple(off > quarter, off > quarter ? 0 : problem.crossingBytes[position],
                             off);
    };
    size_t cut = begin + 1;
    for (size_t position = begin + 2; position < end; ++position)
      if (key(position) < key(cut))
        cut = position;
    gaps.push_back({cut, end});
    gaps.push_back({begin, cut});
  }
  std::sort(refined.begin(), refined.end());
  return refined;
}

/// The plan's cuts, each with the finer candidates between the coarse
/// candidates on its either side, and the forced cuts.
std::vector<size_t> candidatesNear(const StageProblem &problem,
                                   const std::vector<size_t> &candidates, const StagePlan &plan) {
  std::vector<size_t> near = {0, candidates.back()};
  for (size_t stage = 0; stage + 1 < plan.stages.size(); ++stage) {
    size_t cut = plan.stages[stage].end;
    auto at = std::lower_bound(candidates.begin(), candidates.end(), cut);
    std::vector<size_t> window = {*std::prev(at), cut, *std::next(at)};
    std::vector<size_t> finer = refineCandidates(problem, window);
    near.insert(near.end(), finer.begin(), finer.end());
  }
  for (size_t forced : problem.forcedCuts)
    if (forced > 0 && forced < candidates.back())
      near.push_back(forced);
  std::sort(near.begin(), near.end());
  near.erase(std::unique(near.begin(), near.end()), near.end());
  return near;
}

} // namespace

std::vector<size_t> candidateCuts(const StageProblem &problem) {
  size_t ops = problem.opSeconds.size();
  std::vector<size_t> inner;
  for (size_t position = 1; position < ops; ++position)
    inner.push_back(position);
  // Cheapest crossings first (earlier positions first among equals).
  std::stable_sort(inner.begin(), inner.end(), [&](size_t a, size_t b) {
    return problem.crossingBytes[a] < problem.crossingBytes[b];
  });
  int64_t cheapest = inner.empty() ? 0 : problem.crossingBytes[inner.front()];
  double threshold = kFirstCandidateFactor * double(std::max<int64_t>(cheapest, 1));
  // Every cheap position, then the next cheapest until there are enough to
  // balance the stages finely; a position that crosses as little as the
  // last one taken is taken too.
  auto wanted = size_t(std::max<int64_t>(kCandidatesPerStage * problem.stages, 0));
  size_t taken = 0;
  while (taken < inner.size() &&
         (double(problem.crossingBytes[inner[taken]]) <= threshold || taken < wanted ||
          problem.crossingBytes[inner[taken]] == problem.crossingBytes[inner[taken - 1]]))
    ++taken;
  inner.resize(taken);
  std::sort(inner.begin(), inner.end());
  inner = thinCandidates(problem, inner);
  for (size_t forced : problem.forcedCuts)
    if (forced > 0 && forced < ops && std::find(inner.begin(), inner.end(), forced) == inner.end())
      inner.push_back(forced);
  std::sort(inner.begin(), inner.end());
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
  if (result.plan) {
    // The cheap crossings may fall only between layers, or halves of them,
    // too coarse to even out stages that also hold an embedding or an LM
    // head: the search again over finer cuts near the plan's (every finer
    // candidate at once would cost minutes on a GPT-3-sized step).
    std::vector<size_t> near = candidatesNear(problem, candidates, *result.plan);
    if (near != candidates)
      if (std::optional<StagePlan> finer =
              Search{problem, near, tabulate(problem, near), true}.run();
          finer && finer->stepSeconds <= result.plan->stepSeconds)
        result.plan = finer;
    return result;
  }
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
