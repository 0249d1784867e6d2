//===- CollectiveChecks.h - collectives checked on any Communicator -------===//
//
// Each check runs on every rank of a group with the same arguments and
// compares this rank's result with a reference computed here from the
// formula every rank used for its input — the straightforward way: element
// by element, in double. The same checks run on the in-process world
// (threads, InProcessTest.cpp) and under mpirun (MpiTest.cpp).
//
// Values are small integers, so that every sum is exact in every element
// type (float16 and bfloat16 included) and results compare exactly.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TEST_UNIT_COMM_COLLECTIVECHECKS_H
#define SHARDC_TEST_UNIT_COMM_COLLECTIVECHECKS_H

#include "runtime/core/Communicator.h"
#include "runtime/core/Kernel.h"
#include "runtime/cpu/CpuBackend.h"
#include "test/unit/runtime/ElementValues.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace shardc::rt::test {

/// The value rank `rank` puts at element i: a small integer (0/1 for bool,
/// non-negative for uint8).
inline double valueAt(DType dtype, int rank, int64_t i) {
  int64_t v = (rank * 7 + i * 3 + (i / 5)) % 11;
  if (dtype == DType::Bool)
    return v % 2;
  if (dtype == DType::U8)
    return v;
  return double(v - 5);
}

/// Rank `rank`'s tensor of `shape` filled by valueAt.
inline HostTensor rankTensor(DType dtype, const Shape &shape, int rank) {
  HostTensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    setElementValue(dtype, t.bytes.data(), i, valueAt(dtype, rank, i));
  return t;
}

inline std::vector<int64_t> stridesOf(const Shape &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

/// Block `index` of `n` equal blocks along `dim`, element by element.
inline HostTensor blockOf(const HostTensor &t, size_t dim, int n, int index) {
  Shape shape = t.shape;
  shape[dim] /= n;
  HostTensor block(t.dtype, shape);
  const auto from = stridesOf(t.shape), to = stridesOf(shape);
  const size_t size = dtypeSize(t.dtype);
  for (int64_t i = 0; i < block.numel(); ++i) {
    int64_t source = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t coord = i / to[d] % shape[d];
      source += (d == dim ? coord + index * shape[d] : coord) * from[d];
    }
    std::memcpy(block.bytes.data() + i * size, t.bytes.data() + source * size, size);
  }
  return block;
}

/// The parts (equal shapes) concatenated along `dim`, element by element.
inline HostTensor concatOf(const std::vector<HostTensor> &parts, size_t dim) {
  Shape shape = parts[0].shape;
  shape[dim] *= static_cast<int64_t>(parts.size());
  HostTensor whole(parts[0].dtype, shape);
  const auto to = stridesOf(shape), from = stridesOf(parts[0].shape);
  const int64_t blockDim = parts[0].shape[dim];
  const size_t size = dtypeSize(whole.dtype);
  for (int64_t i = 0; i < whole.numel(); ++i) {
    int64_t source = 0, part = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t coord = i / to[d] % shape[d];
      if (d == dim) {
        part = coord / blockDim;
        coord %= blockDim;
      }
      source += coord * from[d];
    }
    std::memcpy(whole.bytes.data() + i * size, parts[part].bytes.data() + source * size, size);
  }
  return whole;
}

/// Elementwise sum of equal-shaped tensors, in double, stored once.
inline HostTensor sumOf(const std::vector<HostTensor> &parts) {
  HostTensor sum(parts[0].dtype, parts[0].shape);
  for (int64_t i = 0; i < sum.numel(); ++i) {
    double total = 0;
    for (const HostTensor &part : parts)
      total += elementValue(part.dtype, part.bytes.data(), i);
    setElementValue(sum.dtype, sum.bytes.data(), i, total);
  }
  return sum;
}

