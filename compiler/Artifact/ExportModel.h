//===- ExportModel.h - the source model a training artifact exports into -*- C++ -*-===//
//
// `shardrun --train --export-onnx OUT.onnx` writes the source model with
// every trained initializer holding its trained value. The runtime reads
// only the artifact's folder, never the source's path, and links no ONNX
// library: so the compiler puts into the artifact the source ModelProto
// with the trained initializers' data left out (their name, type and dims
// kept, where the runtime writes the values), and a metadata_props entry
// that marks a file as shardc's export (an existing OUT is replaced only
// when it has it).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_ARTIFACT_EXPORTMODEL_H
#define SHARDC_COMPILER_ARTIFACT_EXPORTMODEL_H

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"

#include <string>

namespace shardc::artifact {

/// The serialized model at `modelPath` with the data of the initializers
/// named in `trained` left out and the export marker added. An error says
/// why the model cannot be exported: a trained weight that is no
/// initializer of the graph, an untrained initializer whose data lies in
/// an external file (the artifact does not carry it), a model over
/// protobuf's 2 GiB.
llvm::Expected<std::string> exportSkeleton(llvm::StringRef modelPath,
                                           const llvm::StringSet<> &trained);

} // namespace shardc::artifact

#endif
