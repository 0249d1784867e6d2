//===- KernelSupport.cpp - Checks, broadcasting and strided copies --------===//
#include "runtime/cpu/KernelSupport.h"

#include "runtime/cpu/Parallel.h"

#include <cstring>

namespace shardc::rt::cpu::detail {

namespace {

template <typename U>
void stridedCopyAs(U *dst, const U *src, int64_t srcBase, const Walk<2> &walk,
                   int64_t count) {
  const int64_t srcInner = walk.innerStride(1);
  parallelFor(count, 1, [&](int64_t begin, int64_t end) {
    walk.run(begin, end, {0, srcBase},
             [&](const std::array<int64_t, 2> &at, int64_t n) {
               U *out = dst + at[0];
               const U *in = src + at[1];
               if (srcInner == 1) {
                 std::memcpy(out, in, size_t(n) * sizeof(U));
               } else if (srcInner == 0) {
                 std::fill(out, out + n, *in);
               } else {
                 for (int64_t i = 0; i < n; ++i)
                   out[i] = in[i * srcInner];
               }
             });
  });
}

} // namespace

void stridedCopy(size_t elementSize, void *dst, const void *src,
                 int64_t srcBase, const Walk<2> &walk, int64_t count) {
  switch (elementSize) {
  case 1:
    stridedCopyAs(static_cast<uint8_t *>(dst), static_cast<const uint8_t *>(src),
                  srcBase, walk, count);
    break;
  case 2:
    stridedCopyAs(static_cast<uint16_t *>(dst), static_cast<const uint16_t *>(src),
                  srcBase, walk, count);
    break;
  case 4:
    stridedCopyAs(static_cast<uint32_t *>(dst), static_cast<const uint32_t *>(src),
                  srcBase, walk, count);
    break;
  default:
    stridedCopyAs(static_cast<uint64_t *>(dst), static_cast<const uint64_t *>(src),
                  srcBase, walk, count);
    break;
  }
}

} // namespace shardc::rt::cpu::detail
