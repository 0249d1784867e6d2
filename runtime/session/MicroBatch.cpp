//===- MicroBatch.cpp - cut caller tensors into micro-batches -------------===//
#include "runtime/session/MicroBatch.h"

#include <cstring>
#include <utility>

namespace shardc::rt {
namespace {

/// How many blocks lie before `dim`, and the bytes of one index of `dim`.
std::pair<int64_t, size_t> blocksOf(const Shape &shape, int dim, DType dtype) {
  int64_t outer = 1;
  for (int i = 0; i < dim; ++i)
    outer *= shape[i];
  size_t inner = dtypeSize(dtype);
  for (size_t i = dim + 1; i < shape.size(); ++i)
    inner *= static_cast<size_t>(shape[i]);
  return {outer, inner};
}

} // namespace

HostTensor sliceAlong(const HostTensor &whole, int dim, int index, int pieces) {
  Shape shape = whole.shape;
  shape[dim] /= pieces;
  HostTensor piece(whole.dtype, shape);
  auto [outer, inner] = blocksOf(whole.shape, dim, whole.dtype);
  const size_t part = inner * static_cast<size_t>(shape[dim]);
  const size_t row = inner * static_cast<size_t>(whole.shape[dim]);
  for (int64_t block = 0; block < outer; ++block)
    std::memcpy(piece.bytes.data() + block * part, whole.bytes.data() + block * row + index * part,
                part);
  return piece;
}

HostTensor joinAlong(const std::vector<HostTensor> &pieces, int dim) {
  Shape shape = pieces.front().shape;
  shape[dim] *= static_cast<int64_t>(pieces.size());
  HostTensor whole(pieces.front().dtype, shape);
  auto [outer, inner] = blocksOf(shape, dim, whole.dtype);
  const size_t part = inner * static_cast<size_t>(pieces.front().shape[dim]);
  const size_t row = part * pieces.size();
  for (size_t index = 0; index < pieces.size(); ++index)
    for (int64_t block = 0; block < outer; ++block)
      std::memcpy(whole.bytes.data() + block * row + index * part,
                  pieces[index].bytes.data() + block * part, part);
  return whole;
}

} // namespace shardc::rt