inline ::testing::AssertionResult sameTensor(const HostTensor &got, const HostTensor &want) {
  if (got.dtype != want.dtype || got.shape != want.shape)
    return ::testing::AssertionFailure()
           << "got " << dtypeName(got.dtype) << " " << formatShape(got.shape) << ", want "
           << dtypeName(want.dtype) << " " << formatShape(want.shape);
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = elementValue(got.dtype, got.bytes.data(), i),
           w = elementValue(want.dtype, want.bytes.data(), i);
    if (g != w)
      return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", want " << w;
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult succeeded(const Status &status) {
  if (status.ok())
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << status.message();
}

/// The tensors every rank of a `size`-rank group holds.
inline std::vector<HostTensor> everyRank(DType dtype, const Shape &shape, int size) {
  std::vector<HostTensor> all;
  for (int r = 0; r < size; ++r)
    all.push_back(rankTensor(dtype, shape, r));
  return all;
}

// ---- The communicator's own calls -------------------------------------------

inline void checkAllReduce(Communicator &comm, DType dtype, int64_t count) {
  HostTensor mine = rankTensor(dtype, {count}, comm.rank());
  ASSERT_TRUE(succeeded(comm.allReduceSum(mine.bytes.data(), count, dtype)));
  EXPECT_TRUE(sameTensor(mine, sumOf(everyRank(dtype, {count}, comm.size()))))
      << dtypeName(dtype) << " x " << count << " on rank " << comm.rank() << " of " << comm.size();
}

inline void checkAllGather(Communicator &comm, DType dtype, int64_t countPerRank) {
  HostTensor mine = rankTensor(dtype, {countPerRank}, comm.rank());
  HostTensor all(dtype, {countPerRank * comm.size()});
  ASSERT_TRUE(succeeded(comm.allGather(mine.bytes.data(), all.bytes.data(), mine.bytes.size())));
  EXPECT_TRUE(sameTensor(all, concatOf(everyRank(dtype, {countPerRank}, comm.size()), 0)))
      << "rank " << comm.rank() << " of " << comm.size();
}

/// allGatherRows: each rank's [rows, width] joined along dim 1.
inline void checkAllGatherRows(Communicator &comm, DType dtype, int64_t rows, int64_t width) {
  HostTensor mine = rankTensor(dtype, {rows, width}, comm.rank());
  HostTensor all(dtype, {rows, width * comm.size()});
  ASSERT_TRUE(succeeded(comm.allGatherRows(mine.bytes.data(), all.bytes.data(), size_t(rows),
                                           size_t(width) * dtypeSize(dtype))));
  EXPECT_TRUE(sameTensor(all, concatOf(everyRank(dtype, {rows, width}, comm.size()), 1)))
      << dtypeName(dtype) << " " << rows << " x " << width << " on rank " << comm.rank()
      << " of " << comm.size();
}

inline void checkReduceScatter(Communicator &comm, DType dtype, int64_t countPerRank) {
  const Shape whole{countPerRank * comm.size()};
  HostTensor mine = rankTensor(dtype, whole, comm.rank());
  HostTensor out(dtype, {countPerRank});
  ASSERT_TRUE(
      succeeded(comm.reduceScatterSum(mine.bytes.data(), out.bytes.data(), countPerRank, dtype)));
  HostTensor sum = sumOf(everyRank(dtype, whole, comm.size()));
  EXPECT_TRUE(sameTensor(out, blockOf(sum, 0, comm.size(), comm.rank())))
      << dtypeName(dtype) << " on rank " << comm.rank() << " of " << comm.size();
}

inline void checkAllToAll(Communicator &comm, DType dtype, int64_t countPerRank) {
  const int n = comm.size();
  const Shape whole{countPerRank * n};
  HostTensor mine = rankTensor(dtype, whole, comm.rank());
  HostTensor out(dtype, whole);
  ASSERT_TRUE(succeeded(comm.allToAll(mine.bytes.data(), out.bytes.data(), mine.bytes.size() / n)));
  std::vector<HostTensor> received;
  for (int from = 0; from < n; ++from)
    received.push_back(blockOf(rankTensor(dtype, whole, from), 0, n, comm.rank()));
  EXPECT_TRUE(sameTensor(out, concatOf(received, 0))) << "rank " << comm.rank() << " of " << n;
}

/// allToAllV's block from rank `from` to rank `to`: 0 to 3 elements (so
/// unequal and empty blocks both occur), depending on `seed`.
inline HostTensor blockFromTo(DType dtype, int from, int to, int seed) {
  HostTensor block(dtype, {(from * 3 + to * 5 + seed) % 4});
  for (int64_t i = 0; i < block.numel(); ++i)
    setElementValue(dtype, block.bytes.data(), i, valueAt(dtype, from * 10 + to, i));
  return block;
}

inline void checkAllToAllV(Communicator &comm, DType dtype, int seed) {
  const int n = comm.size(), me = comm.rank();
  std::vector<HostTensor> sent, expected;
  std::vector<size_t> sendBytes, recvBytes;
  for (int peer = 0; peer < n; ++peer) {
    sent.push_back(blockFromTo(dtype, me, peer, seed));
    sendBytes.push_back(sent.back().bytes.size());
    expected.push_back(blockFromTo(dtype, peer, me, seed));
    recvBytes.push_back(expected.back().bytes.size());
  }
  // The blocks packed in rank order, as 1-D tensors; concatOf wants equal
  // parts, so pack bytes directly.
  auto packed = [&](const std::vector<HostTensor> &blocks) {
    int64_t count = 0;
    for (const HostTensor &block : blocks)
      count += block.numel();
    HostTensor all(dtype, {count});
    size_t at = 0;
    for (const HostTensor &block : blocks) {
      std::memcpy(all.bytes.data() + at, block.bytes.data(), block.bytes.size());
      at += block.bytes.size();
    }
    return all;
  };
  HostTensor in = packed(sent), want = packed(expected);
  HostTensor out(dtype, want.shape);
  ASSERT_TRUE(succeeded(
      comm.allToAllV(in.bytes.data(), sendBytes.data(), out.bytes.data(), recvBytes.data())));
  EXPECT_TRUE(sameTensor(out, want)) << "seed " << seed << ", rank " << me << " of " << n;
}

inline void checkBroadcast(Communicator &comm, DType dtype, int64_t count, int root) {
  HostTensor mine = rankTensor(dtype, {count}, comm.rank());
  ASSERT_TRUE(succeeded(comm.broadcast(mine.bytes.data(), mine.bytes.size(), root)));
  EXPECT_TRUE(sameTensor(mine, rankTensor(dtype, {count}, root)))
      << "root " << root << ", rank " << comm.rank() << " of " << comm.size();
}

/// Rank `root` gets every rank's block in rank order; the others' `out`
/// stays untouched. `pointToPoint` calls the base class's send/recv form
/// instead of the communicator's own.
inline void checkGather(Communicator &comm, int64_t countPerRank, int root, bool pointToPoint) {
  HostTensor mine = rankTensor(DType::F32, {countPerRank}, comm.rank());
  HostTensor all(DType::F32, {countPerRank * comm.size()});
  const HostTensor untouched = all;
  Status status =
      pointToPoint
          ? comm.Communicator::gather(mine.bytes.data(), all.bytes.data(), mine.bytes.size(), root)
          : comm.gather(mine.bytes.data(), all.bytes.data(), mine.bytes.size(), root);
  ASSERT_TRUE(succeeded(status));
  const HostTensor &expected =
      comm.rank() == root ? concatOf(everyRank(DType::F32, {countPerRank}, comm.size()), 0)
                          : untouched;
  EXPECT_TRUE(sameTensor(all, expected))
      << "root " << root << ", rank " << comm.rank() << " of " << comm.size();
}

/// Every rank sends to the next and receives from the previous.
inline void checkSendRecvRing(Communicator &comm, int64_t count) {
  const int n = comm.size(), next = (comm.rank() + 1) % n, previous = (comm.rank() + n - 1) % n;
  HostTensor mine = rankTensor(DType::I32, {count}, comm.rank());
  HostTensor got(DType::I32, {count});
  ASSERT_TRUE(succeeded(comm.send(mine.bytes.data(), mine.bytes.size(), next)));
  ASSERT_TRUE(succeeded(comm.recv(got.bytes.data(), got.bytes.size(), previous)));
  EXPECT_TRUE(sameTensor(got, rankTensor(DType::I32, {count}, previous)));
}

/// Two splits at once: by parity (keys reversed) and into halves; each group
/// gathers its members' world ranks and reduces them.
inline void checkSplit(Communicator &world) {
  const int n = world.size(), me = world.rank();
  auto parity = world.split(me % 2, -me);
  ASSERT_TRUE(parity.ok()) << parity.status().message();
  auto halves = world.split(me < n / 2 ? 0 : 1, me);
  ASSERT_TRUE(halves.ok()) << halves.status().message();
  for (int round = 0; round < 2; ++round) { // alternate between the groups
    std::vector<int> expected;
    for (int r = n - 1; r >= 0; --r)
      if (r % 2 == me % 2)
        expected.push_back(r);
    Communicator &group = **parity;
    ASSERT_EQ(group.size(), static_cast<int>(expected.size()));
    EXPECT_EQ(expected[group.rank()], me);
    std::vector<int32_t> members(group.size());
    int32_t mine = me;
    ASSERT_TRUE(succeeded(group.allGather(&mine, members.data(), sizeof mine)));
    EXPECT_EQ(std::vector<int>(members.begin(), members.end()), expected);

    Communicator &half = **halves;
    int64_t total = me;
    ASSERT_TRUE(succeeded(half.allReduceSum(&total, 1, DType::I64)));
    int64_t want = 0;
    for (int r = 0; r < n; ++r)
      if ((r < n / 2) == (me < n / 2))
        want += r;
    EXPECT_EQ(total, want);
  }
  auto none = world.split(me == 0 ? -1 : 0, 0); // rank 0 stays out
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->get() == nullptr, me == 0);
  if (me != 0) {
    EXPECT_EQ((*none)->size(), n - 1);
  }
}

