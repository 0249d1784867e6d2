//===- PipelineReport.cpp - a pipelined plan's stages, cuts and schedule --===//
#include "compiler/Report/PipelineReport.h"

#include "passes/Pipeline/Schedule.h"

#include "compiler/Report/FormatSeconds.h"
#include "compiler/Report/UniformSplit.h"

#include "passes/Sharding/CostModel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace shardc::report {
namespace {

double sumOf(const std::map<std::string, double> &seconds) {
  double sum = 0;
  for (const auto &[kind, value] : seconds)
    sum += value;
  return sum;
}

double slowest(const std::vector<double> &seconds) {
  return seconds.empty() ? 0 : *std::max_element(seconds.begin(), seconds.end());
}

/// Our stages priced like the uniform split: the report's per-op costs.
std::vector<double> ourCostSeconds(const PipelineFigures &figures) {
  std::vector<double> seconds;
  for (const StageReport &stage : figures.stages)
    seconds.push_back(stage.computeSeconds + stage.commSeconds);
  return seconds;
}

std::string layerSpan(const std::set<unsigned> &layers) {
  if (layers.empty())
    return "no layers";
  if (layers.size() == 1)
    return "layer " + std::to_string(*layers.begin());
  return "layers " + std::to_string(*layers.begin()) + "-" + std::to_string(*layers.rbegin());
}

std::string rankSpan(const std::vector<int64_t> &ranks) {
  if (ranks.size() == 1)
    return "rank " + std::to_string(ranks.front());
  return "ranks " + std::to_string(ranks.front()) + "-" + std::to_string(ranks.back());
}

/// "1 transfer", "2 transfers".
std::string counted(size_t count, const char *one, const char *many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

const char *bubbleFormulaText(const PipelineFigures &figures) {
  if (figures.schedule == "zb-h1")
    return "(p-1)/(3m+p-1)";
  if (figures.schedule == "zb-h2")
    return "0";
  return figures.interleaved() ? "(p-1)/(v*m+p-1)" : "(p-1)/(m+p-1)";
}

} // namespace

double PipelineFigures::bubbleFormula() const {
  double p = double(pipelineRanks), m = double(microbatches);
  if (schedule == "zb-h1")
    return (p - 1) / (3 * m + p - 1);
  if (schedule == "zb-h2")
    return 0;
  double v = interleaved() ? double(virtualStages) : 1;
  return (p - 1) / (v * m + p - 1);
}

std::optional<PipelineFigures::Simulated> PipelineFigures::simulate() const {
  std::optional<pipeline::ScheduleSpec::Kind> kind = pipeline::parseScheduleKind(schedule);
  if (!training || !kind || stages.empty())
    return std::nullopt;
  pipeline::ScheduleSpec spec;
  spec.ranks = pipelineRanks;
  spec.virtualStages = virtualStages;
  spec.microbatches = microbatches;
  spec.kind = *kind;
  spec.training = true;
  pipeline::chainTransfers(spec);
  double total = 0;
  for (const StageReport &stage : stages) {
    double forward = stage.forwardSeconds + sumOf(stage.forwardComm);
    double backward = stage.backwardSeconds + sumOf(stage.backwardComm);
    spec.forwardSeconds.push_back(forward);
    spec.backwardInputSeconds.push_back(backward / 2 + (stage.recomputed ? forward : 0));
    spec.backwardWeightSeconds.push_back(backward / 2);
    spec.updateSeconds.push_back(stage.updateSeconds + sumOf(stage.updateComm));
    total += spec.forwardSeconds.back() + spec.backwardInputSeconds.back() +
             spec.backwardWeightSeconds.back();
  }
  if (total <= 0)
    return std::nullopt;
  std::optional<std::string> error;
  pipeline::Schedule built = pipeline::buildSchedule(spec, &error);
  if (error)
    return std::nullopt;
  std::optional<pipeline::Simulation> simulation = pipeline::simulateSchedule(spec, built);
  if (!simulation)
    return std::nullopt;
  Simulated result{simulation->makespan, 0, 0};
  for (int64_t rank = 0; rank < pipelineRanks; ++rank) {
    result.bubble = std::max(result.bubble, simulation->bubble(rank));
    if (simulation->busy[size_t(rank)] > simulation->busy[size_t(result.busiestRank)])
      result.busiestRank = rank;
  }
  return result;
}

std::optional<StepBreakdown> PipelineFigures::breakdown() const {
  std::optional<Simulated> simulated = simulate();
  if (!simulated)
    return std::nullopt;
  StepBreakdown parts;
  double m = double(microbatches);
  auto add = [&](const std::map<std::string, double> &comm, double times) {
    for (const auto &[kind, seconds] : comm)
      parts.communication[kind] += times * seconds;
  };
  for (auto [index, stage] : llvm::enumerate(stages)) {
    if (int64_t(index) % pipelineRanks != simulated->busiestRank)
      continue;
    double again = stage.recomputed ? 2 : 1;
    parts.compute += m * (again * stage.forwardSeconds + stage.backwardSeconds);
    parts.optimizer += stage.updateSeconds;
    add(stage.forwardComm, m * again);
    add(stage.backwardComm, m);
    add(stage.updateComm, 1);
  }
  // The rest of the step the busiest rank waits.
  parts.bubble =
      simulated->stepSeconds - parts.compute - parts.optimizer - sumOf(parts.communication);
  return parts;
}

llvm::json::Value StepBreakdown::json(bool training, bool pipeline) const {
  llvm::json::Object comm;
  for (const auto &[kind, seconds] : communication)
    comm[kind] = seconds;
  llvm::json::Object object{{"communication", std::move(comm)},
                            {"result_gathers", resultGathers}};
  if (pipeline && !training) {
    object["stages"] = stages;
  } else {
    object["compute"] = compute;
    if (training)
      object["optimizer"] = optimizer;
  }
  if (pipeline)
    object["bubble"] = bubble;
  return object;
}

double PipelineFigures::bubble() const {
  if (training)
    if (std::optional<Simulated> simulated = simulate())
      return simulated->bubble;
  double compute = 0;
  for (const StageReport &stage : stages)
    compute += stage.seconds;
  if (stepSeconds <= 0)
    return 0;
  return 1 - double(microbatches) * compute / (double(pipelineRanks) * stepSeconds);
}

std::vector<int64_t> PipelineFigures::ranksOf(size_t stage) const {
  int64_t first = int64_t(stage) % pipelineRanks * stageRanks;
  std::vector<int64_t> ranks(static_cast<size_t>(stageRanks));
  for (int64_t offset = 0; offset < stageRanks; ++offset)
    ranks[size_t(offset)] = first + offset;
  return ranks;
}

llvm::json::Value pipelineJson(const PipelineFigures &figures) {
  llvm::json::Array stages;
  double estimateSum = 0, estimateMax = 0;
  for (auto [index, stage] : llvm::enumerate(figures.stages)) {
    estimateSum += stage.seconds;
    estimateMax = std::max(estimateMax, stage.seconds);
    llvm::json::Array ranks, layers;
    for (int64_t rank : figures.ranksOf(index))
      ranks.push_back(rank);
    for (unsigned layer : stage.layers)
      layers.push_back(int64_t(layer));
    llvm::json::Object entry{
        {"stage", int64_t(index)},
        {"pp_rank", int64_t(index) % figures.pipelineRanks},
        {"ranks", std::move(ranks)},
        {"first_node", stage.firstNode},
        {"last_node", stage.lastNode},
        {"layers", std::move(layers)},
        {"recomputed", stage.recomputed},
        {"param_bytes", stage.paramBytes},
        {"activation_bytes", stage.activationBytes},
        {"memory_bytes", stage.paramBytes + stage.activationBytes},
        {"working_set_bytes", stage.workingSetBytes},
        {"seconds", stage.seconds},
        {"send_seconds", stage.sendSeconds},
        {"compute_seconds", stage.computeSeconds},
        {"comm_seconds", stage.commSeconds}};
    // A training stage also holds its weights' gradients and optimizer
    // state between steps.
    if (figures.training) {
      entry["grad_bytes"] = stage.gradBytes;
      entry["optimizer_bytes"] = stage.optimizerBytes;
      entry["parameters"] = stage.parameters;
      entry["kept_bytes"] = stage.keptBytes;
      entry["korthikanti_bytes"] = stage.korthikantiBytes;
    }
    stages.push_back(std::move(entry));
  }
  llvm::json::Array transfers;
  for (const TransferReport &transfer : figures.transfers)
    transfers.push_back(llvm::json::Object{{"transfer", transfer.id},
                                           {"from_stage", transfer.from},
                                           {"to_stage", transfer.to},
                                           {"source", transfer.source},
                                           {"bytes", transfer.bytes},
                                           {"seconds", transfer.seconds}});
  llvm::json::Array uniform;
  size_t count = figures.uniformSeconds.size();
  for (size_t stage = 0; stage < count; ++stage) {
    size_t first = uniformFirstLayer(stage, figures.layers, count);
    uniform.push_back(llvm::json::Object{
        {"stage", int64_t(stage)},
        {"first_layer", int64_t(first)},
        {"layers", int64_t(uniformFirstLayer(stage + 1, figures.layers, count) - first)},
        {"seconds", figures.uniformSeconds[stage]}});
  }
  size_t stageCount = figures.stages.size();
  return llvm::json::Object{
      {"schedule",
       llvm::json::Object{{"kind", figures.schedule},
                          {"recompute", figures.recompute},
                          {"pipeline_ranks", figures.pipelineRanks},
                          {"virtual_stages", figures.virtualStages},
                          {"microbatches", figures.microbatches},
                          {"stages", int64_t(stageCount)},
                          {"step_seconds", figures.stepSeconds},
                          {"bubble", figures.bubble()},
                          {"bubble_formula", bubbleFormulaText(figures)},
                          {"bubble_formula_value", figures.bubbleFormula()},
                          {"slowest_stage_seconds", estimateMax},
                          {"mean_stage_seconds", stageCount ? estimateSum / double(stageCount) : 0.0}}},
      {"stages", std::move(stages)},
      {"transfers", std::move(transfers)},
      {"uniform_split",
       llvm::json::Object{{"stages", std::move(uniform)},
                          {"slowest_seconds", slowest(figures.uniformSeconds)},
                          {"ours_slowest_seconds", slowest(ourCostSeconds(figures))}}}};
}

void printPipelineSummary(const PipelineFigures &figures, bool priced, llvm::raw_ostream &os) {
  os << "  pipeline: " << figures.schedule << ", " << counted(figures.stages.size(), "stage", "stages")
     << " on " << counted(size_t(figures.pipelineRanks), "pp rank", "pp ranks") << ", "
     << counted(size_t(figures.microbatches), "micro-batch", "micro-batches");
  if (priced)
    os << "; step " << formatSeconds(figures.stepSeconds) << ", bubble "
       << llvm::formatv("{0:P1}", figures.bubble());
  os << " (formula " << bubbleFormulaText(figures) << " = "
     << llvm::formatv("{0:P1}", figures.bubbleFormula()) << ")\n";
  for (auto [index, stage] : llvm::enumerate(figures.stages)) {
    os << "    stage " << index << " (pp " << int64_t(index) % figures.pipelineRanks << ", "
       << rankSpan(figures.ranksOf(index)) << "): '" << stage.firstNode << "' .. '"
       << stage.lastNode << "', " << layerSpan(stage.layers) << "; "
       << sharding::formatBytes(double(stage.paramBytes)) << " weights + "
       << sharding::formatBytes(double(stage.activationBytes)) << " activations";
    if (priced)
      os << "; " << formatSeconds(stage.seconds) << " + send "
         << formatSeconds(stage.sendSeconds);
    os << "\n";
  }
  int64_t bytes = 0;
  for (const TransferReport &transfer : figures.transfers)
    bytes += transfer.bytes;
  os << "    " << counted(figures.transfers.size(), "transfer", "transfers") << ", "
     << sharding::formatBytes(double(bytes)) << " per rank and micro-batch\n";
  if (priced)
    os << "    uniform split (" << figures.layers << " layers evenly): slowest stage "
       << formatSeconds(slowest(figures.uniformSeconds)) << ", ours "
       << formatSeconds(slowest(ourCostSeconds(figures))) << " (same per-op costs)\n";
}

} // namespace shardc::report
