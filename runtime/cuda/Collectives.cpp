//===- Collectives.cpp - collective steps on a GPU ------------------------===//
#include "runtime/cuda/Collectives.h"

#include "runtime/core/CollectivePlan.h"
#include "runtime/cuda/CudaStatus.h"
#include "runtime/cuda/StreamGroup.h"
#include "runtime/cuda/StreamScratch.h"

#include <cuda_runtime_api.h>

#include <climits>
#include <cstddef>
#include <type_traits>

namespace shardc::rt::cuda {
namespace {

//===----------------------------------------------------------------------===//
// Device copies
//===----------------------------------------------------------------------===//

/// `rows` rows of `row` bytes from `from` (rows `fromPitch` apart) to `to`
/// (rows `toPitch` apart), device to device, in stream order.
Status copyRows(std::byte *to, size_t toPitch, const std::byte *from, size_t fromPitch, size_t row,
                int64_t rows, cudaStream_t stream) {
  if (!row || !rows)
    return {};
  if (rows == 1 || (toPitch == row && fromPitch == row)) {
    SHARDC_CUDA_TRY(cudaMemcpyAsync(to, from, row * rows, cudaMemcpyDeviceToDevice, stream));
    return {};
  }
  // cudaMemcpy2D takes pitches below 2^31; past that the rows are few and long.
  if (toPitch < INT_MAX && fromPitch < INT_MAX) {
    SHARDC_CUDA_TRY(cudaMemcpy2DAsync(to, toPitch, from, fromPitch, row, rows,
                                      cudaMemcpyDeviceToDevice, stream));
    return {};
  }
  for (int64_t r = 0; r < rows; ++r)
    SHARDC_CUDA_TRY(cudaMemcpyAsync(to + r * toPitch, from + r * fromPitch, row,
                                    cudaMemcpyDeviceToDevice, stream));
  return {};
}

/// to[o][j] = from[j][o]: n blocks of `outer` rows each, block after block,
/// become `outer` rows of n blocks.
Status interleave(const std::byte *from, std::byte *to, int n, const Blocks &blocks,
                  cudaStream_t stream) {
  for (int j = 0; j < n; ++j)
    if (Status status =
            copyRows(to + j * blocks.row, n * blocks.row, from + j * blocks.outer * blocks.row,
                     blocks.row, blocks.row, blocks.outer, stream);
        !status)
      return status;
  return {};
}

/// The inverse: to[j][o] = from[o][j].
Status deinterleave(const std::byte *from, std::byte *to, int n, const Blocks &blocks,
                    cudaStream_t stream) {
  for (int j = 0; j < n; ++j)
    if (Status status =
            copyRows(to + j * blocks.outer * blocks.row, blocks.row, from + j * blocks.row,
                     n * blocks.row, blocks.row, blocks.outer, stream);
        !status)
      return status;
  return {};
}

cudaStream_t streamOf(const KernelCall &call) { return static_cast<cudaStream_t>(call.stream); }

std::byte *bytesOf(const TensorView &view) { return static_cast<std::byte *>(view.data); }

//===----------------------------------------------------------------------===//
// The kernels
//===----------------------------------------------------------------------===//

Status allReduceKernel(const KernelCall &call) {
  CollectiveCall op("all_reduce", call);
  if (Status status = checkAllReduce(op); !status)
    return status;
  return StreamGroup(op.group(), streamOf(call))
      .allReduceSum(op.input().data, op.output().data, static_cast<size_t>(op.output().numel()),
                    op.output().dtype);
}

Status allGatherKernel(const KernelCall &call) {
  CollectiveCall op("all_gather", call);
  auto blocks = planAllGather(op);
  if (!blocks)
    return blocks.status();
  StreamGroup group(op.group(), streamOf(call));
  if (blocks->contiguous())
    return group.allGather(op.input().data, op.output().data, op.input().bytes());
  auto gathered = deviceScratch(streamOf(call), op.output().bytes());
  if (!gathered)
    return gathered.status();
  if (Status status = group.allGather(op.input().data, *gathered, op.input().bytes()); !status)
    return status;
  return interleave(*gathered, bytesOf(op.output()), op.group().size(), *blocks, streamOf(call));
}

Status reduceScatterKernel(const KernelCall &call) {
  CollectiveCall op("reduce_scatter", call);
  auto blocks = planReduceScatter(op);
  if (!blocks)
    return blocks.status();
  StreamGroup group(op.group(), streamOf(call));
  const auto count = static_cast<size_t>(op.output().numel());
  const void *in = op.input().data;
  if (!blocks->contiguous()) {
    auto contiguous = deviceScratch(streamOf(call), op.input().bytes());
    if (!contiguous)
      return contiguous.status();
    if (Status status = deinterleave(bytesOf(op.input()), *contiguous, op.group().size(), *blocks,
                                     streamOf(call));
        !status)
      return status;
    in = *contiguous;
  }
  return group.reduceScatterSum(in, op.output().data, count, op.input().dtype);
}

Status allToAllKernel(const KernelCall &call) {
  CollectiveCall op("all_to_all", call);
  auto plan = planAllToAll(op);
  if (!plan)
    return plan.status();
  const auto &[split, concat] = *plan;
  const int n = op.group().size();
  cudaStream_t stream = streamOf(call);
  StreamGroup group(op.group(), stream);
  // One scratch buffer: the blocks to send, then the blocks received.
  const size_t sendBytes = split.contiguous() ? 0 : roundUp(op.input().bytes(), 256);
  const size_t receiveBytes = concat.contiguous() ? 0 : op.output().bytes();
  std::byte *scratch = nullptr;
  if (sendBytes + receiveBytes) {
    auto memory = deviceScratch(stream, sendBytes + receiveBytes);
    if (!memory)
      return memory.status();
    scratch = *memory;
  }
  const std::byte *send = bytesOf(op.input());
  if (!split.contiguous()) {
    if (Status status = deinterleave(send, scratch, n, split, stream); !status)
      return status;
    send = scratch;
  }
  std::byte *received = concat.contiguous() ? bytesOf(op.output()) : scratch + sendBytes;
  if (Status status = group.allToAll(send, received, op.input().bytes() / n); !status)
    return status;
  if (concat.contiguous())
    return {};
  return interleave(received, bytesOf(op.output()), n, concat, stream);
}

Status allSliceKernel(const KernelCall &call) {
  CollectiveCall op("all_slice", call);
  auto blocks = planAllSlice(op);
  if (!blocks)
    return blocks.status();
  const int n = op.group().size(), me = op.group().rank();
  return copyRows(bytesOf(op.output()), blocks->row, bytesOf(op.input()) + me * blocks->row,
                  n * blocks->row, blocks->row, blocks->outer, streamOf(call));
}

Status broadcastKernel(const KernelCall &call) {
  CollectiveCall op("broadcast", call);
  auto root = planBroadcast(op);
  if (!root)
    return root.status();
  if (op.group().rank() == *root)
    if (Status status = copyAsync(op.output().data, op.input().data, op.input().bytes(),
                                  cudaMemcpyDeviceToDevice, streamOf(call));
        !status)
      return status;
  return StreamGroup(op.group(), streamOf(call))
      .broadcast(op.output().data, op.output().bytes(), *root);
}

Status sendKernel(const KernelCall &call) {
  CollectiveCall op("send", call);
  auto peer = planSend(op);
  if (!peer)
    return peer.status();
  return StreamGroup(op.group(), streamOf(call)).send(op.input().data, op.input().bytes(), *peer);
}

Status recvKernel(const KernelCall &call) {
  CollectiveCall op("recv", call);
  auto peer = planRecv(op);
  if (!peer)
    return peer.status();
  return StreamGroup(op.group(), streamOf(call)).recv(op.output().data, op.output().bytes(), *peer);
}

/// A prepare-time check: the plan, without moving anything.
template <auto Plan, const char *Name> Status checkOnly(const KernelCall &call) {
  CollectiveCall op(Name, call);
  if constexpr (std::is_same_v<decltype(Plan(op)), Status>)
    return Plan(op);
  else
    return Plan(op).status();
}

constexpr char kAllReduce[] = "all_reduce", kAllGather[] = "all_gather",
               kReduceScatter[] = "reduce_scatter", kAllToAll[] = "all_to_all",
               kAllSlice[] = "all_slice", kBroadcast[] = "broadcast", kSend[] = "send",
               kRecv[] = "recv";

} // namespace

void addCollectiveKernels(KernelTable &table) {
  table.add(kAllReduce, allReduceKernel, checkOnly<checkAllReduce, kAllReduce>);
  table.add(kAllGather, allGatherKernel, checkOnly<planAllGather, kAllGather>);
  table.add(kReduceScatter, reduceScatterKernel, checkOnly<planReduceScatter, kReduceScatter>);
  table.add(kAllToAll, allToAllKernel, checkOnly<planAllToAll, kAllToAll>);
  table.add(kAllSlice, allSliceKernel, checkOnly<planAllSlice, kAllSlice>);
  table.add(kBroadcast, broadcastKernel, checkOnly<planBroadcast, kBroadcast>);
  table.add(kSend, sendKernel, checkOnly<planSend, kSend>);
  table.add(kRecv, recvKernel, checkOnly<planRecv, kRecv>);
}

} // namespace shardc::rt::cuda
