//===- Inflate.h - Raw deflate decompression into a known size ------------===//
//
// numpy.savez_compressed stores each .npy as a raw deflate stream (zip method
// 8, no zlib or gzip wrapper) whose uncompressed size the central directory
// records. Decompressing into a buffer of exactly that size, and requiring
// the stream to end exactly there, catches truncated and padded streams and
// bounds memory by the recorded size instead of by what the stream claims.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_IO_INFLATE_H
#define SHARDC_RUNTIME_IO_INFLATE_H

#include "runtime/io/ErrorText.h"

#include <cstddef>
#include <vector>

namespace shardc::rt::io {

/// Inflates the raw deflate stream in[0, inSize) into exactly `outSize`
/// bytes. Errors: "corrupt deflate data: invalid block type", "deflate data
/// is truncated", "inflated data is larger than the recorded N bytes".
StatusOr<std::vector<std::byte>> inflateRaw(const std::byte *in, size_t inSize, size_t outSize);

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_INFLATE_H