// ---- The collective kernels -------------------------------------------------

/// How the kernel checks below run a kernel on host tensors; null: the CPU
/// table. The CUDA tests set one per rank thread that runs the CUDA kernel
/// on device copies, in the rank's stream.
using KernelRunner = Status (*)(const std::string &name, Communicator *comm,
                                const std::vector<TensorView> &inputs,
                                const std::vector<TensorView> &outputs, const Params &params);
inline thread_local KernelRunner kernelRunner = nullptr;

/// Runs the kernel `name` on this rank's tensors.
inline Status runKernel(const std::string &name, Communicator *comm, std::vector<TensorView> inputs,
                        std::vector<TensorView> outputs, const Params &params) {
  if (kernelRunner)
    return kernelRunner(name, comm, inputs, outputs, params);
  KernelFunction kernel = cpu::kernelTable().find(name);
  if (!kernel)
    return Status::error("no CPU kernel '" + name + "'");
  return kernel(KernelCall{inputs, outputs, params, comm});
}

inline Params intParams(std::vector<std::pair<std::string, int64_t>> values) {
  Params params;
  params.set("mesh_axes", Param{{}, {}, {"tp"}});
  for (auto &[key, value] : values)
    params.set(key, Param{{value}, {}, {}});
  return params;
}

/// Shapes whose dims all split n ways, or whose leading dim is 1 (blocks
/// contiguous along dim 1 too: the kernels' no-copy path).
inline std::vector<Shape> kernelShapes(int n) { return {{2 * n, 3 * n, 4 * n}, {1, 2 * n, n}}; }

