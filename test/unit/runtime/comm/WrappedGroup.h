//===- WrappedGroup.h - a communicator seen through a wrapper ---*- C++ -*-===//
//
// For tests: the group it wraps, with its flush() calls counted (deferred
// work, as NCCL's sends) and optionally claiming device memory, so that the
// callers' device paths (staging, in-place roots) run on host ranks. Groups
// split from it are wrapped the same way.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TEST_UNIT_RUNTIME_COMM_WRAPPEDGROUP_H
#define SHARDC_TEST_UNIT_RUNTIME_COMM_WRAPPEDGROUP_H

#include "runtime/core/Communicator.h"

#include <atomic>
#include <memory>
#include <string>

namespace shardc::rt {

class WrappedGroup final : public Communicator {
public:
  WrappedGroup(std::unique_ptr<Communicator> inner, std::atomic<int> &flushes,
               bool deviceLike = false)
      : inner_(std::move(inner)), flushes_(flushes), deviceLike_(deviceLike) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  Status allReduceSum(void *data, size_t count, DType dtype) override {
    return inner_->allReduceSum(data, count, dtype);
  }
  Status allGather(const void *in, void *out, size_t bytes) override {
    return inner_->allGather(in, out, bytes);
  }
  Status reduceScatterSum(const void *in, void *out, size_t count, DType dtype) override {
    return inner_->reduceScatterSum(in, out, count, dtype);
  }
  Status allToAll(const void *in, void *out, size_t bytes) override {
    return inner_->allToAll(in, out, bytes);
  }
  Status allToAllV(const void *in, const size_t *sendBytes, void *out,
                   const size_t *recvBytes) override {
    return inner_->allToAllV(in, sendBytes, out, recvBytes);
  }
  Status broadcast(void *data, size_t bytes, int root) override {
    return inner_->broadcast(data, bytes, root);
  }
  // gather: the base class's point-to-point form, through send and recv.
  Status send(const void *data, size_t bytes, int peer) override {
    return inner_->send(data, bytes, peer);
  }
  Status recv(void *data, size_t bytes, int peer) override {
    return inner_->recv(data, bytes, peer);
  }
  StatusOr<std::unique_ptr<Communicator>> split(int color, int key) override {
    auto group = inner_->split(color, key);
    if (!group || !*group)
      return group;
    return std::unique_ptr<Communicator>(
        std::make_unique<WrappedGroup>(std::move(*group), flushes_, deviceLike_));
  }
  void abort(const std::string &reason) override { inner_->abort(reason); }
  bool onDevice() const override { return deviceLike_; }
  Status flush() override {
    ++flushes_;
    return {};
  }

private:
  std::unique_ptr<Communicator> inner_;
  std::atomic<int> &flushes_;
  bool deviceLike_;
};

} // namespace shardc::rt

#endif
