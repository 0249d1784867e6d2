//===- Reduction.h - the sums every communicator computes -------*- C++ -*-===//
//
// Shared by the in-process and the MPI communicator so that both add the
// same way: F32, F64, I32 and I64 in their own type (integers wrap around, as
// two's complement), F16 and BF16 widened to float for the whole reduction
// and rounded once at the end.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_COMM_REDUCTION_H
#define SHARDC_RUNTIME_COMM_REDUCTION_H

#include "runtime/core/Status.h"
#include "runtime/core/Tensor.h"

#include <cstddef>
#include <vector>

namespace shardc::rt::comm {

/// An error naming `collective` unless sums of `dtype` are supported.
Status checkSummable(DType dtype, const char *collective);

/// F16 and BF16: reduced as float.
inline bool isHalfType(DType dtype) { return dtype == DType::F16 || dtype == DType::BF16; }

/// accumulator[i] += in[i], for F32, F64, I32 or I64.
void addInto(void *accumulator, const void *in, size_t count, DType dtype);

/// out[i] = sources[0][i] + sources[1][i] + ... in that order (so every rank
/// that sums the same sources gets the same bits), for count elements of a
/// summable dtype; F16/BF16 accumulate in float and round once. `out` may be
/// one of the sources. Works in cache-sized chunks without allocating.
void sumInOrder(const std::vector<const void *> &sources, void *out, size_t count, DType dtype);

/// F16/BF16 elements as floats, and back (rounded to nearest even).
std::vector<float> widen(const void *in, size_t count, DType dtype);
void narrow(const float *in, void *out, size_t count, DType dtype);

} // namespace shardc::rt::comm

#endif
