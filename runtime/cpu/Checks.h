//===- Checks.h - the shared operand checks, for the CPU kernels -*- C++ -*-===//
//
// Each op's operand checks and result-shape arithmetic are the kernel
// contract's (runtime/kernels/Checks.h), which the CUDA backend runs too, so
// both accept and reject the same steps with the same messages. The CPU
// kernels call them unqualified from cpu::detail (KernelSupport.h).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_CHECKS_H
#define SHARDC_RUNTIME_CPU_CHECKS_H

#include "runtime/cpu/KernelSupport.h"
#include "runtime/kernels/Checks.h"

#endif // SHARDC_RUNTIME_CPU_CHECKS_H
