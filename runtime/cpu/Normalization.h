//===- Normalization.h - layer_norm and rms_norm ----------------*- C++ -*-===//
//
// Both normalize each "row" of the dims [axis, rank) independently, in
// parallel over rows. Numerics: two passes over the row with the sums in
// double, mean first and then the centred sum of squares, so the variance
// does not suffer the cancellation of E[x^2] - E[x]^2 (activations with a
// large mean and small spread are common after residual adds); the
// normalized value is then formed in the compute type (fp32, F64 in double),
// centred with the mean carried as a compensated pair of fp32 values (hi + lo)
// so that the mean's own rounding does not shift the result.
//
// scale (and bias) must broadcast to the normalized dims shape[axis:]; the
// usual exact-shape parameter is read in place, a broadcast one is expanded
// into scratch first. In place (out == input) is allowed.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_NORMALIZATION_H
#define SHARDC_RUNTIME_CPU_NORMALIZATION_H

#include "runtime/core/Tensor.h"
#include "runtime/cpu/Status.h"

namespace shardc::rt::cpu {

/// out = (x - mean) / sqrt(var + epsilon) * scale + bias, mean and (biased)
/// variance over dims [axis, rank). `bias` may be null. Float types.
Status layerNorm(const TensorView &input, const TensorView &scale, const TensorView *bias,
                 int64_t axis, double epsilon, const TensorView &out);

/// out = x / sqrt(mean(x^2) + epsilon) * scale over dims [axis, rank).
Status rmsNorm(const TensorView &input, const TensorView &scale, int64_t axis,
               double epsilon, const TensorView &out);

} // namespace shardc::rt::cpu

#endif // SHARDC_RUNTIME_CPU_NORMALIZATION_H
