//===- TrainingOptions.cpp - --train and the optimizer's flags ------------===//
#include "compiler/Driver/TrainingOptions.h"

#include "compiler/Driver/Compile.h"
#include "compiler/Driver/InputModule.h"
#include "compiler/Driver/Options.h"
#include "passes/Autodiff/Loss.h"
#include "runtime/core/MeshAxes.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cmath>

namespace shardc::driver {
namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// A finite number within [low, high) (high excluded when `open`).
llvm::Expected<double> parseNumber(llvm::StringRef flag, llvm::StringRef text, double low,
                                   double high, bool lowExcluded, llvm::StringRef range) {
  double value = 0;
  if (text.trim().getAsDouble(value) || !std::isfinite(value) || value < low ||
      (lowExcluded && value == low) || value >= high)
    return fail("--" + flag + " '" + text + "': expected " + range);
  return value;
}

} // namespace

llvm::Expected<std::optional<TrainingSettings>>
parseTrainingOptions(const CompileOptions &options) {
  const std::pair<const char *, const std::string *> flags[] = {
      {"loss", &options.loss},         {"optimizer", &options.optimizer},
      {"lr", &options.learningRate},   {"betas", &options.betas},
      {"eps", &options.epsilon},       {"weight-decay", &options.weightDecay},
      {"momentum", &options.momentum}, {"grad-clip", &options.gradClip}};
  if (!options.train) {
    for (auto [flag, text] : flags)
      if (!text->empty())
        return fail(llvm::Twine("--") + flag + " needs --train");
    if (!options.freeze.empty())
      return fail("--freeze needs --train");
    if (options.untie)
      return fail("--untie needs --train");
    if (options.noDecay1d)
      return fail("--no-decay-1d needs --train");
    if (!options.zero.empty() || options.fsdp)
      return fail(llvm::Twine(options.fsdp ? "--fsdp" : "--zero") + " needs --train");
    if (!options.bucketMb.empty())
      return fail("--bucket-mb needs --train");
    return std::nullopt;
  }
  if (options.loss.empty())
    return fail("--train needs --loss KIND:OUTPUT (causal-lm, cross-entropy, mse or output)");
  if (auto spec = autodiff::parseLossSpec(options.loss); !spec)
    return spec.takeError();
  // What the training step does not support yet, refused before compiling.
  if (isMlirInput(options.modelPath))
    return fail(options.modelPath + ": --train takes an ONNX model; the step is built from the "
                                    "raised graph of its import");
  if (options.emit == "import")
    return fail("--emit=import comes before the training step is built; use --emit=graph");

  TrainingSettings settings;
  settings.loss = options.loss;
  auto microbatches = parseDegree("microbatches", options.microbatches, "pieces of the batch");
  if (!microbatches)
    return microbatches.takeError();
  settings.microbatches = std::max<int64_t>(*microbatches, 1);
  if (!options.optimizer.empty())
    settings.optimizer = options.optimizer;
  if (settings.optimizer != "adamw" && settings.optimizer != "sgd")
    return fail("--optimizer '" + options.optimizer + "': expected adamw or sgd");
  const bool adam = settings.optimizer == "adamw";
  if (adam && !options.momentum.empty())
    return fail("--momentum is SGD's; --optimizer adamw has betas");
  if (!adam && (!options.betas.empty() || !options.epsilon.empty()))
    return fail(llvm::Twine(options.betas.empty() ? "--eps" : "--betas") +
                " is AdamW's; --optimizer sgd has --momentum");
  // The single numbers: where each goes, and the values it may take.
  struct Number {
    const char *flag;
    const std::string &text;
    double &value;
    bool positive; ///< > 0; otherwise >= 0
  };
  const Number numbers[] = {{"lr", options.learningRate, settings.lr, true},
                            {"eps", options.epsilon, settings.eps, true},
                            {"weight-decay", options.weightDecay, settings.weightDecay, false},
                            {"momentum", options.momentum, settings.momentum, false},
                            {"grad-clip", options.gradClip, settings.gradClip, true}};
  for (const Number &number : numbers) {
    if (number.text.empty())
      continue;
    auto value = parseNumber(number.flag, number.text, 0, HUGE_VAL, number.positive,
                             number.positive ? "a positive number" : "a number >= 0");
    if (!value)
      return value.takeError();
    number.value = *value;
  }
  if (!options.betas.empty()) {
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(options.betas).split(parts, ',');
    if (parts.size() != 2)
      return fail("--betas '" + options.betas + "': expected B1,B2, each in [0, 1)");
    double *targets[] = {&settings.beta1, &settings.beta2};
    for (auto [part, beta] : llvm::zip(parts, targets)) {
      auto value = parseNumber("betas", part, 0, 1, false, "B1,B2, each in [0, 1)");
      if (!value)
        return value.takeError();
      *beta = *value;
    }
  }
  for (const std::string &name : options.freeze)
    if (name.empty())
      return fail("--freeze: an empty name freezes nothing; give initializer names or prefixes");
  settings.freeze = options.freeze;
  settings.untie = options.untie;
  settings.noDecay1d = options.noDecay1d;
  if (options.zero == "auto") {
    settings.zeroAuto = true;
  } else if (!options.zero.empty()) {
    auto stage = parseNumber("zero", options.zero, 0, 4, false, "0, 1, 2, 3 or auto");
    if (!stage)
      return stage.takeError();
    if (*stage != std::floor(*stage))
      return fail("--zero '" + options.zero + "': expected 0, 1, 2, 3 or auto");
    settings.zero = unsigned(*stage);
  }
  if (options.fsdp) {
    if (!options.zero.empty() && (settings.zero != 3 || settings.zeroAuto))
      return fail("--fsdp is --zero 3; it contradicts --zero " + options.zero);
    settings.zero = 3;
  }
  // Buckets trade a copy of their bytes in and out for fewer collectives:
  // worth it where a collective's start costs (NCCL's launches, as DDP's
  // default of 25 MiB), not on the CPU, whose collectives are in-process
  // copies or MPI calls (measured on GPT-2-small at dp 2 ZeRO-2: a 6%
  // slower step with 25 MiB buckets, docs/training.md); --bucket-mb asks
  // for them anywhere.
  if (options.target == "cuda")
    settings.bucketMb = kCudaBucketMb;
  if (!options.bucketMb.empty()) {
    // MiB, fractions allowed as DDP's bucket_cap_mb; at most 1 TiB, more
    // than any device holds.
    auto size = parseNumber("bucket-mb", options.bucketMb, 0, 1048577, false,
                            "a number of MiB from 0 (no buckets) to 1048576");
    if (!size)
      return size.takeError();
    settings.bucketMb = *size;
  }
  return settings;
}

