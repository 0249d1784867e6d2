//===- SliceCount.h - how many indices a normalized slice picks -*- C++ -*-===//
//
// graph.slice's count per dim, which the constant folder (dialects/Graph/
// ConstEval) and both runtime backends' check (runtime/kernels/Checks.h)
// must agree on: the indices start, start + step, ... before `end`
// (exclusive), for start and end already bounded to [-1, dim] so that
// nothing overflows.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_SLICECOUNT_H
#define SHARDC_RUNTIME_CORE_SLICECOUNT_H

#include <cstdint>

namespace shardc::rt {

/// ceil((end - start) / step), or 0 when the step points away from end;
/// step != 0. Divides without negating step (INT64_MIN has no negation).
inline int64_t sliceCount(int64_t start, int64_t end, int64_t step) {
  const int64_t span = end - start;
  int64_t quotient = span / step, remainder = span % step;
  if (remainder != 0 && ((remainder > 0) == (step > 0)))
    ++quotient;
  return quotient > 0 ? quotient : 0;
}

} // namespace shardc::rt

#endif
