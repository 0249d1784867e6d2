//===- RuntimeVersion.h - which libshardc_runtime a program loaded -*- C++ -*-===//
//
// A server that embeds the runtime (find_package(shardc), shardc::runtime)
// can log or check the version of the library it runs against; shardc and
// shardrun print the same one with --version.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_LIBRARY_RUNTIMEVERSION_H
#define SHARDC_RUNTIME_LIBRARY_RUNTIMEVERSION_H

namespace shardc::rt {

/// The project's version ("0.1.0") this library was built as.
const char *runtimeVersion();

} // namespace shardc::rt

#endif
