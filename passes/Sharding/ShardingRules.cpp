//===- ShardingRules.cpp - the sharding rule of every graph op ------------===//
#include "passes/Sharding/ShardingRule.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/TypeUtils.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <numeric>

using namespace mlir;

namespace shardc::sharding {
namespace {

using graph::shapeOf;

/// Builds rules tensor by tensor.
class RuleBuilder {
public:
  explicit RuleBuilder(Operation *op) : op(op) {
    rule.operands.resize(op->getNumOperands());
    rule.results.resize(op->getNumResults());
    for (auto [index, value] : llvm::enumerate(op->getOperands()))
      rule.operands[index].resize(shapeOf(value).size());
    for (auto [index, value] : llvm::enumerate(op->getResults()))
      rule.results[index].resize(shapeOf(value).size());
  }

  /// A new factor of `size` placed in the given (tensor, dim) slots; dims of
  /// size 1 get none (they broadcast, nothing to split).
  unsigned factor(int64_t size, FactorKind kind) { return rule.addFactor(size, kind); }
  void operandDim(unsigned operand, unsigned dim, unsigned factor) {
    if (shapeOf(op->getOperand(operand))[dim] != 1)
      rule.operands[operand][dim].push_back(factor);
  }
  void resultDim(unsigned result, unsigned dim, unsigned factor) {
    if (shapeOf(op->getResult(result))[dim] != 1)
      rule.results[result][dim].push_back(factor);
  }
  /// Every dim not given a factor yet gets its own Replicated one.
  OpShardingRule finish() {
    auto fill = [&](TensorFactors &tensor, ArrayRef<int64_t> shape) {
      for (auto [dim, factors] : llvm::enumerate(tensor))
        if (factors.empty() && shape[dim] != 1)
          factors.push_back(rule.addFactor(shape[dim], FactorKind::Replicated));
    };
    for (auto [index, value] : llvm::enumerate(op->getOperands()))
      fill(rule.operands[index], shapeOf(value));
    for (auto [index, value] : llvm::enumerate(op->getResults()))
      fill(rule.results[index], shapeOf(value));
    return std::move(rule);
  }

  /// Operand dims aligned to the result's from the right (numpy broadcasting):
  /// equal sizes share the result's factor.
  void broadcastOperands(ArrayRef<unsigned> resultFactors, unsigned firstOperand = 0) {
    ArrayRef<int64_t> result = shapeOf(op->getResult(0));
    for (unsigned operand = firstOperand; operand < op->getNumOperands(); ++operand) {
      ArrayRef<int64_t> shape = shapeOf(op->getOperand(operand));
      int64_t offset = int64_t(result.size()) - int64_t(shape.size());
      for (unsigned dim = 0; dim < shape.size(); ++dim)
        if (offset + int64_t(dim) >= 0 && shape[dim] == result[offset + dim])
          operandDim(operand, dim, resultFactors[offset + dim]);
    }
  }

  /// One Parallel factor per dim of result 0, except `whole` dims (Replicated).
  SmallVector<unsigned> resultFactors(unsigned result = 0, ArrayRef<int64_t> whole = {}) {
    SmallVector<unsigned> factors;
    for (auto [dim, size] : llvm::enumerate(shapeOf(op->getResult(result)))) {
      bool keep = llvm::is_contained(whole, int64_t(dim));
      factors.push_back(factor(size, keep ? FactorKind::Replicated : FactorKind::Parallel));
      resultDim(result, dim, factors.back());
    }
    return factors;
  }

