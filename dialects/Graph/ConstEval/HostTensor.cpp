//===- HostTensor.cpp - Constant tensor construction and checks -----------===//

#include "dialects/Graph/ConstEval/HostTensor.h"

#include <sstream>

namespace shardc::constfold {

std::string HostTensor::validate() const {
  int64_t count = numElements();
  if (count < 0)
    return "shape " + formatShape(shape) + " is invalid";
  if (count > kMaxElements)
    return "shape " + formatShape(shape) + " has " + std::to_string(count) +
           " elements, more than the folding limit of " +
           std::to_string(kMaxElements);
  size_t stored = isFloat(type) ? floats.size() : ints.size();
  if (stored != uint64_t(count))
    return "shape " + formatShape(shape) + " needs " + std::to_string(count) +
           " " + typeName(type) + " elements but " + std::to_string(stored) +
           " are stored";
  return "";
}

double HostTensor::asDouble(int64_t index) const {
  return isFloat(type) ? floats[size_t(index)] : double(ints[size_t(index)]);
}

std::string HostTensor::toString(int64_t maxShown) const {
  std::ostringstream out;
  out << typeName(type) << formatShape(shape) << '{';
  size_t stored = isFloat(type) ? floats.size() : ints.size();
  for (size_t i = 0; i < stored; ++i) {
    if (i)
      out << ", ";
    if (int64_t(i) == maxShown) {
      out << "...";
      break;
    }
    if (isFloat(type))
      out << floats[i];
    else
      out << ints[i];
  }
  out << '}';
  return out.str();
}

namespace {
// Element count a factory may allocate for, or -1 (leave the tensor malformed).
int64_t allocatableCount(const Shape &shape) {
  int64_t count = shapeNumElements(shape);
  return count > kMaxElements ? -1 : count;
}
} // namespace

HostTensor HostTensor::fromInts(ScalarType type, Shape shape,
                                std::vector<int64_t> values) {
  HostTensor tensor{type, std::move(shape), {}, {}};
  if (isFloat(type)) {
    tensor.floats.reserve(values.size());
    for (int64_t v : values)
      tensor.floats.push_back(intToFloat(type, v));
  } else {
    for (int64_t &v : values)
      v = wrapInt(type, uint64_t(v));
    tensor.ints = std::move(values);
  }
  return tensor;
}

HostTensor HostTensor::fromFloats(ScalarType type, Shape shape,
                                  std::vector<double> values) {
  HostTensor tensor{type, std::move(shape), {}, {}};
  if (!isFloat(type))
    return tensor; // malformed on purpose, see the header
  for (double &v : values)
    v = roundFloat(type, v);
  tensor.floats = std::move(values);
  return tensor;
}

HostTensor HostTensor::splatInt(ScalarType type, Shape shape, int64_t value) {
  int64_t count = allocatableCount(shape);
  if (count < 0)
    return HostTensor{type, std::move(shape), {}, {}};
  return fromInts(type, std::move(shape),
                  std::vector<int64_t>(size_t(count), value));
}

HostTensor HostTensor::splatFloat(ScalarType type, Shape shape, double value) {
  int64_t count = allocatableCount(shape);
  if (count < 0 || !isFloat(type))
    return HostTensor{type, std::move(shape), {}, {}};
  return fromFloats(type, std::move(shape),
                    std::vector<double>(size_t(count), value));
}

} // namespace shardc::constfold
