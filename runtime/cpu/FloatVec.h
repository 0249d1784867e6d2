//===- FloatVec.h - one SIMD register of floats, as a C++ value -*- C++ -*-===//
//
// The register-tiled loops (attention's block products) hold a tile of
// accumulators in named vector values. Plain loops over float arrays are
// left to the auto-vectorizer, which keeps such tiles in memory: every
// multiply-add then loads and stores its accumulator, and the loop runs at
// the L1 store rate instead of the FMA rate. GCC's and Clang's vector
// extension types are values the register allocator keeps, at the width the
// kernels are compiled for (-march, see CMakeLists.txt), with no intrinsics
// tying the code to one instruction set.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_FLOATVEC_H
#define SHARDC_RUNTIME_CPU_FLOATVEC_H

#include <cstdint>
#include <cstring>

namespace shardc::rt::cpu::simd {

#if defined(__AVX512F__)
inline constexpr int64_t kFloatLanes = 16;
#elif defined(__AVX__)
inline constexpr int64_t kFloatLanes = 8;
#else
inline constexpr int64_t kFloatLanes = 4; // SSE2, baseline x86-64
#endif

typedef float FloatVec __attribute__((vector_size(kFloatLanes * sizeof(float))));

/// kFloatLanes floats from `p` (any alignment).
inline FloatVec loadVec(const float *p) {
  FloatVec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void storeVec(float *p, FloatVec v) { std::memcpy(p, &v, sizeof v); }

inline FloatVec splat(float x) { return FloatVec{} + x; }

} // namespace shardc::rt::cpu::simd

#endif // SHARDC_RUNTIME_CPU_FLOATVEC_H
