//===- LinearEpilogueOps.h - elementwise ops a linear's GEMM applies -*- C++ -*-===//
//
// A linear step may carry an epilogue: a chain of elementwise ops applied to
// the GEMM's result before it is stored. The compiler
// (passes/Lowering/FuseLinearEpilogue) hangs an elementwise kernel behind a
// linear only when every op of it is listed here, and the CPU runtime
// (runtime/cpu/PackedLinear) runs each listed op as a oneDNN post-op. One
// list for both, so that every epilogue the compiler writes can run. Names
// are the fused kernel's (runtime/cpu/Fused.h).
//
// Header-only: the compiler includes it without linking the runtime.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_KERNELS_LINEAREPILOGUEOPS_H
#define SHARDC_RUNTIME_KERNELS_LINEAREPILOGUEOPS_H

#include <string_view>

namespace shardc::rt::kernels {

/// How an epilogue op reads its operands: the running value alone, or the
/// running value and one extra input of the result's shape (either order
/// when commutative; the running value first otherwise).
enum class EpilogueOpKind { Unary, Binary, CommutativeBinary };

struct EpilogueOp {
  std::string_view name;
  EpilogueOpKind kind;
};

inline constexpr EpilogueOp kLinearEpilogueOps[] = {
    {"gelu", EpilogueOpKind::Unary},
    {"gelu_tanh", EpilogueOpKind::Unary},
    {"relu", EpilogueOpKind::Unary},
    {"silu", EpilogueOpKind::Unary},
    {"sigmoid", EpilogueOpKind::Unary},
    {"tanh", EpilogueOpKind::Unary},
    {"add", EpilogueOpKind::CommutativeBinary},
    {"mul", EpilogueOpKind::CommutativeBinary},
    {"max", EpilogueOpKind::CommutativeBinary},
    {"min", EpilogueOpKind::CommutativeBinary},
    {"sub", EpilogueOpKind::Binary},
    {"div", EpilogueOpKind::Binary},
};

/// The epilogue op named `name`, or null where a linear cannot apply it.
inline const EpilogueOp *linearEpilogueOp(std::string_view name) {
  for (const EpilogueOp &op : kLinearEpilogueOps)
    if (op.name == name)
      return &op;
  return nullptr;
}

} // namespace shardc::rt::kernels

#endif // SHARDC_RUNTIME_KERNELS_LINEAREPILOGUEOPS_H
