//===- embed.cpp - the installed runtime, from a program of its own ------===//
//
//   embed ARTIFACT
//
// Opens the artifact with the installed headers and libshardc_runtime.so,
// loads its ranks and prints the library's version and the artifact's
// inputs and outputs; a failure prints the runtime's line and exits 1.
//
//===----------------------------------------------------------------------===//
#include "runtime/library/RuntimeVersion.h"
#include "runtime/session/Session.h"

#include <cstdio>

using namespace shardc::rt;

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: embed ARTIFACT\n");
    return 2;
  }
  std::printf("libshardc_runtime %s\n", runtimeVersion());
  StatusOr<Session> session = Session::open(argv[1]);
  Status status = session ? session->planDevice() : session.status();
  if (status)
    status = session->loadRanks(0, session->layout().ranks);
  if (!status) {
    std::fprintf(stderr, "embed: %s\n", status.message().c_str());
    return 1;
  }
  std::printf("%d ranks loaded;", session->loadedRanks());
  for (const TensorSignature &input : session->inputs())
    std::printf(" input %s", input.name.c_str());
  for (const TensorSignature &output : session->outputs())
    std::printf(" output %s", output.name.c_str());
  std::printf("\n");
  return 0;
}
