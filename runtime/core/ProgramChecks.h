//===- ProgramChecks.h - a rank's program checked before it runs -*- C++ -*-===//
//
// A program file passes its CRC-32 whenever the manifest beside it was
// rewritten to match, so nothing in it is trusted: before the executor binds
// a single buffer, every field it will use is checked against the manifest's
// signature and the rank's weight file. After these checks the executor may
// compute any buffer's byte count and address without overflow, and every
// step reads only buffers that an earlier step (or the caller, or the weight
// file) filled.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_PROGRAMCHECKS_H
#define SHARDC_RUNTIME_CORE_PROGRAMCHECKS_H

#include "runtime/core/Status.h"
#include "runtime/core/Tensor.h"
#include "runtime/io/SafeTensors.h"
#include "runtime/schemas/program_generated.h"

#include <string>
#include <vector>

namespace shardc::rt {

struct TensorSignature;

/// Checks `program` (the file at `path`) against the manifest's `inputs` and
/// `outputs` and the rank's `weights`: the version; every buffer's element
/// type, storage and shape (byte counts within int64); arena buffers inside
/// the arena; weights of the file's type and shape; states named, of the
/// file's type and shape unless zero_init, alike in every buffer that names
/// one; inputs of the manifest's, each manifest input bound; views of an
/// earlier buffer with its type and element count; steps naming existing
/// buffers, reading only what was written before and writing no weight; the
/// outputs, by name, type and shape, exactly the manifest's. One line naming
/// the file and the field.
Status checkProgram(const schema::Program &program, const std::vector<TensorSignature> &inputs,
                    const std::vector<TensorSignature> &outputs,
                    const io::SafeTensorsFile &weights, const std::string &path);

/// For a program checkProgram accepted: per buffer, the buffer whose memory
/// it names (itself, or the buffer its chain of views ends at).
std::vector<uint32_t> storageRoots(const schema::Program &program);

} // namespace shardc::rt

#endif
