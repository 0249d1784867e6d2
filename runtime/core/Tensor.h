//===- Tensor.h - element types and tensor views of the runtime -*- C++ -*-===//
//
// The runtime links neither MLIR nor LLVM: these are its own, minimal types.
// A TensorView is a dense row-major tensor somewhere in memory (an arena
// buffer, a weight file's bytes, a user's input); a HostTensor owns its bytes.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_TENSOR_H
#define SHARDC_RUNTIME_CORE_TENSOR_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardc::rt {

enum class DType : uint8_t { F32, F16, BF16, F64, I64, I32, I16, I8, U8, Bool };

/// Bytes per element (Bool is one byte).
size_t dtypeSize(DType dtype);
/// "float32", "float16", "bfloat16", "float64", "int64", ..., "bool" (numpy's names).
const char *dtypeName(DType dtype);
std::optional<DType> dtypeFromName(std::string_view name);

using Shape = std::vector<int64_t>;
int64_t numElements(const Shape &shape);
/// "[2, 16, 64]", for messages.
std::string formatShape(const Shape &shape);

/// A dense, row-major tensor the caller owns.
struct TensorView {
  void *data = nullptr;
  DType dtype = DType::F32;
  Shape shape;

  int64_t numel() const { return numElements(shape); }
  size_t bytes() const { return static_cast<size_t>(numel()) * dtypeSize(dtype); }
  template <typename T> T *as() const { return static_cast<T *>(data); }
};

/// A tensor that owns its bytes (inputs and outputs on the host).
struct HostTensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<std::byte> bytes;

  HostTensor() = default;
  HostTensor(DType dtype, Shape shape);
  TensorView view() { return {bytes.data(), dtype, shape}; }
  int64_t numel() const { return numElements(shape); }
};

/// A tensor a program takes or gives: its name, element type and shape.
struct TensorSignature {
  std::string name;
  DType dtype;
  Shape shape;
};

} // namespace shardc::rt

#endif
