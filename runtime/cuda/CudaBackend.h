//===- CudaBackend.h - the CUDA kernels as the executor sees them -*- C++ -*-===//
#ifndef SHARDC_RUNTIME_CUDA_CUDABACKEND_H
#define SHARDC_RUNTIME_CUDA_CUDABACKEND_H

#include "runtime/core/Kernel.h"

namespace shardc::rt::cuda {

/// Every CUDA kernel by the name exec programs use, with the CPU table's names
/// and parameters (runtime/cpu/CpuBackend.cpp), so that a program runs on
/// either. Each entry has a prepare-time check (KernelTable::add).
const KernelTable &kernelTable();

} // namespace shardc::rt::cuda

#endif
