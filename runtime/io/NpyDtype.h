//===- NpyDtype.h - numpy type descriptors of the runtime's dtypes --------===//
//
// A .npy header names its element type with numpy's array-protocol string
// ("<f4", "|b1"). numpy itself has no bfloat16; ml_dtypes, the package JAX
// and PyTorch users save bfloat16 arrays with, registers it as a 2-byte
// opaque type, so np.save writes its descr as "<V2". We read "<V2" and "|V2"
// as BF16 (the runtime has no other 2-byte opaque type) and write BF16 as
// "<V2", exactly what ml_dtypes writes: `np.load(f).view(ml_dtypes.bfloat16)`
// gets the values back, and plain numpy can still load the file.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_IO_NPYDTYPE_H
#define SHARDC_RUNTIME_IO_NPYDTYPE_H

#include "runtime/core/Tensor.h"
#include "runtime/io/ErrorText.h"

#include <string_view>

namespace shardc::rt::io {

/// The DType of a little-endian descr: "<f4" -> F32. Errors: "unsupported
/// dtype '<c8'", "unsupported dtype '>f4' (big-endian)".
StatusOr<DType> dtypeFromNpyDescr(std::string_view descr);

/// The descr numpy writes for `dtype`: "<f4", "|b1", "<V2" for BF16.
const char *npyDescr(DType dtype);

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_NPYDTYPE_H
