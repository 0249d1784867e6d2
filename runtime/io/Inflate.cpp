//===- Inflate.cpp - Raw deflate decompression into a known size ----------===//

#include "runtime/io/Inflate.h"

#include <algorithm>
#include <string>

#include <zlib.h>

namespace shardc::rt::io {

namespace {
/// zlib counts bytes in uInt (32 bits); larger buffers go in pieces.
constexpr size_t kChunk = size_t(1) << 30;

/// Ends the stream on every path out of inflateRaw.
struct StreamGuard {
  z_stream *stream;
  ~StreamGuard() { inflateEnd(stream); }
};
} // namespace

StatusOr<std::vector<std::byte>> inflateRaw(const std::byte *in, size_t inSize, size_t outSize) {
  z_stream stream{};
  // Negative window bits: a raw deflate stream, as zip stores it.
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK)
    return Status::error("cannot initialize zlib");
  StreamGuard guard{&stream};

  std::vector<std::byte> out(outSize);
  // zlib refuses a null output pointer even with no room; give an empty
  // output a valid one.
  std::byte dummy{};
  Bytef *outBase = reinterpret_cast<Bytef *>(outSize ? out.data() : &dummy);
  const Bytef *inBase = reinterpret_cast<const Bytef *>(in);
  size_t inFed = 0, outGiven = 0;

  for (;;) {
    if (stream.avail_in == 0 && inFed < inSize) {
      size_t chunk = std::min(inSize - inFed, kChunk);
      stream.next_in = const_cast<Bytef *>(inBase + inFed);
      stream.avail_in = static_cast<uInt>(chunk);
      inFed += chunk;
    }
    if (stream.avail_out == 0) {
      size_t chunk = std::min(outSize - outGiven, kChunk);
      stream.next_out = outBase + outGiven;
      stream.avail_out = static_cast<uInt>(chunk);
      outGiven += chunk;
    }
    int status = inflate(&stream, Z_NO_FLUSH);
    if (status == Z_STREAM_END)
      break;
    if (status == Z_OK)
      continue;
    if (status == Z_BUF_ERROR) {
      // No progress was possible: either the output is full and the stream
      // wants to write more, or the input ran out before the end.
      if (stream.avail_out == 0 && outGiven == outSize)
        return Status::error("inflated data is larger than the recorded " +
                             std::to_string(outSize) + " bytes");
      return Status::error("deflate data is truncated");
    }
    if (status == Z_DATA_ERROR)
      return Status::error(std::string("corrupt deflate data: ") +
                           (stream.msg ? stream.msg : "invalid stream"));
    if (status == Z_NEED_DICT)
      return Status::error("corrupt deflate data: asks for a preset dictionary");
    if (status == Z_MEM_ERROR)
      return Status::error("out of memory while inflating");
    return Status::error("inflate failed with zlib status " + std::to_string(status));
  }

  size_t produced = outGiven - stream.avail_out;
  if (produced != outSize)
    return Status::error("inflated data is " + std::to_string(produced) +
                         " bytes, the archive records " + std::to_string(outSize));
  size_t unused = inSize - inFed + stream.avail_in;
  if (unused != 0)
    return Status::error(std::to_string(unused) + " bytes follow the end of the deflate stream");
  return out;
}

} // namespace shardc::rt::io
