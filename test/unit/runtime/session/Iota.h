//===- Iota.h - a float tensor of 0, 1, 2, ... for the session tests -*- C++ -*-===//
#ifndef SHARDC_TEST_UNIT_RUNTIME_SESSION_IOTA_H
#define SHARDC_TEST_UNIT_RUNTIME_SESSION_IOTA_H

#include "runtime/core/Tensor.h"

namespace shardc::rt {

/// Element i holds i, so a slice or a join shows where each value went.
inline HostTensor iota(Shape shape) {
  HostTensor tensor(DType::F32, shape);
  auto *values = reinterpret_cast<float *>(tensor.bytes.data());
  for (int64_t i = 0; i < tensor.numel(); ++i)
    values[i] = static_cast<float>(i);
  return tensor;
}

} // namespace shardc::rt

#endif
