//===- LinearAlgebra.cpp - importers of MatMul and Gemm -------------------===//
//
// Imported literally (Gemm as transposes, matmul, scale and add); raising
// recognizes the linear layers afterwards, whichever way they were exported.
//
//===----------------------------------------------------------------------===//
#include "compiler/Import/NodeContext.h"
#include "compiler/Import/OpRegistry.h"

using namespace mlir;
using namespace shardc::graph;

namespace shardc::import {
namespace {

LogicalResult importMatMul(NodeContext &node) {
  if (failed(node.requireInputs(2)))
    return failure();
  return node.define(node.create<MatMulOp>(ValueRange{node.input(0), node.input(1)}));
}

/// Y = alpha * A' @ B' + beta * C, with A' and B' optionally transposed.
LogicalResult importGemm(NodeContext &node) {
  auto alpha = node.floatAttr("alpha", 1.0);
  auto beta = node.floatAttr("beta", 1.0);
  auto transA = node.intAttr("transA", 0);
  auto transB = node.intAttr("transB", 0);
  if (failed(node.requireInputs(2)) || failed(alpha) || failed(beta) || failed(transA) ||
      failed(transB))
    return failure();
  for (unsigned i = 0; i < 2; ++i)
    if (node.inputType(i).getRank() != 2)
      return node.error() << "input " << i << " must be 2-D; got rank "
                          << node.inputType(i).getRank();
  Value a = node.input(0), b = node.input(1);
  Type element = node.inputType(0).getElementType();
  FailureOr<Value> product = success(a);
  if (*transA)
    product = node.transpose(a, {1, 0});
  FailureOr<Value> right = success(b);
  if (succeeded(product) && *transB)
    right = node.transpose(b, {1, 0});
  if (succeeded(product) && succeeded(right))
    product = node.create<MatMulOp>(ValueRange{*product, *right});
  if (succeeded(product) && *alpha != 1.0) {
    auto factor = node.scalar(element, *alpha);
    product = succeeded(factor) ? node.create<MulOp>(ValueRange{*product, *factor}) : noValue();
  }
  if (succeeded(product) && node.hasInput(2)) {
    FailureOr<Value> bias = success(node.input(2));
    if (*beta != 1.0) {
      auto factor = node.scalar(element, *beta);
      bias = succeeded(factor) ? node.create<MulOp>(ValueRange{*bias, *factor}) : noValue();
    }
    if (succeeded(bias))
      product = node.create<AddOp>(ValueRange{*product, *bias});
    else
      product = failure();
  }
  if (failed(product))
    return failure();
  node.setOutput(0, *product);
  return success();
}

} // namespace

void registerLinearAlgebraImporters(OpImporterMap &map) {
  map["MatMul"] = {importMatMul, 1};
  map["Gemm"] = {importGemm, 7};
}

} // namespace shardc::import