inline void checkAllReduceKernel(Communicator &comm, DType dtype, const Shape &shape) {
  HostTensor in = rankTensor(dtype, shape, comm.rank()), out(dtype, shape);
  ASSERT_TRUE(succeeded(runKernel("all_reduce", &comm, {in.view()}, {out.view()}, intParams({}))));
  EXPECT_TRUE(sameTensor(out, sumOf(everyRank(dtype, shape, comm.size()))));
}

inline void checkAllGatherKernel(Communicator &comm, DType dtype, const Shape &block, int dim) {
  const int n = comm.size();
  HostTensor in = rankTensor(dtype, block, comm.rank());
  Shape gathered = block;
  gathered[dim] *= n;
  HostTensor out(dtype, gathered);
  ASSERT_TRUE(succeeded(
      runKernel("all_gather", &comm, {in.view()}, {out.view()}, intParams({{"dim", dim}}))));
  EXPECT_TRUE(sameTensor(out, concatOf(everyRank(dtype, block, n), dim)))
      << dtypeName(dtype) << " dim " << dim << " rank " << comm.rank() << " of " << n;
}

inline void checkReduceScatterKernel(Communicator &comm, DType dtype, const Shape &whole, int dim) {
  const int n = comm.size();
  HostTensor in = rankTensor(dtype, whole, comm.rank());
  Shape block = whole;
  block[dim] /= n;
  HostTensor out(dtype, block);
  ASSERT_TRUE(succeeded(
      runKernel("reduce_scatter", &comm, {in.view()}, {out.view()}, intParams({{"dim", dim}}))));
  EXPECT_TRUE(sameTensor(out, blockOf(sumOf(everyRank(dtype, whole, n)), dim, n, comm.rank())))
      << dtypeName(dtype) << " dim " << dim << " rank " << comm.rank() << " of " << n;
}

