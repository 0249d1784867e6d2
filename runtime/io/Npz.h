//===- Npz.h - numpy .npz archives ----------------------------------------===//
//
// An .npz is a zip archive of .npy files, one per array, named "<key>.npy"
// (numpy.savez stores them, numpy.savez_compressed deflates them). shardrun
// reads its inputs from one and writes its outputs to another.
//
// readNpz returns every array, in archive order, keyed without ".npy"; each
// entry's CRC-32 is checked. Entries that are not .npy files, duplicate keys,
// and anything Npy.h or ZipReader.h reject are errors naming the file and the
// entry: "x.npz: entry 'input_ids': unsupported dtype '<c8'".
//
// writeNpz writes stored entries, as numpy.savez does, atomically (a failure
// leaves no file and an existing one untouched), with a fixed timestamp so
// equal tensors give byte-identical files. np.load reads the result.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_IO_NPZ_H
#define SHARDC_RUNTIME_IO_NPZ_H

#include "runtime/io/ErrorText.h"
#include "runtime/io/NamedTensor.h"

#include <string>
#include <vector>

namespace shardc::rt::io {

/// Every array in the archive, in archive order, names without ".npy".
StatusOr<std::vector<NamedTensor>> readNpz(const std::string &path);

struct NpzWriteOptions {
  /// Write zip64 records even for small archives (for tests of readers;
  /// zip64 is added automatically past 4 GiB or 65535 entries).
  bool forceZip64 = false;
};

/// Writes the tensors as "<name>.npy" entries in the given order. Names must
/// be non-empty, unique and without NUL bytes; '/' is allowed (numpy keeps
/// it). Each view's data must hold view.bytes() bytes; it is only read.
Status writeNpz(const std::string &path, const std::vector<NamedView> &entries,
                NpzWriteOptions options = {});
Status writeNpz(const std::string &path, const std::vector<NamedTensor> &entries,
                NpzWriteOptions options = {});

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_NPZ_H
