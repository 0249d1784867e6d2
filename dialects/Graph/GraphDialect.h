//===- GraphDialect.h - the graph dialect -----------------------*- C++ -*-===//
#ifndef SHARDC_DIALECTS_GRAPH_GRAPHDIALECT_H
#define SHARDC_DIALECTS_GRAPH_GRAPHDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Operation.h"

#include <type_traits>

#include "dialects/Graph/GraphDialect.h.inc"

namespace shardc::graph {

/// On a function's arguments and results: the ONNX input's or output's name,
/// which the artifact's signature keeps.
constexpr llvm::StringLiteral kNameAttrName = "graph.name";
/// On a 2-D graph.weight (and the exec.weight it lowers to; a unit
/// attribute): its type is the stored block's transposed. stored_shape,
/// box_offsets and dist.weight_shard keep the stored orientation; the
/// artifact writer cuts the rank's block as stored and writes it transposed
/// (shardc-pretranspose-weights).
constexpr llvm::StringLiteral kTransposedAttrName = "graph.transposed";

/// On a graph.weight (and the exec.weight it lowers to): storage a training
/// step writes (graph.assign), kept across steps. "param": a trained weight,
/// first the model's value; "state": an optimizer state, first zeros, with
/// no file; "accumulator": a sum over micro-batches, zeros before each
/// step's first micro-batch and no part of a checkpoint (docs/training.md).
constexpr llvm::StringLiteral kTrainAttrName = "graph.train";
constexpr llvm::StringLiteral kTrainParam = "param";
constexpr llvm::StringLiteral kTrainState = "state";
constexpr llvm::StringLiteral kTrainAccumulator = "accumulator";
/// A mixed-precision step's weight in the compute type (bf16, fp16), which
/// the forward and backward read: the copy of its fp32 master ("param")
/// that the update refreshes after writing the master, as Megatron-LM keeps
/// them. Named after the master (NAME.bf16), initialised from the master's
/// bytes converted, saved in checkpoints like a state (shardc-compute-copies).
constexpr llvm::StringLiteral kTrainCopy = "copy";

/// On a trained graph.weight of a mixed-precision step (--train --dtype
/// bf16|fp16): the type the step computes with (a TypeAttr). The weight
/// itself is the float32 master, which only the update reads; the step
/// reads its copy in this type (kTrainCopy). Its gradient is counted in this
/// type, the master with the optimizer's state (ZeRO's 2 + 2 + 12 bytes per
/// parameter: the copy, the gradient, the master and Adam's moments).
constexpr llvm::StringLiteral kComputeTypeAttrName = "graph.compute_type";

/// `op`'s graph.train role, or "" when it is not storage a step writes.
inline llvm::StringRef trainRole(mlir::Operation *op) {
  auto role = op ? op->getAttrOfType<mlir::StringAttr>(kTrainAttrName) : mlir::StringAttr();
  return role ? role.getValue() : llvm::StringRef();
}
/// The graph.train role of the op that defines `value` (see above).
inline llvm::StringRef trainRole(mlir::Value value) { return trainRole(value.getDefiningOp()); }
/// The graph.train role of `op`, an op class (graph.weight, exec.weight).
template <typename OpClass,
          typename = std::enable_if_t<std::is_base_of_v<mlir::OpState, OpClass>>>
llvm::StringRef trainRole(OpClass op) {
  return trainRole(op.getOperation());
}
/// Whether storage of `role` starts as zeros, with no bytes in any file: an
/// optimizer state or an accumulator.
inline bool startsAsZeros(llvm::StringRef role) {
  return role == kTrainState || role == kTrainAccumulator;
}
/// Whether storage of `role` holds a model's weight as the forward may read
/// it, split and placed like one: a parameter, or a mixed-precision
/// master's copy (not an optimizer state or an accumulator).
inline bool holdsWeight(llvm::StringRef role) { return role == kTrainParam || role == kTrainCopy; }
/// On the module of a training step: a dictionary of what it was built with
/// (loss, optimizer and its hyperparameters), which the artifact's manifest
/// carries for the runtime and the user.
constexpr llvm::StringLiteral kTrainingAttrName = "graph.training";

} // namespace shardc::graph

#endif
