//===- GraphBase.td - the graph dialect and its op base classes -----------===//
//
// `graph` holds a model with single-device semantics: every tensor fully
// static, weights referenced by file and offset rather than copied.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_GRAPH_BASE_TD
#define SHARDC_GRAPH_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Graph_Dialect : Dialect {
  let name = "graph";
  let cppNamespace = "::shardc::graph";
  let summary = "Tensor operations of transformer models with static shapes";
  let description = [{
    The `graph` dialect is the global, single-device form of a model: the ONNX
    importer produces it, raising recognizes composite ops in it (linear,
    attention, norms, rotary embeddings, gated MLPs, mixture of experts), and the
    sharding passes annotate it. Every tensor has a static shape; symbolic dims
    are bound at import. Weights are `graph.weight` references to bytes in a file.
  }];
  let hasConstantMaterializer = 1;
  // Inherent attributes live in the attribute dictionary so the importer can
  // build any op generically from (name, operands, attributes).
  let usePropertiesForAttributes = 0;
}

class Graph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic, traits>;

// Element types the dialect computes on.
def Graph_Float : AnyTypeOf<[F16, BF16, F32, F64]>;
def Graph_Int : AnyTypeOf<[I1, I8, I16, I32, I64, UI8]>;
def Graph_Element : AnyTypeOf<[Graph_Float, Graph_Int]>;

def Graph_Tensor : StaticShapeTensorOf<[Graph_Element]>;
// Integer or float: what arithmetic takes (no bool).
def Graph_NumberTensor : StaticShapeTensorOf<[Graph_Float, I8, I16, I32, I64, UI8]>;
def Graph_FloatTensor : StaticShapeTensorOf<[Graph_Float]>;
def Graph_BoolTensor : StaticShapeTensorOf<[I1]>;
def Graph_IndexTensor : StaticShapeTensorOf<[I32, I64]>;

def Graph_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "comparison of two tensors", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"lt", 1>,
      I32EnumAttrCase<"le", 2>, I32EnumAttrCase<"gt", 3>,
      I32EnumAttrCase<"ge", 4>]> {
  let cppNamespace = "::shardc::graph";
}

def Graph_ScatterReduction : I32EnumAttr<"ScatterReduction",
    "how scattered updates combine with the data", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"add", 1>,
      I32EnumAttrCase<"mul", 2>, I32EnumAttrCase<"max", 3>,
      I32EnumAttrCase<"min", 4>]> {
  let cppNamespace = "::shardc::graph";
}

#endif // SHARDC_GRAPH_BASE_TD
