//===- TensorBlocks.h - blocks of tensors as manifests place them -*- C++ -*-===//
//
// A trained tensor is held in blocks, one per rank (or per data-parallel
// group of ranks): the artifact manifest and a checkpoint's index say each
// block's shape and where it starts. An ONNX export puts a tensor together
// from its blocks (OnnxExport.cpp); a checkpoint resumed on another plan
// copies the overlap of the saved blocks into each rank's (Checkpoint.cpp).
// Both read those shapes as hostile input and copy with these.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_SESSION_TENSORBLOCKS_H
#define SHARDC_RUNTIME_SESSION_TENSORBLOCKS_H

#include "runtime/core/Tensor.h"

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace shardc::rt {

/// `value` as a shape: non-negative integers, at most 16 of them (far above
/// any real tensor's rank), whose product fits an int64.
std::optional<Shape> shapeOf(const nlohmann::json &value);

/// Whether the block of `inner` at `offsets` lies within `outer`.
bool fits(const Shape &offsets, const Shape &inner, const Shape &outer);

/// Copies the overlap of the row-major block `from` (of `fromShape`,
/// starting at `fromAt` in the tensor) into the row-major block `to` (of
/// `toShape`, at `toAt`), elements of `width` bytes; each element written
/// is marked in `covered` (one per element of `to`) when given.
void copyOverlap(const std::byte *from, const Shape &fromShape, const Shape &fromAt, std::byte *to,
                 const Shape &toShape, const Shape &toAt, size_t width,
                 std::vector<uint8_t> *covered = nullptr);

} // namespace shardc::rt

#endif
