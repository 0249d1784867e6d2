//===- Transpose.cpp - ONNX Transpose -------------------------------------===//

#include "dialects/Graph/ConstEval/Movement.h"

#include "dialects/Graph/ConstEval/OpSupport.h"

namespace shardc::constfold {

StatusOr<HostTensor> transpose(const HostTensor &operand, const std::vector<int64_t> &perm) {
  if (Status status = detail::checkOperand(operand, "operand"); !status)
    return status;
  const int64_t rank = operand.rank();
  std::vector<bool> seen(size_t(rank), false);
  bool isPermutation = int64_t(perm.size()) == rank;
  for (size_t i = 0; isPermutation && i < perm.size(); ++i) {
    isPermutation = perm[i] >= 0 && perm[i] < rank && !seen[size_t(perm[i])];
    if (isPermutation)
      seen[size_t(perm[i])] = true;
  }
  if (!isPermutation)
    return Status::error("transpose permutation " + formatShape(perm) +
                         " is not a permutation of the " + std::to_string(rank) + " dims of " +
                         formatShape(operand.shape));

  // Reading the source with permuted strides, in destination order, is the
  // transpose.
  Shape shape(perm.size()), strides(perm.size());
  Shape sourceStrides = rowMajorStrides(operand.shape);
  for (size_t i = 0; i < perm.size(); ++i) {
    shape[i] = operand.shape[size_t(perm[i])];
    strides[i] = sourceStrides[size_t(perm[i])];
  }
  StatusOr<HostTensor> out = detail::allocate(operand.type, shape);
  if (out)
    detail::stridedCopy(operand, *out, 0, strides);
  return out;
}

} // namespace shardc::constfold
