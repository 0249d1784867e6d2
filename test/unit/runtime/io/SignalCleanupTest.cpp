//===- SignalCleanupTest.cpp - staging removed, then death by the signal --===//

#include "runtime/io/SignalCleanup.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>

#include <pthread.h>
#include <unistd.h>

namespace shardc::rt::io::test {
namespace {

/// The handler that was there before SignalCleanup's: it takes its time
/// (LLVM's removes its own files and prints), then ends the process.
void slowThenDefault(int signal) {
  timespec pause{0, 300'000'000};
  ::nanosleep(&pause, nullptr);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

/// SIGHUP lands on a thread other than main. Main sees its staging file go,
/// fails like a writer whose output vanished, and returns status 1 while
/// the signal's handlers still run on the other thread.
[[noreturn]] void failWhileAnotherThreadHandlesTheSignal() {
  std::string path = ::testing::TempDir() + "signal_cleanup_XXXXXX";
  int fd = ::mkstemp(path.data());
  if (fd < 0)
    std::_Exit(3);
  ::close(fd);
  std::signal(SIGHUP, slowThenDefault);
  SignalCleanup cleanup(path);
  std::thread bystander([] {
    for (;;)
      ::pause();
  });
  pthread_kill(bystander.native_handle(), SIGHUP);
  bystander.detach();
  while (::access(path.c_str(), F_OK) == 0)
    ::usleep(100);
  std::exit(1);
}

TEST(SignalCleanupDeathTest, TheSignalEndsTheProcessThoughAnotherThreadFailsFirst) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(failWhileAnotherThreadHandlesTheSignal(), ::testing::KilledBySignal(SIGHUP), "");
}

} // namespace
} // namespace shardc::rt::io::test
