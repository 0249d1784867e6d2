//===- Collectives.cpp - collective steps on the CPU ----------------------===//
//
// The checks and the block layout are runtime/core/CollectivePlan's, shared
// with the CUDA kernels; here the blocks move through host memory: contiguous
// blocks are handed to the communicator as they are; an all-gather of
// interleaved ones too (Communicator::allGatherRows places the rows), the
// other interleaved ones go through scratch memory with strided row copies.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Collectives.h"

#include "runtime/core/CollectivePlan.h"

#include <cstring>
#include <string>
#include <vector>

namespace shardc::rt::cpu {
namespace {

using Bytes = std::vector<std::byte>;

const std::byte *bytesOf(const TensorView &view) {
  return static_cast<const std::byte *>(view.data);
}
std::byte *mutableBytesOf(const TensorView &view) { return static_cast<std::byte *>(view.data); }

void copy(std::byte *to, const std::byte *from, size_t bytes) {
  if (bytes)
    std::memcpy(to, from, bytes);
}

/// The inverse of interleaveBlocks (Communicator.h): to[j][o] = from[o][j].
void deinterleave(const std::byte *from, std::byte *to, int64_t n, int64_t outer, size_t row) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t o = 0; o < outer; ++o)
      copy(to + (j * outer + o) * row, from + (o * n + j) * row, row);
}

Status allReduceKernel(const KernelCall &call) {
  CollectiveCall op("all_reduce", call);
  if (Status status = checkAllReduce(op); !status)
    return status;
  copy(mutableBytesOf(op.output()), bytesOf(op.input()), op.input().bytes());
  return op.group().allReduceSum(op.output().data, static_cast<size_t>(op.output().numel()),
                                 op.output().dtype);
}

Status allGatherKernel(const KernelCall &call) {
  CollectiveCall op("all_gather", call);
  auto blocks = planAllGather(op);
  if (!blocks)
    return blocks.status();
  if (blocks->contiguous())
    return op.group().allGather(op.input().data, op.output().data, op.input().bytes());
  return op.group().allGatherRows(op.input().data, op.output().data,
                                  static_cast<size_t>(blocks->outer), blocks->row);
}

Status reduceScatterKernel(const KernelCall &call) {
  CollectiveCall op("reduce_scatter", call);
  auto blocks = planReduceScatter(op);
  if (!blocks)
    return blocks.status();
  const int n = op.group().size();
  const auto count = static_cast<size_t>(op.output().numel());
  if (blocks->contiguous())
    return op.group().reduceScatterSum(op.input().data, op.output().data, count, op.input().dtype);
  Bytes contiguous(op.input().bytes());
  deinterleave(bytesOf(op.input()), contiguous.data(), n, blocks->outer, blocks->row);
  return op.group().reduceScatterSum(contiguous.data(), op.output().data, count, op.input().dtype);
}

Status allToAllKernel(const KernelCall &call) {
  CollectiveCall op("all_to_all", call);
  auto plan = planAllToAll(op);
  if (!plan)
    return plan.status();
  const auto &[split, concat] = *plan;
  const int n = op.group().size();
  const size_t blockBytes = op.input().bytes() / n;
  // Blocks to send, contiguous in rank order.
  Bytes sendScratch;
  const std::byte *send = bytesOf(op.input());
  if (!split.contiguous()) {
    sendScratch.resize(op.input().bytes());
    deinterleave(send, sendScratch.data(), n, split.outer, split.row);
    send = sendScratch.data();
  }
  // Received blocks, in rank order, then concatenated along concat_dim.
  if (concat.contiguous())
    return op.group().allToAll(send, op.output().data, blockBytes);
  Bytes received(op.output().bytes());
  if (Status status = op.group().allToAll(send, received.data(), blockBytes); !status)
    return status;
  interleaveBlocks(received.data(), mutableBytesOf(op.output()), size_t(n), size_t(concat.outer),
                   concat.row);
  return {};
}

Status allSliceKernel(const KernelCall &call) {
  CollectiveCall op("all_slice", call);
  auto blocks = planAllSlice(op);
  if (!blocks)
    return blocks.status();
  const int n = op.group().size(), me = op.group().rank();
  for (int64_t o = 0; o < blocks->outer; ++o)
    copy(mutableBytesOf(op.output()) + o * blocks->row,
         bytesOf(op.input()) + (o * n + me) * blocks->row, blocks->row);
  return {};
}

Status broadcastKernel(const KernelCall &call) {
  CollectiveCall op("broadcast", call);
  auto root = planBroadcast(op);
  if (!root)
    return root.status();
  if (op.group().rank() == *root)
    copy(mutableBytesOf(op.output()), bytesOf(op.input()), op.input().bytes());
  return op.group().broadcast(op.output().data, op.output().bytes(), *root);
}

Status sendKernel(const KernelCall &call) {
  CollectiveCall op("send", call);
  auto peer = planSend(op);
  if (!peer)
    return peer.status();
  return op.group().send(op.input().data, op.input().bytes(), *peer);
}

Status recvKernel(const KernelCall &call) {
  CollectiveCall op("recv", call);
  auto peer = planRecv(op);
  if (!peer)
    return peer.status();
  return op.group().recv(op.output().data, op.output().bytes(), *peer);
}

} // namespace

void addCollectiveKernels(KernelTable &table) {
  table.add("all_reduce", allReduceKernel);
  table.add("all_gather", allGatherKernel);
  table.add("reduce_scatter", reduceScatterKernel);
  table.add("all_to_all", allToAllKernel);
  table.add("all_slice", allSliceKernel);
  table.add("broadcast", broadcastKernel);
  table.add("send", sendKernel);
  table.add("recv", recvKernel);
}

} // namespace shardc::rt::cpu