  Operation *op;
  OpShardingRule rule;
};

/// A constant whose every element is zero.
bool isZeros(Value value) {
  auto constant = value.getDefiningOp<graph::ConstantOp>();
  auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
  if (!dense || !dense.isSplat())
    return false;
  if (isa<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().isZero();
  return dense.getSplatValue<APInt>().isZero();
}

/// The operands an elementwise op is linear in (see linearOperands).
SmallVector<unsigned, 2> elementwiseLinearOperands(Operation *op) {
  if (isa<graph::AddOp, graph::SubOp>(op)) {
    // Zeros (an accumulator's start) may be held whole by every device.
    for (unsigned zeros : {0u, 1u})
      if (isZeros(op->getOperand(zeros)))
        return {1 - zeros};
    return {0, 1};
  }
  Type result = op->getResult(0).getType();
  // x * s and x / s, s broadcast against x (a routing weight, a gate, a
  // scale): which operand is scaled is ambiguous when both have x's shape.
  if (isa<graph::MulOp>(op))
    for (unsigned scaled : {0u, 1u})
      if (op->getOperand(scaled).getType() == result &&
          op->getOperand(1 - scaled).getType() != result)
        return {scaled};
  if (isa<graph::DivOp>(op) && op->getOperand(0).getType() == result)
    return {0};
  if (isa<graph::WhereOp>(op))
    for (unsigned branch : {1u, 2u})
      if (isZeros(op->getOperand(3 - branch)))
        return {branch};
  return {};
}

OpShardingRule elementwise(Operation *op) {
  RuleBuilder builder(op);
  SmallVector<unsigned> factors = builder.resultFactors();
  builder.broadcastOperands(factors);
  builder.rule.linearOperands = elementwiseLinearOperands(op);
  return builder.finish();
}

/// Writing or adding updates into data is linear in both jointly; into
/// zeros, every device may hold the zeros whole.
SmallVector<unsigned, 2> scatterLinearOperands(Operation *op, graph::ScatterReduction reduction) {
  if (reduction != graph::ScatterReduction::none && reduction != graph::ScatterReduction::add)
    return {};
  if (isZeros(op->getOperand(0)))
    return {2};
  return {0, 2};
}

/// Same-shaped operand and result; `whole` dims stay whole.
OpShardingRule sameShape(Operation *op, ArrayRef<int64_t> whole) {
  RuleBuilder builder(op);
  SmallVector<unsigned> factors;
  for (unsigned result = 0; result < op->getNumResults(); ++result) {
    SmallVector<unsigned> own = result == 0 ? builder.resultFactors(0, whole) : factors;
    if (result == 0)
      factors = own;
    else
      for (auto [dim, factor] : llvm::enumerate(factors))
        builder.resultDim(result, dim, factor);
  }
  builder.broadcastOperands(factors);
  return builder.finish();
}

OpShardingRule linear(graph::LinearOp op) {
  RuleBuilder builder(op);
  ArrayRef<int64_t> input = shapeOf(op.getInput());
  unsigned rank = input.size();
  SmallVector<unsigned> rows;
  for (unsigned dim = 0; dim + 1 < rank; ++dim) {
    rows.push_back(builder.factor(input[dim], FactorKind::Parallel));
    builder.operandDim(0, dim, rows.back());
    builder.resultDim(0, dim, rows.back());
  }
  unsigned k = builder.factor(input.back(), FactorKind::Reduction);
  unsigned n = builder.factor(shapeOf(op.getResult()).back(), FactorKind::Parallel);
  builder.operandDim(0, rank - 1, k);
  bool transposed = op.getTransposeWeight();
  builder.operandDim(1, transposed ? 1 : 0, k);
  builder.operandDim(1, transposed ? 0 : 1, n);
  builder.resultDim(0, rank - 1, n);
  if (op.getBias()) {
    builder.operandDim(2, shapeOf(op.getBias()).size() - 1, n);
    builder.rule.partialOperands.push_back({2, k});
  }
  return builder.finish();
}

OpShardingRule matmul(graph::MatMulOp op) {
  ArrayRef<int64_t> lhs = shapeOf(op.getLhs()), rhs = shapeOf(op.getRhs());
  RuleBuilder builder(op);
  if (lhs.size() < 2 || rhs.size() < 2)
    return builder.finish();
  ArrayRef<int64_t> result = shapeOf(op.getResult());
  unsigned rank = result.size();
  SmallVector<unsigned> factors;
  for (unsigned dim = 0; dim < rank; ++dim) {
    factors.push_back(builder.factor(result[dim], FactorKind::Parallel));
    builder.resultDim(0, dim, factors.back());
  }
  // Batch dims broadcast against the result's.
  for (auto [operand, shape] : llvm::enumerate(SmallVector<ArrayRef<int64_t>>{lhs, rhs})) {
    int64_t offset = int64_t(rank) - int64_t(shape.size());
    for (unsigned dim = 0; dim + 2 < shape.size(); ++dim)
      if (shape[dim] == result[offset + dim])
        builder.operandDim(operand, dim, factors[offset + dim]);
  }
  unsigned k = builder.factor(lhs.back(), FactorKind::Reduction);
  builder.operandDim(0, lhs.size() - 2, factors[rank - 2]);
  builder.operandDim(0, lhs.size() - 1, k);
  builder.operandDim(1, rhs.size() - 2, k);
  builder.operandDim(1, rhs.size() - 1, factors[rank - 1]);
  return builder.finish();
}

template <typename ReduceOp> OpShardingRule reduce(ReduceOp op, FactorKind reducedKind) {
  RuleBuilder builder(op);
  ArrayRef<int64_t> input = shapeOf(op.getInput());
  ArrayRef<int64_t> axes = op.getAxes();
  unsigned resultDim = 0;
  for (unsigned dim = 0; dim < input.size(); ++dim) {
    bool reduced = llvm::is_contained(axes, int64_t(dim)) || axes.empty();
    unsigned factor = builder.factor(input[dim], reduced ? reducedKind : FactorKind::Parallel);
    builder.operandDim(0, dim, factor);
    if (!reduced)
      builder.resultDim(0, resultDim, factor);
    if (!reduced || op.getKeepdims())
      ++resultDim;
  }
  return builder.finish();
}

/// Dims at and after `axis` are normalized over: whole; scale and bias
/// cover exactly those dims.
OpShardingRule normalization(Operation *op, int64_t axis) {
  RuleBuilder builder(op);
  ArrayRef<int64_t> input = shapeOf(op->getOperand(0));
  SmallVector<unsigned> factors;
  for (unsigned dim = 0; dim < input.size(); ++dim) {
    factors.push_back(builder.factor(input[dim], int64_t(dim) < axis ? FactorKind::Parallel
                                                                     : FactorKind::Replicated));
    builder.operandDim(0, dim, factors.back());
    builder.resultDim(0, dim, factors.back());
  }
  builder.broadcastOperands(factors, /*firstOperand=*/1);
  return builder.finish();
}

OpShardingRule transpose(graph::TransposeOp op) {
  RuleBuilder builder(op);
  ArrayRef<int64_t> input = shapeOf(op.getInput());
  for (auto [resultDim, inputDim] : llvm::enumerate(op.getPerm())) {
    unsigned factor = builder.factor(input[inputDim], FactorKind::Parallel);
    builder.operandDim(0, inputDim, factor);
    builder.resultDim(0, resultDim, factor);
  }
  return builder.finish();
}

/// Reshape maps groups of dims whose products match; inside a group the
/// common refinement of both sides' sizes gives the factors (compound
/// dims), so [b, s, 64] -> [b, s, 4, 16] maps dim 2 to the factors 4 and 16.
/// A group with no common refinement stays whole.
OpShardingRule reshape(graph::ReshapeOp op) {
  RuleBuilder builder(op);
  ArrayRef<int64_t> in = shapeOf(op.getInput()), out = shapeOf(op.getResult());
  if (llvm::is_contained(in, 0))
    return builder.finish();
  // Both sides hold the same elements; a common divisor of what is left of
  // the current input and output dims is a major factor of both.
  unsigned i = 0, o = 0;
  int64_t inLeft = 0, outLeft = 0;
  while (true) {
    for (; inLeft == 0 && i < in.size(); ++i)
      if (in[i] != 1) {
        inLeft = in[i];
        break;
      }
    for (; outLeft == 0 && o < out.size(); ++o)
      if (out[o] != 1) {
        outLeft = out[o];
        break;
      }
    if (inLeft == 0 && outLeft == 0)
      return builder.finish();
    int64_t size = std::gcd(inLeft, outLeft);
    if (inLeft == 0 || outLeft == 0 || size == 1)
      return RuleBuilder(op).finish();
    unsigned factor = builder.factor(size, FactorKind::Parallel);
    builder.rule.operands[0][i].push_back(factor);
    builder.rule.results[0][o].push_back(factor);
    inLeft /= size;
    outLeft /= size;
    if (inLeft == 1) {
      inLeft = 0;
      ++i;
    }
    if (outLeft == 1) {
      outLeft = 0;
      ++o;
    }
  }
}

OpShardingRule slice(graph::SliceOp op) {
  RuleBuilder builder(op);
  ArrayRef<int64_t> input = shapeOf(op.getInput());
  for (unsigned dim = 0; dim < input.size(); ++dim) {
    bool whole =
        op.getStarts()[dim] == 0 && op.getEnds()[dim] >= input[dim] && op.getSteps()[dim] == 1;
    if (!whole)
      continue; // finish() gives each side its own Replicated factor
    unsigned factor = builder.factor(input[dim], FactorKind::Parallel);
    builder.operandDim(0, dim, factor);
    builder.resultDim(0, dim, factor);
  }
  return builder.finish();
}

/// Concat and split: every dim but `axis` is shared by all tensors.
OpShardingRule joinOrSplit(Operation *op, int64_t axis) {
  RuleBuilder builder(op);
  ArrayRef<int64_t> shape = shapeOf(op->getResult(0));
  for (unsigned dim = 0; dim < shape.size(); ++dim) {
    if (int64_t(dim) == axis)
      continue;
    unsigned factor = builder.factor(shape[dim], FactorKind::Parallel);
    for (unsigned operand = 0; operand < op->getNumOperands(); ++operand)
      builder.operandDim(operand, dim, factor);
    for (unsigned result = 0; result < op->getNumResults(); ++result)
      builder.resultDim(result, dim, factor);
  }
  return builder.finish();
}

OpShardingRule gather(graph::GatherOp op) {
  RuleBuilder builder(op);
  ArrayRef<int64_t> data = shapeOf(op.getData()), indices = shapeOf(op.getIndices());
  int64_t axis = op.getAxis();
  unsigned resultDim = 0;
  for (int64_t dim = 0; dim < int64_t(data.size()); ++dim) {
    if (dim == axis) {
      for (unsigned index = 0; index < indices.size(); ++index) {
        unsigned factor = builder.factor(indices[index], FactorKind::Parallel);
        builder.operandDim(1, index, factor);
        builder.resultDim(0, resultDim++, factor);
      }
      continue;
    }
    unsigned factor = builder.factor(data[dim], FactorKind::Parallel);
    builder.operandDim(0, dim, factor);
    builder.resultDim(0, resultDim++, factor);
  }
  return builder.finish();
}

OpShardingRule attention(graph::AttentionOp op) {
  RuleBuilder builder(op);
  ArrayRef<int64_t> q = shapeOf(op.getQuery()), k = shapeOf(op.getKey()),
                    v = shapeOf(op.getValue());
  unsigned rank = q.size();
  if (rank < 3 || k.size() != rank || v.size() != rank)
    return builder.finish();
  unsigned batchDims = rank - 3, h = rank - 3, s = rank - 2, d = rank - 1;
  SmallVector<unsigned> resultFactors; // per result dim, the major factor
  for (unsigned dim = 0; dim < batchDims; ++dim) {
    unsigned factor = builder.factor(q[dim], FactorKind::Parallel);
    for (unsigned operand = 0; operand < 3; ++operand)
      builder.operandDim(operand, dim, factor);
    builder.resultDim(0, dim, factor);
  }
  // Query head h reads key/value head h / (Hq / Hkv): the query's head dim is
  // (kv head, group), so a split of the kv heads keeps each group together.
  int64_t kvHeads = k[h], group = q[h] / std::max<int64_t>(k[h], 1);
  unsigned kvHead = builder.factor(kvHeads, FactorKind::Parallel);
  unsigned groupFactor = builder.factor(group, FactorKind::Parallel);
  // Causal masking is by global position: a split of the queries would need
  // each device's offset, so they stay whole.
  unsigned queries =
      builder.factor(q[s], op.getCausal() ? FactorKind::Replicated : FactorKind::Parallel);
  unsigned keys = builder.factor(k[s], FactorKind::Replicated);
  unsigned depth = builder.factor(q[d], FactorKind::Replicated);
  unsigned valueDepth = builder.factor(v[d], FactorKind::Parallel);
  auto heads = [&](TensorFactors &tensor, unsigned dim, int64_t size) {
    if (size == 1)
      return;
    if (kvHeads != 1)
      tensor[dim].push_back(kvHead);
    if (group != 1)
      tensor[dim].push_back(groupFactor);
  };
  heads(builder.rule.operands[0], h, q[h]);
  heads(builder.rule.results[0], h, q[h]);
  builder.operandDim(1, h, kvHead);
  builder.operandDim(2, h, kvHead);
  builder.operandDim(0, s, queries);
  builder.resultDim(0, s, queries);
  builder.operandDim(1, s, keys);
  builder.operandDim(2, s, keys);
  builder.operandDim(0, d, depth);
  builder.operandDim(1, d, depth);
  builder.operandDim(2, d, valueDepth);
  builder.resultDim(0, d, valueDepth);
  if (Value mask = op.getMask()) {
    // [B..., Hq, Sq, Sk], broadcasting from the right.
    ArrayRef<int64_t> shape = shapeOf(mask);
    int64_t offset = int64_t(rank) - int64_t(shape.size());
    for (unsigned dim = 0; dim < shape.size(); ++dim) {
      int64_t full = offset + dim;
      if (full < 0 || shape[dim] == 1)
        continue;
      TensorFactors &tensor = builder.rule.operands[3];
      if (full < int64_t(batchDims) && shape[dim] == q[full])
        tensor[dim] = builder.rule.results[0][full];
      else if (full == h && shape[dim] == q[h])
        heads(tensor, dim, q[h]);
      else if (full == s && shape[dim] == q[s])
        tensor[dim].push_back(queries);
      else if (full == d && shape[dim] == k[s])
        tensor[dim].push_back(keys);
    }
  }
  return builder.finish();
}

OpShardingRule rotary(graph::RotaryOp op) {
  RuleBuilder builder(op);
  ArrayRef<int64_t> input = shapeOf(op.getInput());
  SmallVector<unsigned> factors;
  for (unsigned dim = 0; dim < input.size(); ++dim) {
    bool features = dim + 1 == input.size();
    factors.push_back(
        builder.factor(input[dim], features ? FactorKind::Replicated : FactorKind::Parallel));
    builder.operandDim(0, dim, factors.back());
    builder.resultDim(0, dim, factors.back());
  }
  // cos and sin broadcast against the input's leading dims; their feature
  // dim (R <= D) keeps its own whole factor.
  for (unsigned operand = 1; operand < 3; ++operand) {
    ArrayRef<int64_t> shape = shapeOf(op->getOperand(operand));
    int64_t offset = int64_t(input.size()) - int64_t(shape.size());
    for (unsigned dim = 0; dim + 1 < shape.size(); ++dim)
      if (offset + int64_t(dim) >= 0 && shape[dim] == input[offset + dim])
        builder.operandDim(operand, dim, factors[offset + dim]);
  }
  return builder.finish();
}

OpShardingRule expand(graph::ExpandOp op) {
  RuleBuilder builder(op);
  SmallVector<unsigned> factors = builder.resultFactors();
  builder.broadcastOperands(factors);
  return builder.finish();
}

OpShardingRule scatterElements(graph::ScatterElementsOp op) {
  RuleBuilder builder(op);
  ArrayRef<int64_t> data = shapeOf(op.getData()), indices = shapeOf(op.getIndices());
  for (unsigned dim = 0; dim < data.size(); ++dim) {
    if (int64_t(dim) == op.getAxis() || data[dim] != indices[dim])
      continue;
    unsigned factor = builder.factor(data[dim], FactorKind::Parallel);
    for (unsigned operand = 0; operand < 3; ++operand)
      builder.operandDim(operand, dim, factor);
    builder.resultDim(0, dim, factor);
  }
  builder.rule.linearOperands = scatterLinearOperands(op, op.getReduction());
  return builder.finish();
}

/// GatherElements: dims other than `axis` where data and indices agree are
/// one factor of all three tensors (each position reads its own line of
/// data); the indices' axis is shared with the result, while data's axis,
/// which any index may read, stays whole.
OpShardingRule gatherElements(graph::GatherElementsOp op) {
  RuleBuilder builder(op);
  ArrayRef<int64_t> data = shapeOf(op.getData()), indices = shapeOf(op.getIndices());
  for (unsigned dim = 0; dim < data.size(); ++dim) {
    bool axis = int64_t(dim) == op.getAxis();
    if (!axis && data[dim] != indices[dim])
      continue; // indices read a corner of data there: each keeps its own factor
    unsigned factor = builder.factor(indices[dim], FactorKind::Parallel);
    if (!axis)
      builder.operandDim(0, dim, factor);
    builder.operandDim(1, dim, factor);
    builder.resultDim(0, dim, factor);
  }
  return builder.finish();
}

/// GatherND: the batch dims are shared by data, indices and result; the
/// tuples' positions by indices and result; data's trailing (sliced) dims by
/// data and result. The dims the tuples index and the tuple dim stay whole.
OpShardingRule gatherNd(graph::GatherNdOp op) {
  RuleBuilder builder(op);
  ArrayRef<int64_t> data = shapeOf(op.getData()), indices = shapeOf(op.getIndices());
  unsigned batch = op.getBatchDims(), positions = indices.size() - 1;
  unsigned sliced = batch + indices.back();
  for (unsigned dim = 0; dim < positions; ++dim) {
    unsigned factor = builder.factor(indices[dim], FactorKind::Parallel);
    if (dim < batch)
      builder.operandDim(0, dim, factor);
    builder.operandDim(1, dim, factor);
    builder.resultDim(0, dim, factor);
  }
  for (unsigned dim = sliced; dim < data.size(); ++dim) {
    unsigned factor = builder.factor(data[dim], FactorKind::Parallel);
    builder.operandDim(0, dim, factor);
    builder.resultDim(0, positions + dim - sliced, factor);
  }
  return builder.finish();
}

/// ScatterND: data's trailing dims after the k indexed ones are copied slice
/// by slice, so they are shared by data, updates and result. The indexed
/// dims (any tuple may hit any of them) stay whole. The tuples' positions
/// (several may hit one target) stay whole too, but for a sum into zeros
/// (an embedding's gradient): each device's tuples then give a partial sum
/// of the result, as a contraction does.
OpShardingRule scatterNd(graph::ScatterNdOp op) {
  RuleBuilder builder(op);
  ArrayRef<int64_t> data = shapeOf(op.getData()), indices = shapeOf(op.getIndices());
  unsigned k = indices.back(), positions = indices.size() - 1;
  if (op.getReduction() == graph::ScatterReduction::add && isZeros(op.getData()))
    for (unsigned dim = 0; dim < positions; ++dim) {
      unsigned factor = builder.factor(indices[dim], FactorKind::Reduction);
      builder.operandDim(1, dim, factor);
      builder.operandDim(2, dim, factor);
    }
  for (unsigned dim = k; dim < data.size(); ++dim) {
    unsigned factor = builder.factor(data[dim], FactorKind::Parallel);
    builder.operandDim(0, dim, factor);
    builder.operandDim(2, positions + dim - k, factor);
    builder.resultDim(0, dim, factor);
  }
  builder.rule.linearOperands = scatterLinearOperands(op, op.getReduction());
  return builder.finish();
}

int64_t lastDims(Operation *op, int64_t count) {
  return int64_t(shapeOf(op->getResult(0)).size()) - count;
}

SmallVector<int64_t> range(int64_t from, int64_t to) {
  SmallVector<int64_t> dims;
  for (int64_t dim = std::max<int64_t>(from, 0); dim < to; ++dim)
    dims.push_back(dim);
  return dims;
}

} // namespace

bool hasOnlyTensors(Operation *op) {
  auto ranked = [](Type type) { return isa<RankedTensorType>(type); };
  return llvm::all_of(op->getOperandTypes(), ranked) && llvm::all_of(op->getResultTypes(), ranked);
}

namespace {

/// Ops that move, select or sum elements are linear in what they move: a
/// partial sum goes through them and is completed later, once.
SmallVector<unsigned, 2> movementLinearOperands(Operation *op) {
  if (isa<graph::ConcatOp>(op))
    return llvm::to_vector<2>(llvm::seq<unsigned>(0, op->getNumOperands()));
  if (isa<graph::ReshapeOp, graph::TransposeOp, graph::ExpandOp, graph::SliceOp, graph::SplitOp,
          graph::GatherOp, graph::GatherElementsOp, graph::GatherNdOp, graph::ReduceSumOp,
          graph::ReduceMeanOp>(op))
    return {0};
  return {};
}

/// graph.moe: the tokens parallel; the experts and each expert's width are
/// summed over (a device holding some experts, or part of each expert's
/// width, makes a partial sum of the output); the tokens route to the
/// experts (ShardingRule.h).
OpShardingRule routedExperts(graph::MoeOp op) {
  RuleBuilder builder(op);
  unsigned tokens = builder.factor(op.getInput().getType().getDimSize(0), FactorKind::Parallel);
  for (unsigned operand : {0u, 1u, 2u})
    builder.operandDim(operand, 0, tokens);
  builder.resultDim(0, 0, tokens);
  auto weightShape = [&](unsigned position) {
    return cast<RankedTensorType>(op.getWeights()[position].getType()).getShape();
  };
  unsigned experts = builder.factor(weightShape(0)[0], FactorKind::Reduction);
  // gate and up [E, H, F], down [E, F, H]; the other way round transposed.
  unsigned down = op.getWeights().size() - 1;
  unsigned width = builder.factor(weightShape(down)[op.getTransposeWeights() ? 2 : 1],
                                  FactorKind::Reduction);
  for (unsigned position = 0; position <= down; ++position) {
    unsigned operand = 3 + position;
    builder.operandDim(operand, 0, experts);
    bool widthLast = (position == down) == op.getTransposeWeights();
    builder.operandDim(operand, widthLast ? 2 : 1, width);
  }
  OpShardingRule rule = builder.finish();
  rule.routed = {tokens, experts};
  return rule;
}

/// graph.assign: the value is written block by block into the storage it
/// replaces, so both are split alike (each rank writes the block it holds).
OpShardingRule assign(graph::AssignOp op) {
  RuleBuilder builder(op);
  for (auto [dim, size] : llvm::enumerate(shapeOf(op.getTarget()))) {
    unsigned factor = builder.factor(size, FactorKind::Parallel);
    builder.operandDim(0, dim, factor);
    builder.operandDim(1, dim, factor);
  }
  return builder.finish();
}

OpShardingRule ruleOf(Operation *op) {
  return llvm::TypeSwitch<Operation *, OpShardingRule>(op)
      .Case<graph::NegOp, graph::AbsOp, graph::SqrtOp, graph::RsqrtOp, graph::ReciprocalOp,
            graph::ExpOp, graph::LogOp, graph::CosOp, graph::SinOp, graph::ErfOp, graph::TanhOp,
            graph::SigmoidOp, graph::ReluOp, graph::SiluOp, graph::NotOp, graph::GeluOp,
            graph::FloorOp, graph::CeilOp, graph::RoundOp, graph::SignOp, graph::IsNanOp,
            graph::IsInfOp, graph::ModOp, graph::CastOp, graph::AddOp, graph::SubOp, graph::MulOp,
            graph::DivOp, graph::MaxOp, graph::MinOp, graph::AndOp, graph::OrOp, graph::PowOp,
            graph::CompareOp, graph::WhereOp>([](Operation *op) { return elementwise(op); })
      .Case([](graph::LinearOp op) { return linear(op); })
      .Case([](graph::MatMulOp op) { return matmul(op); })
      .Case([](graph::ReduceSumOp op) { return reduce(op, FactorKind::Reduction); })
      .Case<graph::ReduceMeanOp, graph::ReduceMaxOp, graph::ReduceMinOp>(
          [](auto op) { return reduce(op, FactorKind::Replicated); })
      .Case([](graph::SoftmaxOp op) { return sameShape(op, {int64_t(op.getAxis())}); })
      .Case([](graph::TopKOp op) { return sameShape(op, {int64_t(op.getAxis())}); })
      .Case([](graph::CumSumOp op) { return sameShape(op, {int64_t(op.getAxis())}); })
      .Case(
          [](graph::TriluOp op) { return sameShape(op, range(lastDims(op, 2), lastDims(op, 0))); })
      .Case([](graph::LayerNormOp op) { return normalization(op, op.getAxis()); })
      .Case([](graph::RmsNormOp op) { return normalization(op, op.getAxis()); })
      .Case([](graph::TransposeOp op) { return transpose(op); })
      .Case([](graph::ReshapeOp op) { return reshape(op); })
      .Case([](graph::SliceOp op) { return slice(op); })
      .Case([](graph::ConcatOp op) { return joinOrSplit(op, op.getAxis()); })
      .Case([](graph::SplitOp op) { return joinOrSplit(op, op.getAxis()); })
      .Case([](graph::GatherOp op) { return gather(op); })
      .Case([](graph::AttentionOp op) { return attention(op); })
      .Case([](graph::RotaryOp op) { return rotary(op); })
      .Case([](graph::ExpandOp op) { return expand(op); })
      .Case([](graph::ScatterElementsOp op) { return scatterElements(op); })
      .Case([](graph::MoeOp op) { return routedExperts(op); })
      .Case([](graph::GatherElementsOp op) { return gatherElements(op); })
      .Case([](graph::GatherNdOp op) { return gatherNd(op); })
      .Case([](graph::ScatterNdOp op) { return scatterNd(op); })
      .Case([](graph::AssignOp op) { return assign(op); })
      .Default([](Operation *op) { return RuleBuilder(op).finish(); });
}

} // namespace

OpShardingRule getShardingRule(Operation *op) {
  if (!hasOnlyTensors(op))
    return OpShardingRule{};
  OpShardingRule rule = ruleOf(op);
  if (rule.linearOperands.empty())
    rule.linearOperands = movementLinearOperands(op);
  return rule;
}

std::string OpShardingRule::describe() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto name = [](unsigned factor) {
    std::string letters;
    for (unsigned n = factor;; n = n / 26 - 1) {
      letters.insert(letters.begin(), char('a' + n % 26));
      if (n < 26)
        break;
    }
    return letters;
  };
  auto tensors = [&](ArrayRef<TensorFactors> list) {
    os << "(";
    for (auto [index, tensor] : llvm::enumerate(list)) {
      os << (index ? ", " : "") << "[";
      for (auto [dim, factors] : llvm::enumerate(tensor)) {
        os << (dim ? ", " : "");
        if (factors.empty())
          os << "1";
        for (auto [position, factor] : llvm::enumerate(factors))
          os << (position ? "*" : "") << name(factor);
      }
      os << "]";
    }
    os << ")";
  };
  tensors(operands);
  os << " -> ";
  tensors(results);
  for (auto [index, factor] : llvm::enumerate(factors)) {
    os << (index ? ", " : " {") << name(index) << "=" << factor.size;
    if (factor.kind == FactorKind::Reduction)
      os << " reduction";
    if (factor.kind == FactorKind::Replicated)
      os << " whole";
  }
  if (!factors.empty())
    os << "}";
  for (auto [operand, factor] : partialOperands)
    os << " operand " << operand << " partial over " << name(factor);
  for (auto [index, operand] : llvm::enumerate(linearOperands))
    os << (index ? ", " : " linear in operand ") << operand;
  if (routed)
    os << " routes " << name(routed->first) << " to " << name(routed->second);
  return text;
}

} // namespace shardc::sharding
