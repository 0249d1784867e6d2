//===- ReportWriter.h - what a sharding plan costs, for people -*- C++ -*-===//
//
// Built from the sharded global program (every op annotated, every reshard
// explicit; --emit=sharded), whose reshards become exactly the collectives
// shardc-partition emits (both use planReshard). JSON for tools
// (--report FILE.json) and a readable summary (--verbose) that puts each
// transformer layer's tensor-parallel traffic beside Megatron-LM's
// analytic value: 2 all-reduces of b*s*h per layer in the forward pass,
// 2(t-1)/t of it moved per device by a ring.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_REPORT_REPORTWRITER_H
#define SHARDC_COMPILER_REPORT_REPORTWRITER_H

#include "passes/Sharding/CostModel.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace shardc::report {

struct Report {
  llvm::json::Value json = nullptr;
  std::string summary;
};

/// The report of `module` (sharded, or without a mesh: one device; a
/// pipelined module's stage functions are walked in stage order as one
/// program, per micro-batch, and add the `pipeline` section of
/// PipelineReport.h). Without `priced` (a CPU target, no --device given)
/// the summary names the CPU and prints no time estimate: the cost model
/// knows GPUs only, and the plan's search used `device` as a relative
/// measure. The JSON always has them.
mlir::FailureOr<Report> buildReport(mlir::ModuleOp module, const sharding::DeviceModel &device,
                                    bool priced = true);

} // namespace shardc::report

#endif
