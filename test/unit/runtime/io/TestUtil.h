//===- TestUtil.h - Temporary files and tensors for the RuntimeIO tests ---===//

#ifndef SHARDC_TEST_UNIT_RUNTIMEIO_TESTUTIL_H
#define SHARDC_TEST_UNIT_RUNTIMEIO_TESTUTIL_H

#include "runtime/core/Tensor.h"
#include "runtime/io/ErrorText.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace shardc::rt::io::test {

/// Every dtype the runtime has, for tests that must cover them all.
inline const std::vector<DType> &allDTypes() {
  static const std::vector<DType> kAll = {DType::F32, DType::F16, DType::BF16, DType::F64,
                                          DType::I64, DType::I32, DType::I16,  DType::I8,
                                          DType::U8,  DType::Bool};
  return kAll;
}

/// A tensor whose bytes follow a pattern that depends on `seed`, so swapped
/// or shifted data shows. Bool bytes stay 0/1, as numpy requires.
inline HostTensor patterned(DType dtype, Shape shape, unsigned seed = 1) {
  HostTensor tensor(dtype, std::move(shape));
  for (size_t i = 0; i < tensor.bytes.size(); ++i) {
    unsigned value = (static_cast<unsigned>(i) * 131 + seed * 17 + 7) & 0xff;
    tensor.bytes[i] = std::byte(dtype == DType::Bool ? (value & 1) : value);
  }
  return tensor;
}

/// A fresh directory under the test temp dir, removed with its contents.
class TempDir : public ::testing::Test {
protected:
  void SetUp() override {
    std::string base = ::testing::TempDir() + "shardc-rtio-XXXXXX";
    std::vector<char> name(base.begin(), base.end());
    name.push_back('\0');
    ASSERT_NE(::mkdtemp(name.data()), nullptr);
    dir_ = name.data();
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  std::string path(const std::string &name) const { return dir_ + "/" + name; }

  /// The names in the directory: a failed write must leave nothing behind.
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto &entry : std::filesystem::directory_iterator(dir_))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string dir_;
};

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void writeFile(const std::string &path, const std::string &bytes) {
  // A new inode each time: ext4 flushes a file that is truncated and
  // rewritten on close, which made the mutation loops crawl.
  std::remove(path.c_str());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Writes `bytes` over the file in place, its inode kept (what `dd
/// conv=notrunc`, or a program opening it "r+b", does): a descriptor open
/// on the file sees them, unlike writeFile's.
inline void overwriteFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::in | std::ios::out);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string bytesOf(const HostTensor &tensor) {
  return std::string(reinterpret_cast<const char *>(tensor.bytes.data()), tensor.bytes.size());
}

inline std::string bytesOf(const TensorView &view) {
  return std::string(static_cast<const char *>(view.data), view.bytes());
}

/// A HostTensor holding these values.
template <typename T> HostTensor tensorOf(DType dtype, Shape shape, const std::vector<T> &values) {
  HostTensor tensor(dtype, std::move(shape));
  EXPECT_EQ(tensor.bytes.size(), values.size() * sizeof(T));
  if (!values.empty())
    std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
  return tensor;
}

/// The tensor's elements as T (the test checks the dtype separately).
template <typename T> std::vector<T> valuesOf(const HostTensor &tensor) {
  std::vector<T> values(tensor.bytes.size() / sizeof(T));
  if (!values.empty())
    std::memcpy(values.data(), tensor.bytes.data(), values.size() * sizeof(T));
  return values;
}

/// Succeeded; prints the error otherwise.
/// (A Status or any StatusOr.)
template <typename Result>::testing::AssertionResult succeeded(const Result &result) {
  if (result)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "failed: " << result.message();
}

/// Failed with an error containing `part`, on one line.
/// (A Status or any StatusOr.)
template <typename Result>
::testing::AssertionResult failsWith(const Result &result, const std::string &part) {
  if (result)
    return ::testing::AssertionFailure() << "succeeded, expected an error with '" << part << "'";
  if (result.message().find(part) == std::string::npos)
    return ::testing::AssertionFailure()
           << "error '" << result.message() << "' lacks '" << part << "'";
  if (result.message().find('\n') != std::string::npos)
    return ::testing::AssertionFailure() << "error spans lines: " << result.message();
  return ::testing::AssertionSuccess();
}

/// Failed, with any one-line message (for mutation loops).
/// (A Status or any StatusOr.)
template <typename Result>::testing::AssertionResult failedCleanly(const Result &result) {
  if (result)
    return ::testing::AssertionFailure() << "succeeded";
  if (result.message().empty() || result.message().find('\n') != std::string::npos)
    return ::testing::AssertionFailure() << "bad message: '" << result.message() << "'";
  return ::testing::AssertionSuccess();
}

//===--- zip surgery for the hostile-archive tests ---------------------------===//

inline uint32_t le(const std::string &bytes, size_t at, int width) {
  uint32_t value = 0;
  for (int i = width - 1; i >= 0; --i)
    value = (value << 8) | static_cast<unsigned char>(bytes.at(at + i));
  return value;
}

inline void putLE(std::string &bytes, size_t at, uint32_t value, int width) {
  for (int i = 0; i < width; ++i)
    bytes.at(at + i) = static_cast<char>((value >> (8 * i)) & 0xff);
}

/// Where things are in a small archive without a comment or zip64 fields.
struct ZipRecordAt {
  std::string name;
  size_t central; // offset of the central directory record
  size_t local;   // offset of the local header
  size_t data;    // offset of the (compressed) data
  uint32_t compressedSize;
};

inline size_t endRecordAt(const std::string &zip) {
  for (size_t at = zip.size() - 22;; --at) {
    if (le(zip, at, 4) == 0x06054b50)
      return at;
    if (at == 0)
      return std::string::npos;
  }
}

inline std::vector<ZipRecordAt> zipRecords(const std::string &zip) {
  std::vector<ZipRecordAt> records;
  size_t end = endRecordAt(zip);
  size_t at = le(zip, end + 16, 4);
  for (uint32_t i = 0, count = le(zip, end + 10, 2); i < count; ++i) {
    ZipRecordAt record;
    size_t nameLength = le(zip, at + 28, 2);
    record.name = zip.substr(at + 46, nameLength);
    record.central = at;
    record.local = le(zip, at + 42, 4);
    record.compressedSize = le(zip, at + 20, 4);
    record.data = record.local + 30 + le(zip, record.local + 26, 2) + le(zip, record.local + 28, 2);
    records.push_back(record);
    at += 46 + nameLength + le(zip, at + 30, 2) + le(zip, at + 32, 2);
  }
  return records;
}

} // namespace shardc::rt::io::test

#endif // SHARDC_TEST_UNIT_RUNTIMEIO_TESTUTIL_H
