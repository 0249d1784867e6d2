//===- NcclWatchdog.cpp - failure detection for one NCCL world ------------===//
#include "runtime/comm/NcclWatchdog.h"

#include <cstdio>

namespace shardc::rt::comm {
namespace {

constexpr std::chrono::milliseconds kPollInterval(50);

std::string seconds(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g s", value);
  return text;
}

} // namespace

Status ncclStatus(ncclResult_t result, const std::string &what, ncclComm_t comm) {
  if (result == ncclSuccess || result == ncclInProgress)
    return {};
  std::string message = what + ": NCCL error: " + ncclGetErrorString(result);
  const char *detail = ncclGetLastError(comm);
  if (detail && *detail)
    message += " (" + std::string(detail) + ")";
  // NCCL's own texts may end in a newline; the error must stay one line.
  for (char &c : message)
    if (c == '\n' || c == '\r')
      c = ' ';
  while (!message.empty() && message.back() == ' ')
    message.pop_back();
  return Status::error(message);
}

Status cudaStatus(cudaError_t result, const std::string &what) {
  if (result == cudaSuccess)
    return {};
  return Status::error(what + ": CUDA error: " + cudaGetErrorString(result));
}

NcclWatchdog::NcclWatchdog(int worldRank, int device, std::chrono::milliseconds timeout,
                           size_t history, std::function<void(const std::string &)> onFailure)
    : worldRank_(worldRank), device_(device), timeout_(timeout), historyLength_(history),
      onFailure_(std::move(onFailure)) {
  thread_ = std::thread([this] { loop(); });
}

NcclWatchdog::~NcclWatchdog() {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  for (auto *list : {&inFlight_, &recent_})
    for (auto &operation : *list)
      release(*operation);
  if (opening_)
    release(*opening_);
  for (cudaEvent_t event : freeEvents_)
    (void)cudaEventDestroy(event);
}

void NcclWatchdog::add(ncclComm_t comm, int group, int size) {
  live_.push_back({comm, group, size});
}

void NcclWatchdog::remove(ncclComm_t comm) {
  for (auto it = live_.begin(); it != live_.end(); ++it)
    if (it->comm == comm) {
      live_.erase(it);
      return;
    }
}

StatusOr<cudaEvent_t> NcclWatchdog::event() {
  if (!freeEvents_.empty()) {
    cudaEvent_t event = freeEvents_.back();
    freeEvents_.pop_back();
    return event;
  }
  cudaEvent_t event = nullptr;
  if (Status status =
          cudaStatus(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
      !status)
    return status;
  return event;
}

void NcclWatchdog::release(Operation &operation) {
  for (cudaEvent_t *event : {&operation.started, &operation.finished})
    if (*event) {
      freeEvents_.push_back(*event);
      *event = nullptr;
    }
}

Status NcclWatchdog::begin(cudaStream_t stream, std::string what) {
  if (opening_) // the last one failed to enqueue
    release(*opening_);
  opening_ = std::make_shared<Operation>();
  opening_->sequence = ++sequence_;
  opening_->what = std::move(what);
  opening_->issued = Clock::now();
  auto started = event();
  if (!started)
    return started.status();
  opening_->started = *started;
  return cudaStatus(cudaEventRecord(*started, stream), opening_->what + ": cudaEventRecord");
}

Status NcclWatchdog::end(cudaStream_t stream) {
  std::shared_ptr<Operation> operation = std::move(opening_);
  if (!operation)
    return {};
  auto finished = event();
  if (!finished)
    return finished.status();
  operation->finished = *finished;
  if (Status status =
          cudaStatus(cudaEventRecord(*finished, stream), operation->what + ": cudaEventRecord");
      !status)
    return status;
  inFlight_.push_back(operation);
  recent_.push_back(operation);
  while (recent_.size() > historyLength_) {
    if (recent_.front()->done)
      release(*recent_.front());
    recent_.pop_front();
  }
  return {};
}

std::string NcclWatchdog::history() const {
  if (recent_.empty())
    return "none issued";
  const auto now = Clock::now();
  std::string text;
  for (const auto &operation : recent_) {
    text += text.empty() ? "" : ", ";
    text += "#" + std::to_string(operation->sequence) + " " + operation->what + " ";
    if (operation->done)
      text += "done";
    else if (operation->running)
      text += "running for " +
              seconds(std::chrono::duration<double>(now - operation->runningSince).count());
    else
      text += "queued";
  }
  return text;
}

void NcclWatchdog::fail(const std::string &message, bool notify) {
  if (failed_)
    return;
  failed_ = true;
  failure_ = message + "; NCCL aborted; last collectives: " + history();
  for (const Watched &watched : live_)
    (void)ncclCommAbort(watched.comm);
  live_.clear();
  if (notify && onFailure_) {
    notify_ = true;
    wake_.notify_all();
  }
}

Status NcclWatchdog::waitReady(ncclComm_t comm, const std::string &what) {
  const auto deadline = Clock::now() + timeout_;
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    std::unique_lock<std::mutex> guard(mutex_);
    if (failed_)
      return failure();
    ncclResult_t state = ncclSuccess;
    ncclResult_t result = ncclCommGetAsyncError(comm, &state);
    if (result != ncclSuccess)
      state = result;
    if (state == ncclSuccess)
      return {};
    if (state != ncclInProgress) {
      fail(ncclStatus(state, what, comm).message(), false);
      return failure();
    }
    if (Clock::now() > deadline) {
      fail(what + " did not finish within " + seconds(timeout_.count() / 1000.0) +
               " (a rank did not join or stopped taking part)",
           false);
      return failure();
    }
    guard.unlock();
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(5));
  }
}

