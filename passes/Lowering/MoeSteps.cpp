//===- MoeSteps.cpp - graph.moe as three kernel steps ---------------------===//
#include "passes/Lowering/MoeSteps.h"

#include "dialects/Exec/ExecDialect.h"
#include "dialects/Graph/NodeLocation.h"
#include "passes/Sharding/RoutedExchange.h"

using namespace mlir;

namespace shardc::lowering {
namespace {

/// Members of the expert group: the experts the weights hold locally divide
/// the model's among them.
int64_t groupSize(graph::MoeOp moe) {
  int64_t local = cast<RankedTensorType>(moe.getDownWeight().getType()).getDimSize(0);
  return int64_t(moe.getExperts()) / local;
}

} // namespace

int64_t moeRowBound(graph::MoeOp moe) {
  int64_t members = groupSize(moe);
  return sharding::moeRowBound(members, moe.getInput().getType().getDimSize(0),
                               moe.getIndices().getType().getDimSize(1),
                               int64_t(moe.getExperts()) / members, moe.getExchange(),
                               int64_t(moe.getCapacity()));
}

void emitMoeSteps(OpBuilder &builder, graph::MoeOp moe, ValueRange inputs, Value result) {
  Location location = moe.getLoc();
  MLIRContext *context = builder.getContext();
  auto input = moe.getInput().getType();
  auto alloc = [&](ArrayRef<int64_t> shape, Type element) -> Value {
    return builder.create<exec::AllocOp>(location, MemRefType::get(shape, element),
                                         IntegerAttr());
  };
  int64_t rowsBound = moeRowBound(moe), hidden = input.getDimSize(1);
  int64_t sources = moe.getExchange() ? groupSize(moe) : 1;
  Value rows = alloc({rowsBound, hidden}, input.getElementType());
  Value routing = alloc({sources, int64_t(moe.getExperts())}, builder.getI64Type());
  Value out = alloc({rowsBound, hidden}, input.getElementType());

  NamedAttrList shared;
  shared.append("experts", moe.getExpertsAttr());
  shared.append("exchange", builder.getBoolAttr(moe.getExchange()));
  shared.append("capacity", builder.getI64IntegerAttr(int64_t(moe.getCapacity())));
  if (ArrayAttr axes = moe.getExpertAxesAttr())
    shared.append("mesh_axes", axes);
  NamedAttrList experts(shared);
  experts.append("activation", moe.getActivationAttr());
  experts.append("gated", builder.getBoolAttr(moe.isGated()));
  experts.append("transpose_weights", builder.getBoolAttr(moe.getTransposeWeights()));

  std::string source = graph::onnxNodeNames(location);
  Value x = inputs[0], indices = inputs[1], gates = inputs[2];
  builder.create<exec::KernelOp>(location, "moe_dispatch", ValueRange{x, indices},
                                 ValueRange{rows, routing}, shared.getDictionary(context),
                                 source);
  SmallVector<Value> expertInputs = {rows, routing};
  expertInputs.append(inputs.begin() + 3, inputs.end());
  builder.create<exec::KernelOp>(location, "moe_experts", expertInputs, ValueRange{out},
                                 experts.getDictionary(context), source);
  builder.create<exec::KernelOp>(location, "moe_combine",
                                 ValueRange{out, routing, indices, gates}, ValueRange{result},
                                 shared.getDictionary(context), source);
}

} // namespace shardc::lowering
