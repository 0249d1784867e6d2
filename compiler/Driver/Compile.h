//===- Compile.h - what shardc does, callable without its command line -*- C++ -*-===//
//
// The shardc tool parses flags into CompileOptions and calls compile(); every
// check of the options, the mesh, the phases and the order of the outputs
// live here, so another front end (a test, a Python binding) compiles the
// same way.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_DRIVER_COMPILE_H
#define SHARDC_COMPILER_DRIVER_COMPILE_H

#include "compiler/Driver/Limits.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardc::driver {

/// shardc's flags, as written on its command line (checked by compile()).
struct CompileOptions {
  /// An ONNX model (.onnx, .onnxtext) or a graph-phase MLIR module (.mlir).
  std::string modelPath;
  /// Folders an MLIR module's weight files may lie in besides its own.
  std::vector<std::string> weightsDirs;
  std::string outputPath = "-";
  std::string emit = "artifact";
  std::string target = "cpu";
  std::string cudaArch; ///< "": sm_90 for cuda
  std::string dtype = "fp32";
  std::vector<std::string> dims, inputShapes, constantInputs;
  /// Mesh degrees as text ("": not given), parsed with the driver's words.
  std::string tensorParallel, dataParallel, expertParallel, pipelineParallel, mesh;
  /// Pipelines (--pp > 1): micro-batches and virtual stages as text ("": 1),
  /// the schedule ("": gpipe, or 1f1b when training), and the --pp-split
  /// values: ONNX node names a stage must end after, NODE,... with '\,' for
  /// a comma inside a name.
  std::string microbatches, virtualStages;
  std::string schedule;
  /// --recompute ("": selective).
  std::string recompute;
  std::vector<std::string> pipelineSplits;
  bool sequenceParallel = false;
  int64_t maxRanks = kDefaultMaxRanks;
  std::string device = "h100";
  /// Whether --device was given: a CPU plan's summary is priced only then.
  bool deviceGiven = false;
  std::string deviceMemory;
  /// --moe-capacity-factor as given ("" when absent: dropless).
  std::string moeCapacityFactor;
  std::string reportPath;
  bool verbose = false;
  /// --train and its flags as written ("": not given), checked by compile().
  bool train = false;
  std::string loss, optimizer, learningRate, betas, epsilon, weightDecay, momentum, gradClip;
  std::vector<std::string> freeze;
  bool untie = false;
  bool noDecay1d = false;
  std::string zero; ///< --zero as written
  bool fsdp = false;
  std::string bucketMb; ///< --bucket-mb as written
  std::string zeroGroup; ///< --zero-group as written
};

/// Compiles as `shardc` does: every error printed as one line prefixed by
/// `tool`, nothing written unless the whole compilation succeeds. Returns the
/// process exit code (0 or 1).
int compile(const CompileOptions &options, const char *tool);

} // namespace shardc::driver

#endif
