//===- Npy.h - numpy .npy files -------------------------------------------===//
//
// Reads and writes numpy's .npy format (versions 1.0, 2.0 and 3.0): the magic
// "\x93NUMPY", a version, a header length, a Python-literal dict header, then
// the raw array bytes. Supported: C order, little-endian, the runtime's dtypes
// (see NpyDtype.h for the descrs and the bfloat16 convention). fortran_order
// is rejected unless the layout coincides with C order (at most one dim > 1).
// The data must be exactly numel * itemsize bytes: short files are
// "truncated", extra bytes are an error too (they mean a corrupt header).
//
// The decode/encode functions work on memory and their errors name no file;
// readNpy/writeNpy prefix the path ("x.npy: unsupported dtype '<c8'"). Npz
// builds on the in-memory ones.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_IO_NPY_H
#define SHARDC_RUNTIME_IO_NPY_H

#include "runtime/core/Tensor.h"
#include "runtime/io/ErrorText.h"

#include <cstddef>
#include <string>
#include <vector>

namespace shardc::rt::io {

/// Decodes a whole .npy image, copying the data into a new HostTensor.
StatusOr<HostTensor> decodeNpy(const std::byte *data, size_t size);

/// Decodes a whole .npy image, reusing `image`'s storage for the tensor (the
/// header is shifted out), so an inflated npz entry is not copied again.
StatusOr<HostTensor> decodeNpy(std::vector<std::byte> &&image);

/// Everything that precedes the data in a .npy file for this dtype and shape:
/// version 1.0 (2.0 if the header exceeds 64 KiB), padded like numpy with
/// spaces so the data starts at a multiple of 64 bytes. Fails on a negative
/// dim or a byte count past INT64_MAX.
StatusOr<std::string> encodeNpyHeader(DType dtype, const Shape &shape);

/// Reads a .npy file (mapped, then copied once into the tensor).
StatusOr<HostTensor> readNpy(const std::string &path);

/// Writes a .npy file atomically (temporary name, then rename). The view's
/// `data` must hold view.bytes() bytes; it is only read.
Status writeNpy(const std::string &path, const TensorView &tensor);
Status writeNpy(const std::string &path, const HostTensor &tensor);

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_NPY_H
