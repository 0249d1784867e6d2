//===- ModulePath.h - the torch module an ONNX node came from ---*- C++ -*-===//
//
// Users know their model by its module tree (model.layers.0.self_attn), not
// by exporter node names (node_linear_3). Both torch exporters record it:
// the TorchScript exporter in the node name (/model/layers.0/self_attn/
// q_proj/MatMul), the dynamo exporter in the node's metadata
// (pkg.torch.onnx.name_scopes = ['', 'model', ..., 'model.layers.0.self_attn',
// 'q_proj', 'linear']: the enclosing scopes, then the node's own name).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_IMPORT_MODULEPATH_H
#define SHARDC_COMPILER_IMPORT_MODULEPATH_H

#include "onnx/onnx_pb.h"

#include <string>

namespace shardc::import {

/// The dotted module path of the module that holds `node`; empty when the
/// exporter recorded none.
std::string modulePathOf(const onnx::NodeProto &node);

} // namespace shardc::import

#endif
