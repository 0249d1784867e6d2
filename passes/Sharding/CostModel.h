//===- CostModel.h - what a step costs on a device mesh ----------*- C++ -*-===//
//
// The numbers the search minimizes: compute at the device's peak (a roofline
// over flops and bytes), each collective by an alpha-beta model (ring and
// tree formulas, the cheaper wins), with the link chosen per mesh axis: a
// group whose ranks fit in one node talks over NVLink, otherwise over
// InfiniBand. Presets describe A100, H100 and H200 nodes of 8 GPUs; a JSON file
// overrides any of them (--device FILE.json, README "Device description").
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_SHARDING_COSTMODEL_H
#define SHARDC_PASSES_SHARDING_COSTMODEL_H

#include "passes/Sharding/ValueSharding.h"

#include "dialects/Graph/TypeUtils.h"

#include "mlir/IR/Operation.h"
#include "llvm/Support/Error.h"

#include <string>

namespace shardc::sharding {

struct Link {
  double latencySeconds;
  double bytesPerSecond; ///< per direction, per device
};

struct DeviceModel {
  std::string name;
  double peakFlops16;     ///< dense fp16/bf16 tensor-core FLOP/s
  double peakFlops32;     ///< fp32 (TF32 tensor cores) FLOP/s
  double memoryBandwidth; ///< HBM bytes/s
  int64_t memoryBytes;
  int64_t devicesPerNode;
  Link intraNode, interNode;
  /// Fixed cost of starting one collective (a kernel launch and the group's
  /// handshake): why one all-reduce beats an all-gather pair of equal bytes.
  double collectiveLaunchSeconds;
  /// What real kernels reach of the peaks (docs/cost-model.md): a GEMM of
  /// the best shape (the rest lose what wave quantization costs them, on
  /// `multiprocessors` units; 0: none), an attention kernel, a streaming
  /// memory-bound one. A measured device file (shardc-calibrate) holds
  /// achieved rates already: 1, 0, 1, 1.
  double matmulEfficiency = 1;
  int64_t multiprocessors = 0;
  double attentionEfficiency = 1;
  double memoryEfficiency = 1;

  /// "a100", "h100" or "h200".
  static std::optional<DeviceModel> preset(llvm::StringRef name);
  /// A preset name, or a JSON file whose keys override the "base" preset.
  static llvm::Expected<DeviceModel> load(llvm::StringRef nameOrFile);
  /// load(), its error reported at `at`.
  static mlir::FailureOr<DeviceModel> load(llvm::StringRef nameOrFile, mlir::Operation *at);
};

/// Bytes moved in and out of one device by a collective (ring algorithms):
/// what the report calls traffic.
int64_t collectiveTrafficBytes(const CollectiveStep &step, int64_t elementBytes,
                               const MeshShape &mesh);
/// The buffer the collective works on, as nccl-tests counts it: the reduced
/// buffer for all-reduce, the gathered (whole) one for all-gather and
/// reduce-scatter, the sent one for all-to-all.
int64_t collectivePayloadBytes(const CollectiveStep &step, int64_t elementBytes);
double collectiveSeconds(const CollectiveStep &step, int64_t elementBytes, const MeshShape &mesh,
                         const DeviceModel &device);

/// Flops of one op on global shapes (2 per multiply-add); a causal
/// attention computes the half its mask leaves.
double opFlops(mlir::Operation *op);
/// Flops of one op as published counts give them (Narayanan et al. 2021
/// eq. 3, PaLM's model FLOPs): contractions only (linear layers, matmuls,
/// routed experts, attention, whole even when causal); 0 for other ops.
double modelFlops(mlir::Operation *op);
/// Roofline time of an op split `shards` ways, moving `localBytes` per
/// device, its first result `localResult` per device: FLOPs at what the
/// device's kernels reach for the op (a GEMM's tiles in waves), bytes at
/// the memory bandwidth streaming kernels reach.
double opSeconds(mlir::Operation *op, int64_t shards, int64_t localBytes,
                 llvm::ArrayRef<int64_t> localResult, const DeviceModel &device);

/// "1.50 GiB", "12.00 KiB": sizes in messages and reports.
std::string formatBytes(double bytes);
int64_t tensorBytes(llvm::ArrayRef<int64_t> shape, mlir::Type elementType);

} // namespace shardc::sharding

#endif
