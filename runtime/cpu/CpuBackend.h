//===- CpuBackend.h - the CPU kernels as the executor sees them -*- C++ -*-===//
#ifndef SHARDC_RUNTIME_CPU_CPUBACKEND_H
#define SHARDC_RUNTIME_CPU_CPUBACKEND_H

#include "runtime/core/Kernel.h"

#include <cstddef>

namespace shardc::rt::cpu {

/// Every CPU kernel by the name exec programs use ("add", "linear", "fused"...).
const KernelTable &kernelTable();

/// The most threads a rank's kernels may use: far beyond the cores they only
/// contend, and the OpenMP runtime runs out of stacks (shardrun --threads
/// 100000 crashed in it).
constexpr int kMaxThreads = 1024;

/// Threads the kernels (GEMMs included) use; 0 means one per core.
void setThreads(int threads);
int threads();

/// The most bytes of packed weight copies the process held at once
/// (PackedLinear.h: one per weight block, however many steps and in-process
/// ranks read it).
size_t peakPackedWeightBytes();

} // namespace shardc::rt::cpu

#endif
