//===- StreamResources.cpp - what the kernels on one stream share ---------===//
#include "runtime/cuda/StreamResources.h"

#include <map>
#include <mutex>
#include <string>

namespace shardc::rt::cuda {
namespace {

std::mutex &registryMutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<void *, StreamResources> &registry() {
  static std::map<void *, StreamResources> streams;
  return streams;
}

} // namespace

void registerStream(void *stream, const StreamResources &resources) {
  std::lock_guard<std::mutex> lock(registryMutex());
  registry()[stream] = resources;
}

void unregisterStream(void *stream) {
  std::lock_guard<std::mutex> lock(registryMutex());
  registry().erase(stream);
}

StreamResources resourcesOf(void *stream) {
  std::lock_guard<std::mutex> lock(registryMutex());
  auto found = registry().find(stream);
  return found == registry().end() ? StreamResources() : found->second;
}

Status takeDeviceError(DeviceError *error) {
  if (!error)
    return {};
  volatile DeviceError *slot = error;
  const auto code = static_cast<DeviceErrorCode>(slot->code);
  if (code == DeviceErrorCode::None)
    return {};
  const std::string value = std::to_string(slot->value), limit = std::to_string(slot->limit);
  slot->code = 0;
  switch (code) {
  case DeviceErrorCode::GatherIndex:
    return Status::error("gather: index " + value + " is out of range for an axis of size " +
                         limit);
  case DeviceErrorCode::ScatterIndex:
    return Status::error("scatter_elements: index " + value +
                         " is out of range for an axis of size " + limit);
  case DeviceErrorCode::GatherElementsIndex:
    return Status::error("gather_elements: index " + value +
                         " is out of range for an axis of size " + limit);
  case DeviceErrorCode::GatherNdIndex:
    return Status::error("gather_nd: index " + value + " is out of range for a dim of size " +
                         limit);
  case DeviceErrorCode::ScatterNdIndex:
    return Status::error("scatter_nd: index " + value + " is out of range for a dim of size " +
                         limit);
  case DeviceErrorCode::ModuloByZero:
    return Status::error("mod: integer division by zero");
  case DeviceErrorCode::DivisionByZero:
    return Status::error("div: integer division by zero");
  case DeviceErrorCode::ZeroToNegative:
    return Status::error("pow: integer 0 to a negative power");
  case DeviceErrorCode::None:
    break;
  }
  return Status::error("a kernel reported device error " + std::to_string(int(code)));
}

} // namespace shardc::rt::cuda
