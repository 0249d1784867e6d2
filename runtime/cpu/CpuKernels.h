//===- CpuKernels.h - The CPU backend's kernel library ----------*- C++ -*-===//
//
// One function per op of the graph dialect, with the op's exact semantics
// (dialects/Graph/GraphOps.td), computing on tensors the executor owns:
//
//   Status add(const TensorView &a, const TensorView &b, const TensorView &out);
//
// Conventions shared by every kernel:
//  - The caller allocates every output with its exact shape and dtype; a
//    kernel never allocates outputs and allocates scratch only where its
//    header says so. Views are dense row-major.
//  - Attributes come normalized, as the graph dialect holds them (axes
//    non-negative, one slice start/end/step per dim, ...).
//  - Operands are checked (shapes, dtypes, index ranges) before anything is
//    written: a mismatch returns a Status with a message, never a crash.
//  - F16/BF16 are computed in fp32, F32 in fp32, F64 in double.
//  - Threads: see Threading.h (setNumThreads).
//
// Families: Elementwise.h, MatMul.h, Reduction.h, Normalization.h,
// Attention.h (attention, rotary), Movement.h, Indexing.h.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_CPUKERNELS_H
#define SHARDC_RUNTIME_CPU_CPUKERNELS_H

#include "runtime/cpu/Attention.h"
#include "runtime/cpu/Elementwise.h"
#include "runtime/core/HalfFloat.h"
#include "runtime/cpu/Indexing.h"
#include "runtime/cpu/MatMul.h"
#include "runtime/cpu/Movement.h"
#include "runtime/cpu/Normalization.h"
#include "runtime/cpu/Reduction.h"
#include "runtime/cpu/Status.h"
#include "runtime/cpu/Threading.h"

#endif // SHARDC_RUNTIME_CPU_CPUKERNELS_H
