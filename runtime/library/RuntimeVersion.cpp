//===- RuntimeVersion.cpp - the version libshardc_runtime was built as ----===//
#include "runtime/library/RuntimeVersion.h"

const char *shardc::rt::runtimeVersion() { return SHARDC_VERSION; }
