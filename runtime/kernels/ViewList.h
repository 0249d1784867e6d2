//===- ViewList.h - a non-owning list of tensor views -----------*- C++ -*-===//
#ifndef SHARDC_RUNTIME_KERNELS_VIEWLIST_H
#define SHARDC_RUNTIME_KERNELS_VIEWLIST_H

#include "runtime/core/Tensor.h"

#include <cstddef>
#include <vector>

namespace shardc::rt::kernels {

/// The operands of a kernel that takes any number of them (concat's inputs,
/// split's results, the fused kernel's inputs), as C++17 has no std::span:
/// from a vector or a pointer and a count. It must not outlive them.
class ViewList {
public:
  ViewList(const TensorView *items, size_t size) : items_(items), size_(size) {}
  ViewList(const std::vector<TensorView> &items) : items_(items.data()), size_(items.size()) {}
  size_t size() const { return size_; }
  const TensorView &operator[](size_t i) const { return items_[i]; }
  const TensorView *begin() const { return items_; }
  const TensorView *end() const { return items_ + size_; }

private:
  const TensorView *items_;
  size_t size_;
};

} // namespace shardc::rt::kernels

#endif // SHARDC_RUNTIME_KERNELS_VIEWLIST_H
