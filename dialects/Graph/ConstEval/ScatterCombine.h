//===- ScatterCombine.h - How scattered updates combine (internal) -*- C++ -*-===//
//
// Internal to the evaluator: the reductions ScatterElements and ScatterND
// share, on both storages, and the data types they accept.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECTS_GRAPH_CONSTEVAL_SCATTERCOMBINE_H
#define SHARDC_DIALECTS_GRAPH_CONSTEVAL_SCATTERCOMBINE_H

#include "dialects/Graph/ConstEval/Indexing.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

namespace shardc::constfold::detail {

/// Bool data takes only None: "<op> reductions need integer or float data,
/// not bool".
inline Status checkReductionType(const HostTensor &data, ScatterReduction reduction,
                                 const char *op) {
  if (data.type == ScalarType::Bool && reduction != ScatterReduction::None)
    return Status::error(std::string(op) + " reductions need integer or float data, not bool");
  return {};
}

/// The combined value for a reduction, computed wide and normalized to
/// `type`; Max/Min keep a NaN already there.
inline double combine(ScatterReduction reduction, ScalarType type, double old,
                      double update) {
  switch (reduction) {
  case ScatterReduction::Add: return roundFloat(type, old + update);
  case ScatterReduction::Mul: return roundFloat(type, old * update);
  case ScatterReduction::Max: return std::isnan(old) || old >= update ? old : update;
  case ScatterReduction::Min: return std::isnan(old) || old <= update ? old : update;
  case ScatterReduction::None: break;
  }
  return update;
}

inline int64_t combine(ScatterReduction reduction, ScalarType type, int64_t old,
                       int64_t update) {
  switch (reduction) {
  case ScatterReduction::Add: return wrapInt(type, uint64_t(old) + uint64_t(update));
  case ScatterReduction::Mul: return wrapInt(type, uint64_t(old) * uint64_t(update));
  case ScatterReduction::Max: return std::max(old, update);
  case ScatterReduction::Min: return std::min(old, update);
  case ScatterReduction::None: break;
  }
  return update;
}

} // namespace shardc::constfold::detail

#endif // SHARDC_DIALECTS_GRAPH_CONSTEVAL_SCATTERCOMBINE_H
