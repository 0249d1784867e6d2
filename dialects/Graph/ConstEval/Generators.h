//===- Generators.h - Ops that make tensors from scalars: Range -*- C++ -*-===//

#ifndef SHARDC_DIALECTS_GRAPH_CONSTEVAL_GENERATORS_H
#define SHARDC_DIALECTS_GRAPH_CONSTEVAL_GENERATORS_H

#include "dialects/Graph/ConstEval/HostTensor.h"

namespace shardc::constfold {

/// ONNX Range on its three scalar operands (rank 0, or one element), all of
/// one integer or float type; dispatches to rangeInt / rangeFloat.
StatusOr<HostTensor> range(const HostTensor &start, const HostTensor &limit,
                           const HostTensor &delta);

/// ONNX Range for an integer type: count = max(ceil((limit - start) / delta),
/// 0) and element i = start + i * delta, computed exactly (no int64
/// overflow even for start = INT64_MIN, limit = INT64_MAX). The operands must
/// fit `type`; delta 0 fails.
StatusOr<HostTensor> rangeInt(ScalarType type, int64_t start, int64_t limit, int64_t delta);

/// ONNX Range for a float type: the count as above computed in double, element
/// i = start + i * delta computed in double and rounded to `type` (the ONNX
/// reference formula; a runtime that accumulates `x += delta` in f32 can
/// differ in the last bits). Non-finite operands and delta 0 fail.
StatusOr<HostTensor> rangeFloat(ScalarType type, double start, double limit, double delta);

} // namespace shardc::constfold

#endif // SHARDC_DIALECTS_GRAPH_CONSTEVAL_GENERATORS_H
