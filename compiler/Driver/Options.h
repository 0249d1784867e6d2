//===- Options.h - parsing the driver's model-shape flags -------*- C++ -*-===//
#ifndef SHARDC_COMPILER_DRIVER_OPTIONS_H
#define SHARDC_COMPILER_DRIVER_OPTIONS_H

#include "compiler/Import/ImportOptions.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

namespace shardc::driver {

/// Parses `--dim NAME=VALUE`, `--input-shape INPUT=D0xD1...` and
/// `--constant-input INPUT=VALUES` values.
llvm::Expected<import::ImportOptions>
parseImportOptions(llvm::ArrayRef<std::string> dims, llvm::ArrayRef<std::string> inputShapes,
                   llvm::ArrayRef<std::string> constantInputs);

} // namespace shardc::driver

#endif
