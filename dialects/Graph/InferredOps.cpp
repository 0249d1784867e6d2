//===- InferredOps.cpp - build an op when its operands are valid ----------===//
#include "dialects/Graph/InferredOps.h"

#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;

namespace shardc::graph {

Operation *createInferred(OpBuilder &builder, Location location, OperationName name,
                          ValueRange operands, ArrayRef<NamedAttribute> attributes) {
  std::optional<RegisteredOperationName> info = name.getRegisteredInfo();
  auto *infer = info ? info->getInterface<InferTypeOpInterface>() : nullptr;
  if (!infer)
    return nullptr;
  OperationState state(location, name);
  state.addOperands(operands);
  state.addAttributes(attributes);
  SmallVector<Type> types;
  // No location: a pattern that does not fit is not an error.
  if (failed(infer->inferReturnTypes(builder.getContext(), std::nullopt, state.operands,
                                     state.attributes.getDictionary(builder.getContext()),
                                     OpaqueProperties(nullptr), RegionRange(), types)))
    return nullptr;
  state.addTypes(types);
  return builder.create(state);
}

} // namespace shardc::graph
