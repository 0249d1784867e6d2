//===- HeldWeights.cpp - the weights an executor keeps in memory ----------===//
#include "runtime/core/HeldWeights.h"

namespace shardc::rt {

HeldWeights::HeldWeights(std::shared_ptr<const io::SafeTensorsFile> file)
    : file_(std::move(file)), preparing_(std::make_shared<Preparing>()) {}

Status HeldWeights::keep(const std::string &name) {
  if (kept_.count(name))
    return {};
  auto held = file_->hold(name);
  if (!held)
    return held.status();
  kept_.emplace(name, std::move(*held));
  return {};
}

HoldWeight HeldWeights::holder(const std::string &name) const {
  return [file = file_, preparing = preparing_, name]() -> StatusOr<WeightHold> {
    std::lock_guard<std::mutex> guard(preparing->lock);
    if (preparing->prepared.count(name))
      return file->hold(name);
    auto &during = preparing->holds;
    if (auto found = during.find(name); found != during.end())
      return found->second;
    auto held = file->hold(name);
    if (!held)
      return held.status();
    return during.emplace(name, std::move(*held)).first->second;
  };
}

void HeldWeights::lastReaderPrepared(const std::string &name) {
  std::lock_guard<std::mutex> guard(preparing_->lock);
  preparing_->holds.erase(name);
  preparing_->prepared.insert(name);
}

} // namespace shardc::rt