inline void checkAllToAllKernel(Communicator &comm, DType dtype, const Shape &shape, int splitDim,
                                int concatDim) {
  const int n = comm.size();
  HostTensor in = rankTensor(dtype, shape, comm.rank());
  // Reference: block `me` along split_dim of every rank's input, in rank
  // order, concatenated along concat_dim.
  std::vector<HostTensor> received;
  for (int from = 0; from < n; ++from)
    received.push_back(blockOf(rankTensor(dtype, shape, from), splitDim, n, comm.rank()));
  HostTensor want = concatOf(received, concatDim);
  HostTensor out(dtype, want.shape);
  ASSERT_TRUE(
      succeeded(runKernel("all_to_all", &comm, {in.view()}, {out.view()},
                          intParams({{"split_dim", splitDim}, {"concat_dim", concatDim}}))));
  EXPECT_TRUE(sameTensor(out, want)) << dtypeName(dtype) << " split " << splitDim << " concat "
                                     << concatDim << " rank " << comm.rank() << " of " << n;
}

inline void checkAllSliceKernel(Communicator &comm, DType dtype, const Shape &shape, int dim) {
  const int n = comm.size();
  // Every rank holds the same (replicated) tensor and keeps its block.
  HostTensor in = rankTensor(dtype, shape, 0);
  HostTensor want = blockOf(in, dim, n, comm.rank());
  HostTensor out(dtype, want.shape);
  ASSERT_TRUE(succeeded(
      runKernel("all_slice", &comm, {in.view()}, {out.view()}, intParams({{"dim", dim}}))));
  EXPECT_TRUE(sameTensor(out, want));
}

inline void checkBroadcastKernel(Communicator &comm, DType dtype, const Shape &shape, int root) {
  HostTensor in = rankTensor(dtype, shape, comm.rank()), out(dtype, shape);
  ASSERT_TRUE(succeeded(
      runKernel("broadcast", &comm, {in.view()}, {out.view()}, intParams({{"root", root}}))));
  EXPECT_TRUE(sameTensor(out, rankTensor(dtype, shape, root)));
}

inline void checkSendRecvKernels(Communicator &comm, DType dtype, const Shape &shape) {
  const int n = comm.size(), next = (comm.rank() + 1) % n, previous = (comm.rank() + n - 1) % n;
  HostTensor in = rankTensor(dtype, shape, comm.rank()), out(dtype, shape);
  ASSERT_TRUE(succeeded(runKernel("send", &comm, {in.view()}, {}, intParams({{"peer", next}}))));
  ASSERT_TRUE(
      succeeded(runKernel("recv", &comm, {}, {out.view()}, intParams({{"peer", previous}}))));
  EXPECT_TRUE(sameTensor(out, rankTensor(dtype, shape, previous)));
}

/// Every kernel on every dim of every kernelShapes() shape, for `dtypes`
/// (the sums only where summable).
inline void checkAllKernels(Communicator &comm, const std::vector<DType> &dtypes) {
  for (DType dtype : dtypes)
    for (const Shape &shape : kernelShapes(comm.size())) {
      const bool summable = dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 ||
                            dtype == DType::BF16 || dtype == DType::I32 || dtype == DType::I64;
      if (summable)
        checkAllReduceKernel(comm, dtype, shape);
      for (int dim = 0; dim < 3; ++dim) {
        checkAllGatherKernel(comm, dtype, shape, dim);
        if (shape[dim] % comm.size() != 0)
          continue; // the ops below cut `dim` into size() blocks
        if (summable)
          checkReduceScatterKernel(comm, dtype, shape, dim);
        checkAllSliceKernel(comm, dtype, shape, dim);
        for (int concat = 0; concat < 3; ++concat)
          checkAllToAllKernel(comm, dtype, shape, dim, concat);
      }
      checkBroadcastKernel(comm, dtype, shape, comm.size() - 1);
      checkSendRecvKernels(comm, dtype, shape);
    }
}

} // namespace shardc::rt::test

#endif
