//===- Status.h - Success or an error message from a CPU kernel -*- C++ -*-===//
//
// The runtime's Status, as the CPU kernels' API names it. Why kernels return
// one and how its messages read: runtime/kernels/Operands.h.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_STATUS_H
#define SHARDC_RUNTIME_CPU_STATUS_H

#include "runtime/core/Status.h"

namespace shardc::rt::cpu {

using Status = rt::Status;

} // namespace shardc::rt::cpu

#endif // SHARDC_RUNTIME_CPU_STATUS_H