void NcclWatchdog::poll() {
  for (const Watched &watched : live_) {
    ncclResult_t state = ncclSuccess;
    ncclResult_t result = ncclCommGetAsyncError(watched.comm, &state);
    if (result != ncclSuccess)
      state = result;
    if (state != ncclSuccess && state != ncclInProgress) {
      fail(ncclStatus(state,
                      "group " + std::to_string(watched.group) + " (" +
                          std::to_string(watched.size) + " ranks)",
                      watched.comm)
               .message(),
           true);
      return;
    }
  }
  const auto now = Clock::now();
  for (auto it = inFlight_.begin(); it != inFlight_.end();) {
    Operation &operation = **it;
    if (!operation.running) {
      cudaError_t started = cudaEventQuery(operation.started);
      if (started == cudaSuccess) {
        operation.running = true;
        operation.runningSince = now;
      } else if (started != cudaErrorNotReady) {
        fail(cudaStatus(started, operation.what).message(), true);
        return;
      }
    }
    cudaError_t finished = cudaEventQuery(operation.finished);
    if (finished == cudaSuccess) {
      operation.done = true;
      release(operation);
      it = inFlight_.erase(it);
      continue;
    }
    if (finished != cudaErrorNotReady) {
      fail(cudaStatus(finished, operation.what).message(), true);
      return;
    }
    if (operation.running && now - operation.runningSince > timeout_) {
      fail(operation.what + " (#" + std::to_string(operation.sequence) + ") timed out after " +
               seconds(timeout_.count() / 1000.0) +
               " (another rank stopped taking part or never joined)",
           true);
      return;
    }
    ++it;
  }
}

void NcclWatchdog::loop() {
  // Events belong to the device's context; make it this thread's too.
  (void)cudaSetDevice(device_);
  std::unique_lock<std::mutex> guard(mutex_);
  while (!stop_) {
    wake_.wait_for(guard, kPollInterval);
    if (stop_)
      break;
    if (!failed_)
      poll();
    if (notify_) {
      notify_ = false;
      std::string message = "rank " + std::to_string(worldRank_) + ": " + failure_;
      auto handler = onFailure_;
      guard.unlock();
      handler(message);
      guard.lock();
    }
  }
}

} // namespace shardc::rt::comm