llvm::Error placeZeroOnMesh(const CompileOptions &options,
                            const std::optional<TrainingSettings> &training,
                            sharding::MeshShape &mesh) {
  bool zero = training && (training->zero > 0 || training->zeroAuto);
  std::string zeroFlag = options.zero.empty() ? std::string("--fsdp") : "--zero " + options.zero;
  if (!options.zeroGroup.empty() && !zero)
    return fail("--zero-group shards ZeRO's model state over groups of dp ranks: give --zero "
                "1|2|3|auto or --fsdp");
  if (!zero)
    return llvm::Error::success();
  std::optional<unsigned> dp = mesh.axis(rt::kDataAxis);
  if (!dp || mesh.sizes[*dp] < 2)
    return fail(zeroFlag + " splits the model state over data-parallel ranks: give --dp N (N > "
                           "1) or a dp axis in --mesh");
  if (options.zeroGroup.empty())
    return llvm::Error::success();
  const int64_t ranks = mesh.sizes[*dp];
  if (mesh.axis(rt::kReplicaAxis))
    return fail("--zero-group: the mesh already has a dpr axis (ZeRO's replicas)");
  int64_t group = 0;
  if (llvm::StringRef(options.zeroGroup).getAsInteger(10, group) || group < 2 ||
      group > ranks || ranks % group != 0)
    return fail("--zero-group '" + options.zeroGroup + "': expected a divisor of the " +
                std::to_string(ranks) +
                " dp ranks ZeRO splits over, from 2 (each group of that many ranks splits the "
                "model state; the groups hold copies)");
  if (group == ranks)
    return llvm::Error::success();
  // dpr goes right before dp: the mesh keeps the axes' order (MeshAxes.h),
  // and the batch, split over [dpr, dp], lands on the ranks it did.
  mesh.names.insert(mesh.names.begin() + *dp, rt::kReplicaAxis);
  mesh.sizes.insert(mesh.sizes.begin() + *dp, ranks / group);
  mesh.sizes[*dp + 1] = group;
  return llvm::Error::success();
}

} // namespace shardc::driver
