//===- CpuBackend.h - the CPU kernels as the executor sees them -*- C++ -*-===//
#ifndef SHARDC_RUNTIME_CPU_CPUBACKEND_H
#define SHARDC_RUNTIME_CPU_CPUBACKEND_H

#include "runtime/core/Kernel.h"

namespace shardc::rt::cpu {

/// Every CPU kernel by the name exec programs use ("add", "linear", "fused"...).
const KernelTable &kernelTable();

/// Threads the kernels (GEMMs included) use; 0 means one per core.
void setThreads(int threads);
int threads();

} // namespace shardc::rt::cpu

#endif
