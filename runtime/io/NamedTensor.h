//===- NamedTensor.h - Tensors with the names files give them -------------===//
//
// npz archives and safetensors files are ordered collections of named
// tensors. Readers return them as vectors (file order, which for npz is the
// order numpy.savez was given, and which a user will expect back), not maps:
// names are unique within a file, and findTensor looks one up.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_IO_NAMEDTENSOR_H
#define SHARDC_RUNTIME_IO_NAMEDTENSOR_H

#include "runtime/core/Tensor.h"

#include <string>
#include <string_view>
#include <vector>

namespace shardc::rt::io {

/// A tensor that owns its bytes, with its name in the file.
struct NamedTensor {
  std::string name;
  HostTensor tensor;
};

/// A tensor somewhere in memory, with its name in the file. Writers only
/// read through `view.data`; readers that return views say who owns it.
struct NamedView {
  std::string name;
  TensorView view;
};

/// The entry called `name`, or null.
template <typename Named>
const Named *findTensor(const std::vector<Named> &entries, std::string_view name) {
  for (const Named &entry : entries)
    if (entry.name == name)
      return &entry;
  return nullptr;
}

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_NAMEDTENSOR_H
