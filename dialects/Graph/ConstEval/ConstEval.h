//===- ConstEval.h - Everything the graph folders use -----------*- C++ -*-===//
//
// The constant evaluator behind the `graph` dialect's folders: pure C++17,
// no MLIR or LLVM, numerics following ONNX operator semantics. A folder turns
// its constant operands into HostTensors, calls an op, and on success turns
// the result back into an attribute; on failure it simply does not fold.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECTS_GRAPH_CONSTEVAL_CONSTEVAL_H
#define SHARDC_DIALECTS_GRAPH_CONSTEVAL_CONSTEVAL_H

#include "dialects/Graph/ConstEval/Elementwise.h"
#include "dialects/Graph/ConstEval/FloatFormats.h"
#include "dialects/Graph/ConstEval/Generators.h"
#include "dialects/Graph/ConstEval/HostTensor.h"
#include "dialects/Graph/ConstEval/Indexing.h"
#include "dialects/Graph/ConstEval/MatMul.h"
#include "dialects/Graph/ConstEval/Movement.h"
#include "dialects/Graph/ConstEval/Reduction.h"

#endif // SHARDC_DIALECTS_GRAPH_CONSTEVAL_CONSTEVAL_H
