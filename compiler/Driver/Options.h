//===- Options.h - parsing the driver's model-shape flags -------*- C++ -*-===//
#ifndef SHARDC_COMPILER_DRIVER_OPTIONS_H
#define SHARDC_COMPILER_DRIVER_OPTIONS_H

#include "compiler/Import/ImportOptions.h"
#include "passes/Sharding/MeshShape.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

namespace shardc::driver {

/// Parses `--dim NAME=VALUE`, `--input-shape INPUT=D0xD1...` and
/// `--constant-input INPUT=VALUES` values.
llvm::Expected<import::ImportOptions>
parseImportOptions(llvm::ArrayRef<std::string> dims, llvm::ArrayRef<std::string> inputShapes,
                   llvm::ArrayRef<std::string> constantInputs);

/// The mesh degrees given by their own flags (0: not given).
struct MeshDegrees {
  int64_t pp = 0, dp = 0, ep = 0, tp = 0;
};

/// The device mesh from --mesh "pp=2,dp=2,tp=4" or from --pp/--dp/--ep/--tp:
/// axes of size 1 are left out, so one device means no axes. The expert
/// ranks are data-parallel ranks (Megatron-LM's and DeepSpeed's folding):
/// --dp D --ep E is the mesh dp=D/E, ep=E (E divides D), and --ep E alone
/// means --dp E.
llvm::Expected<sharding::MeshShape> parseMesh(llvm::StringRef mesh, MeshDegrees degrees);

/// What the next axis of a device mesh must be named that `name` is not,
/// after the axes `named` ("" when it is fine): one that shardc gives a
/// meaning (never its own micro-batch axis), each once. The --mesh flag's
/// rule, which a module's dist.mesh follows too, less pp (`pipeline`
/// false): a module's mesh holds the axes its ops shard over. Completes
/// "expected ...".
std::string meshAxisNameProblem(llvm::StringRef name, llvm::ArrayRef<std::string> named,
                                bool pipeline);

/// A --pp/--tp/--dp degree: a positive integer ("" when the flag is absent: 0);
/// `what` says what it counts, for the message.
llvm::Expected<int64_t> parseDegree(llvm::StringRef flag, llvm::StringRef text,
                                    llvm::StringRef what = "a number of devices");

/// "80GiB", "141GB", "512MiB", "64KiB" or plain bytes.
llvm::Expected<int64_t> parseByteSize(llvm::StringRef flag, llvm::StringRef text);

} // namespace shardc::driver

#endif
