//===- Status.h - Success or an error message from a CPU kernel -*- C++ -*-===//
//
// Kernels are called by a table-driven executor with tensors it planned at
// compile time, so a mismatch is a bug upstream, not an exceptional event:
// every kernel checks its operands cheaply and returns the runtime's Status
// instead of crashing or throwing.
//
// Messages follow the project's diagnostic style: they start with the op
// name, are lower-case, have no trailing period and name the concrete values,
// e.g. "add: shapes [2, 3] and [4] do not broadcast".
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_STATUS_H
#define SHARDC_RUNTIME_CPU_STATUS_H

#include "runtime/core/Status.h"

namespace shardc::rt::cpu {

using Status = rt::Status;

} // namespace shardc::rt::cpu

#endif // SHARDC_RUNTIME_CPU_STATUS_H
