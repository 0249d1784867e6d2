//===- NpyHeader.h - The Python-literal dictionary of a .npy header -------===//
//
// A .npy header is the text of a Python dict literal,
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// which numpy reads with ast.literal_eval. We accept what literal_eval would
// accept for the three keys numpy writes (either quote style, any key order,
// optional trailing commas, any whitespace, Python 2's "3L" dims) and reject
// everything else with the reason: a structured descr (a list), unknown or
// duplicate or missing keys, a shape that is not a tuple of non-negative ints.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_IO_NPYHEADER_H
#define SHARDC_RUNTIME_IO_NPYHEADER_H

#include "runtime/core/Tensor.h"
#include "runtime/io/ErrorText.h"

#include <string>
#include <string_view>

namespace shardc::rt::io {

struct NpyHeaderDict {
  std::string descr;
  bool fortranOrder = false;
  Shape shape;
};

/// Parses the dict text (after the magic, version and length; padding and
/// the final newline included).
StatusOr<NpyHeaderDict> parseNpyHeaderDict(std::string_view text);

/// The dict text exactly as numpy formats it, without padding:
/// "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }".
std::string formatNpyHeaderDict(const NpyHeaderDict &dict);

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_NPYHEADER_H
