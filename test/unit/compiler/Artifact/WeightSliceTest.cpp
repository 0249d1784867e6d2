//===- WeightSliceTest.cpp - a weight's box is cut out byte for byte -------===//
//
// extractBox copies whole innermost rows; it is checked against a naive
// element-by-element copy on random shapes of rank 0 to 4 and every element
// width the artifact stores.
//
//===----------------------------------------------------------------------===//
#include "compiler/Artifact/WeightSlicing.h"

#include <gtest/gtest.h>

#include <random>

using shardc::artifact::extractBox;

namespace {

using Shape = std::vector<int64_t>;

/// The box, one element at a time: for every index of `shape` (row-major)
/// the element at index + offsets of the stored tensor.
std::vector<char> naiveBox(const std::vector<char> &stored, int64_t elementBytes,
                           const Shape &storedShape, const Shape &offsets, const Shape &shape) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  std::vector<char> box;
  Shape index(shape.size(), 0);
  for (int64_t element = 0; element < count; ++element) {
    int64_t source = 0;
    for (size_t dim = 0; dim < shape.size(); ++dim)
      source = source * storedShape[dim] + offsets[dim] + index[dim];
    for (int64_t byte = 0; byte < elementBytes; ++byte)
      box.push_back(stored[source * elementBytes + byte]);
    for (size_t dim = shape.size(); dim-- > 0;) {
      if (++index[dim] < shape[dim])
        break;
      index[dim] = 0;
    }
  }
  return box;
}

std::vector<char> randomBytes(size_t count, std::mt19937 &random) {
  std::vector<char> bytes(count);
  for (char &byte : bytes)
    byte = char(random() & 0xff);
  return bytes;
}

TEST(WeightSlice, RandomBoxesMatchElementwiseCopy) {
  std::mt19937 random(31337);
  const int64_t widths[] = {1, 2, 4, 8};
  int empty = 0, whole = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    int64_t elementBytes = widths[random() % 4];
    size_t rank = random() % 5;
    Shape storedShape, offsets, shape;
    int64_t storedCount = 1;
    for (size_t dim = 0; dim < rank; ++dim) {
      int64_t stored = 1 + random() % 6;
      // Now and then the box spans the whole dim, or none of it.
      int64_t size = random() % 5 == 0 ? stored : random() % (stored + 1);
      storedShape.push_back(stored);
      shape.push_back(size);
      offsets.push_back(random() % (stored - size + 1));
      storedCount *= stored;
    }
    std::vector<char> stored = randomBytes(size_t(storedCount * elementBytes), random);
    SCOPED_TRACE("trial " + std::to_string(trial) + ", rank " + std::to_string(rank) +
                 ", element bytes " + std::to_string(elementBytes));
    std::vector<char> box = extractBox(stored, elementBytes, storedShape, offsets, shape);
    std::vector<char> expected = naiveBox(stored, elementBytes, storedShape, offsets, shape);
    ASSERT_EQ(box, expected);
    empty += expected.empty();
    whole += shape == storedShape;
  }
  EXPECT_GT(empty, 0);
  EXPECT_GT(whole, 0);
}

TEST(WeightSlice, ScalarIsCopiedWhole) {
  std::vector<char> stored = {'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'};
  EXPECT_EQ(extractBox(stored, 8, {}, {}, {}), stored);
}

TEST(WeightSlice, InnerBoxOfAMatrix) {
  // Rows 1..2, columns 1..3 of a 3x4 matrix of 2-byte elements numbered 0..11.
  std::vector<char> stored;
  for (char element = 0; element < 12; ++element) {
    stored.push_back(element);
    stored.push_back(char(100 + element));
  }
  std::vector<char> expected;
  for (char element : {5, 6, 7, 9, 10, 11}) {
    expected.push_back(element);
    expected.push_back(char(100 + element));
  }
  EXPECT_EQ(extractBox(stored, 2, {3, 4}, {1, 1}, {2, 3}), expected);
}

} // namespace
