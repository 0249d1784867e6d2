//===- SafeTensors.h - safetensors weight files ---------------------------===//
//
// Each rank's weight shard is a safetensors file: an 8-byte little-endian
// header length N, N bytes of JSON
//   {"__metadata__": {"rank": "0", "mesh": "dp=1,tp=2", "coords": "0,1"},
//    "w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}, ...}
// then the data buffer, each tensor's bytes at [begin, end) within it.
//
// Layout we write by default (valid safetensors, stricter than the format
// needs): the header is padded with spaces so the data buffer starts at a
// file offset that is a multiple of 64, and each tensor's begin is a multiple
// of 64, with zero bytes between tensors. Read to a page boundary, every tensor is
// thus 64-byte aligned in memory, ready for vector loads and for cudaMemcpy
// without a staging copy. The format's description only asks that offsets
// lie in the buffer, but Hugging Face's implementation (the Rust crate, which
// Python's safe_open and load_file also use) demands contiguous tensors and
// refuses a file with gaps ("InvalidOffset"). So a shard whose tensors are
// not all multiples of 64 bytes long loads here but not in `safetensors`;
// the files are the runtime's own, and alignment is worth more to it.
// (SafeTensorsWriteOptions{1} writes the contiguous layout instead.)
//
// Reading copies the file into memory of the process's own (FileCopy.h: a
// file only mapped could be truncated or rewritten under the kernels that
// read it) and validates the header fully: the length
// lies within the file (and under 10^8 bytes), the JSON parses with no duplicate
// keys, every dtype is known, shapes are non-negative, each tensor's byte
// count is numel * element size, offsets lie in the buffer and do not overlap.
// Gaps between tensors are allowed (they are our padding). Views into a file
// written by another tool are aligned only as well as that tool placed them.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_IO_SAFETENSORS_H
#define SHARDC_RUNTIME_IO_SAFETENSORS_H

#include "runtime/io/ErrorText.h"
#include "runtime/io/FileCopy.h"
#include "runtime/io/NamedTensor.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardc::rt::io {

/// Free-form string pairs of a file's "__metadata__" (mesh coordinates, ...).
using SafeTensorsMetadata = std::map<std::string, std::string>;

/// "F32", "F16", "BF16", "F64", "I64", "I32", "I16", "I8", "U8", "BOOL".
const char *safeTensorsDtypeName(DType dtype);
std::optional<DType> dtypeFromSafeTensorsName(std::string_view name);

struct SafeTensorsWriteOptions {
  /// Where the data buffer and each tensor begin: a power of two up to 4096.
  /// 1 writes tensors back to back (header padded to 8), the layout Hugging
  /// Face's library insists on, for files meant for other tools.
  uint64_t alignment = 64;
};

/// Writes the tensors in the given order (aligned, see above), atomically.
/// Names must be non-empty, unique, valid UTF-8 and not "__metadata__";
/// metadata strings must be valid UTF-8. An empty metadata map writes no
/// "__metadata__" key. Each view's data must hold view.bytes() bytes; it is
/// only read.
Status writeSafeTensors(const std::string &path, const std::vector<NamedView> &tensors,
                        const SafeTensorsMetadata &metadata = {},
                        SafeTensorsWriteOptions options = {});
Status writeSafeTensors(const std::string &path, const std::vector<NamedTensor> &tensors,
                        const SafeTensorsMetadata &metadata = {},
                        SafeTensorsWriteOptions options = {});

/// A safetensors file's bytes, read at load (FileCopy.h). Move-only; the
/// views stay valid (at the same addresses) for as long as the object, or
/// the one it was moved into, lives, but for the tensors hold() lets go.
class SafeTensorsFile {
public:
  /// Reads and validates the file. Errors name it: "w.safetensors: tensor
  /// 'wq': data_offsets [0, 12] hold 12 bytes, float32 [2, 3] needs 24".
  static StatusOr<SafeTensorsFile> open(const std::string &path);
  /// Validates a copy already read, whose size and CRC-32 the caller may
  /// have compared with what it expects first.
  static StatusOr<SafeTensorsFile> parse(FileCopy file);

  const std::string &path() const { return file_.path(); }
  const SafeTensorsMetadata &metadata() const { return metadata_; }

  /// Every tensor, in data-offset order (ties by name). The views point into
  /// the read-only copy: never write through them (it faults); copy first.
  const std::vector<NamedView> &tensors() const { return tensors_; }

  /// The tensor called `name`, or null.
  const TensorView *find(std::string_view name) const;

  /// Keeps the bytes of the tensor `name` in memory while the handle
  /// returned, or a copy of it, lives: a reader that copies a weight (a
  /// packed GEMM weight, a state's first value, a device's copy) holds it
  /// while it copies, and one that reads it in place holds it for as long
  /// as it may. The load read every tensor; when a tensor's last holder lets
  /// go, its bytes leave memory (FileCopy::drop), and the next hold reads
  /// them back from the file, checked against what the load read
  /// (FileCopy::restore): a file changed since fails it, naming the file,
  /// and no bytes of it are used. Ranks run as threads share the file, and
  /// so the holds. A view of a tensor let go must not be read. Handles must
  /// not outlive the file, nor be taken before it is in place (moving it
  /// would leave them behind). Thread-safe. Fails for a name the file lacks.
  StatusOr<std::shared_ptr<const void>> hold(std::string_view name) const;

  /// How many bytes of the file are out of memory now (FileCopy::drop).
  size_t droppedBytes() const { return file_.droppedBytes(); }

  /// File offset of the data buffer (8 + header length).
  uint64_t dataOffset() const { return dataOffset_; }

private:
  SafeTensorsFile() = default;

  FileCopy file_;
  /// How many handles hold each tensor (tensors()' order).
  struct Holds {
    std::mutex lock;
    std::vector<int> count;
  };
  std::unique_ptr<Holds> holds_;
  SafeTensorsMetadata metadata_;
  std::vector<NamedView> tensors_;
  uint64_t dataOffset_ = 0;
};

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_SAFETENSORS_H
