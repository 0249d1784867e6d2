//===- MappedFile.cpp - A whole file mapped read-only ---------------------===//

#include "runtime/io/MappedFile.h"

#include <cerrno>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shardc::rt::io {

std::string errnoMessage(int error) {
  return std::error_code(error, std::generic_category()).message();
}

StatusOr<MappedFile> MappedFile::open(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Status::error(path + ": cannot open: " + errnoMessage(errno));

  struct stat info;
  if (::fstat(fd, &info) != 0) {
    int error = errno;
    ::close(fd);
    return Status::error(path + ": cannot stat: " + errnoMessage(error));
  }
  // A directory or FIFO has no size to map; say so instead of failing later.
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return Status::error(path + ": not a regular file");
  }

  MappedFile file;
  file.path_ = path;
  file.size_ = static_cast<size_t>(info.st_size);
  // mmap rejects a zero length; an empty file is simply an empty buffer.
  if (file.size_ != 0) {
    void *address = ::mmap(nullptr, file.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (address == MAP_FAILED) {
      int error = errno;
      ::close(fd);
      return Status::error(path + ": cannot map " + std::to_string(file.size_) +
                           " bytes: " + errnoMessage(error));
    }
    file.data_ = static_cast<const std::byte *>(address);
  }
  // The mapping keeps the file alive; the descriptor is no longer needed.
  ::close(fd);
  return file;
}

MappedFile::MappedFile(MappedFile &&other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)),
      path_(std::move(other.path_)) {}

MappedFile &MappedFile::operator=(MappedFile &&other) noexcept {
  if (this != &other) {
    unmap();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    path_ = std::move(other.path_);
  }
  return *this;
}

MappedFile::~MappedFile() { unmap(); }

void MappedFile::unmap() {
  if (data_)
    ::munmap(const_cast<std::byte *>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

} // namespace shardc::rt::io
