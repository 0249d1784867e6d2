//===- Einsum.cpp - importer of ONNX Einsum -------------------------------===//
//
// An equation is imported as graph ops in three steps:
//  1. per operand: a label repeated inside it takes the diagonal (the
//     repeated dims moved last, flattened, and sliced with the stride that
//     walks the diagonal); a size-1 dim that broadcasts against a larger one
//     elsewhere is dropped; labels no other operand and not the output
//     use are summed out;
//  2. operands are folded left to right, two at a time: labels both hold and
//     something later needs are batch dims, labels both hold that nothing
//     later needs are contracted by a matmul ([batch, M, K] @ [batch, K, N]),
//     or with nothing to contract the two are multiplied with broadcasting;
//  3. what is left is summed over the labels the output lacks and transposed
//     to the output's order.
// Labels are letters (case-sensitive); "..." stands for the same trailing
// run of broadcast dims in every operand.
//
//===----------------------------------------------------------------------===//
#include "compiler/Import/NodeContext.h"
#include "compiler/Import/OpRegistry.h"
#include "compiler/Import/Ops/Decompose.h"

#include "dialects/Graph/TypeUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace shardc::graph;

namespace shardc::import {
namespace {

/// Labels: 'A'-'Z' are 0-25 and 'a'-'z' 26-51, so their order is ASCII's
/// (the implicit output's); the dims under "..." are 52, 53, ... in order.
constexpr int kEllipsisLabel = 52;
using Labels = SmallVector<int>;

std::string labelName(int label) {
  if (label >= kEllipsisLabel)
    return "...(" + std::to_string(label - kEllipsisLabel) + ")";
  return std::string(1, label < 26 ? char('A' + label) : char('a' + label - 26));
}

/// One side of the equation split into letters, with where "..." sits.
struct Term {
  Labels letters;
  /// Position of "..." among the letters, if any.
  std::optional<size_t> ellipsis;
};

/// Parses one term ("bij", "...ij", "b...") or reports why it is malformed.
FailureOr<Term> parseTerm(NodeContext &node, StringRef text, StringRef equation) {
  Term term;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (text.substr(i).starts_with("...")) {
      if (term.ellipsis)
        return node.error() << "equation '" << equation << "' has two ellipses in term '" << text
                            << "'; expected at most one";
      term.ellipsis = term.letters.size();
      i += 3;
      continue;
    }
    if (!llvm::isAlpha(c))
      return node.error() << "equation '" << equation << "' has '" << c << "' in term '" << text
                          << "'; expected letters, '...', ',' and '->'";
    term.letters.push_back(llvm::isUpper(c) ? c - 'A' : c - 'a' + 26);
    ++i;
  }
  return term;
}

/// An operand while the equation is computed: its value and a label per dim.
struct Operand {
  Value value;
  Labels labels;
};

class EinsumBuilder {
public:
  EinsumBuilder(NodeContext &node, std::string equation)
      : node(node), equation(std::move(equation)) {}

  LogicalResult build();

private:
  LogicalResult parse();
  LogicalResult recordSize(int label, int64_t size, unsigned operand);
  LogicalResult takeDiagonals(Operand &operand);
  LogicalResult dropBroadcastDims(Operand &operand);
  /// Sums `operand` over its labels that are not in `keep`.
  LogicalResult sumExcept(Operand &operand, const llvm::SmallSetVector<int, 16> &keep);
  FailureOr<Operand> contract(Operand lhs, Operand rhs, const llvm::SmallSetVector<int, 16> &keep);
  /// Reorders (and reshapes) `operand` to `order`, whose labels it holds.
  FailureOr<Value> arrange(const Operand &operand, const Labels &order, ArrayRef<int64_t> shape);
  SmallVector<int64_t> sizesOf(const Labels &labels) const;

  NodeContext &node;
  std::string equation;
  SmallVector<Operand> operands;
  Labels output;
  llvm::DenseMap<int, int64_t> sizes;
};

LogicalResult EinsumBuilder::parse() {
  std::string compact;
  for (char c : equation)
    if (c != ' ')
      compact.push_back(c);
  StringRef text(compact);
  auto [lhs, rhs] = text.split("->");
  bool explicitOutput = text.contains("->");
  SmallVector<StringRef> termTexts;
  lhs.split(termTexts, ',');
  if (termTexts.size() != node.numInputs())
    return node.error() << "equation '" << equation << "' has " << termTexts.size()
                        << " input terms; expected one per input (" << node.numInputs() << ")";

  SmallVector<Term> terms;
  int64_t ellipsisRank = 0;
  for (auto [index, termText] : llvm::enumerate(termTexts)) {
    auto term = parseTerm(node, termText, equation);
    if (failed(term))
      return failure();
    int64_t rank = node.inputType(index).getRank();
    int64_t letters = static_cast<int64_t>(term->letters.size());
    if (term->ellipsis ? letters > rank : letters != rank)
      return node.error() << "term '" << termText << "' of equation '" << equation << "' names "
                          << letters << " dims; expected input " << index << "'s rank " << rank;
    if (term->ellipsis)
      ellipsisRank = std::max(ellipsisRank, rank - letters);
    terms.push_back(*term);
  }
  // "..." dims align from the right, as numpy broadcasting does.
  for (auto [index, term] : llvm::enumerate(terms)) {
    Operand operand{node.input(index), {}};
    int64_t rank = node.inputType(index).getRank();
    int64_t hidden = rank - static_cast<int64_t>(term.letters.size());
    for (size_t i = 0; i <= term.letters.size(); ++i) {
      if (term.ellipsis == i)
        for (int64_t k = ellipsisRank - hidden; k < ellipsisRank; ++k)
          operand.labels.push_back(kEllipsisLabel + static_cast<int>(k));
      if (i < term.letters.size())
        operand.labels.push_back(term.letters[i]);
    }
    for (auto [dim, label] : llvm::enumerate(operand.labels))
      if (failed(recordSize(label, node.inputType(index).getDimSize(dim), index)))
        return failure();
    operands.push_back(operand);
  }

  Labels ellipsisLabels;
  for (int64_t k = 0; k < ellipsisRank; ++k)
    ellipsisLabels.push_back(kEllipsisLabel + static_cast<int>(k));
  if (explicitOutput) {
    auto term = parseTerm(node, rhs, equation);
    if (failed(term))
      return failure();
    for (size_t i = 0; i <= term->letters.size(); ++i) {
      if (term->ellipsis == i)
        output.append(ellipsisLabels);
      if (i == term->letters.size())
        break;
      int label = term->letters[i];
      if (llvm::is_contained(output, label))
        return node.error() << "equation '" << equation << "' repeats '" << labelName(label)
                            << "' in its output; expected each output label once";
      if (!sizes.count(label))
        return node.error() << "equation '" << equation << "' has output label '"
                            << labelName(label) << "' that no input has";
      output.push_back(label);
    }
  } else {
    // Implicit: the "..." dims, then the letters used exactly once, in ASCII order.
    output = ellipsisLabels;
    SmallVector<int> uses(kEllipsisLabel, 0);
    for (const Term &term : terms)
      for (int label : term.letters)
        ++uses[label];
    for (int label = 0; label < kEllipsisLabel; ++label)
      if (uses[label] == 1)
        output.push_back(label);
  }
  return success();
}

LogicalResult EinsumBuilder::recordSize(int label, int64_t size, unsigned operand) {
  auto [found, inserted] = sizes.try_emplace(label, size);
  if (inserted || found->second == size || size == 1)
    return success();
  if (found->second == 1) {
    found->second = size;
    return success();
  }
  return node.error() << "label '" << labelName(label) << "' of equation '" << equation
                      << "' has size " << size << " in input " << operand << "; expected "
                      << found->second << " as in an earlier input";
}

SmallVector<int64_t> EinsumBuilder::sizesOf(const Labels &labels) const {
  SmallVector<int64_t> shape;
  for (int label : labels)
    shape.push_back(sizes.lookup(label));
  return shape;
}

LogicalResult EinsumBuilder::takeDiagonals(Operand &operand) {
  for (size_t i = 0; i < operand.labels.size(); ++i) {
    int label = operand.labels[i];
    SmallVector<int64_t> repeated;
    for (size_t j = i; j < operand.labels.size(); ++j)
      if (operand.labels[j] == label)
        repeated.push_back(static_cast<int64_t>(j));
    if (repeated.size() < 2)
      continue;
    RankedTensorType type = tensorType(operand.value);
    int64_t size = type.getDimSize(repeated.front());
    for (int64_t dim : repeated)
      if (type.getDimSize(dim) != size)
        return node.error() << "label '" << labelName(label) << "' repeats in one input over "
                            << "dims of sizes " << size << " and " << type.getDimSize(dim)
                            << "; expected equal sizes to take the diagonal";
    // Move the repeated dims last and flatten them: element (i, i, ..., i)
    // sits at i * (1 + n + n^2 + ...), so a slice with that step walks the diagonal.
    SmallVector<int64_t> perm, shape;
    Labels labels;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (!llvm::is_contained(repeated, d)) {
        perm.push_back(d);
        shape.push_back(type.getDimSize(d));
        labels.push_back(operand.labels[d]);
      }
    perm.append(repeated);
    int64_t flat = 1, stride = 0;
    for (size_t k = 0; k < repeated.size(); ++k) {
      stride += flat;
      flat *= size;
    }
    shape.push_back(flat);
    auto value = permute(node, operand.value, perm);
    value = succeeded(value) ? reshapeTo(node, *value, shape) : noValue();
    value = succeeded(value) ? sliceAxis(node, *value, static_cast<int64_t>(shape.size()) - 1, 0,
                                         flat, std::max<int64_t>(stride, 1))
                             : noValue();
    if (failed(value))
      return failure();
    labels.push_back(label);
    operand = {*value, labels};
    i = static_cast<size_t>(-1); // The labels moved: scan again from the start.
  }
  return success();
}

LogicalResult EinsumBuilder::dropBroadcastDims(Operand &operand) {
  RankedTensorType type = tensorType(operand.value);
  Labels kept;
  SmallVector<int64_t> shape;
  for (auto [dim, label] : llvm::enumerate(operand.labels)) {
    if (type.getDimSize(dim) == 1 && sizes.lookup(label) != 1)
      continue;
    kept.push_back(label);
    shape.push_back(type.getDimSize(dim));
  }
  auto value = reshapeTo(node, operand.value, shape);
  if (failed(value))
    return failure();
  operand = {*value, kept};
  return success();
}

LogicalResult EinsumBuilder::sumExcept(Operand &operand,
                                       const llvm::SmallSetVector<int, 16> &keep) {
  SmallVector<int64_t> axes;
  Labels kept;
  for (auto [dim, label] : llvm::enumerate(operand.labels)) {
    if (keep.contains(label))
      kept.push_back(label);
    else
      axes.push_back(static_cast<int64_t>(dim));
  }
  auto value = sumOver(node, operand.value, axes);
  if (failed(value))
    return failure();
  operand = {*value, kept};
  return success();
}

FailureOr<Value> EinsumBuilder::arrange(const Operand &operand, const Labels &order,
                                        ArrayRef<int64_t> shape) {
  SmallVector<int64_t> perm;
  for (int label : order)
    perm.push_back(llvm::find(operand.labels, label) - operand.labels.begin());
  auto value = permute(node, operand.value, perm);
  return succeeded(value) ? reshapeTo(node, *value, shape) : noValue();
}

FailureOr<Operand> EinsumBuilder::contract(Operand lhs, Operand rhs,
                                           const llvm::SmallSetVector<int, 16> &keep) {
  // What only one side has and nothing later needs is summed on that side.
  llvm::SmallSetVector<int, 16> lhsKeep(keep), rhsKeep(keep);
  lhsKeep.insert(rhs.labels.begin(), rhs.labels.end());
  rhsKeep.insert(lhs.labels.begin(), lhs.labels.end());
  if (failed(sumExcept(lhs, lhsKeep)) || failed(sumExcept(rhs, rhsKeep)))
    return failure();
  Labels batch, contracted, lhsOnly, rhsOnly;
  for (int label : lhs.labels) {
    if (!llvm::is_contained(rhs.labels, label))
      lhsOnly.push_back(label);
    else if (keep.contains(label))
      batch.push_back(label);
    else
      contracted.push_back(label);
  }
  for (int label : rhs.labels)
    if (!llvm::is_contained(lhs.labels, label))
      rhsOnly.push_back(label);
  auto product = [](ArrayRef<int64_t> dims) {
    int64_t total = 1;
    for (int64_t dim : dims)
      total *= dim;
    return total;
  };
  SmallVector<int64_t> batchShape = sizesOf(batch), lhsShape = sizesOf(lhsOnly),
                       rhsShape = sizesOf(rhsOnly);
  Labels resultLabels = batch;
  resultLabels.append(lhsOnly);
  resultLabels.append(rhsOnly);
  SmallVector<int64_t> resultShape = sizesOf(resultLabels);

  if (contracted.empty()) {
    // An outer product over the batch: [batch, lhs, 1...] * [batch, 1..., rhs].
    Labels lhsOrder = batch, rhsOrder = batch;
    lhsOrder.append(lhsOnly);
    rhsOrder.append(rhsOnly);
    SmallVector<int64_t> lhsTarget(batchShape), rhsTarget(batchShape);
    lhsTarget.append(lhsShape);
    lhsTarget.append(rhsOnly.size(), 1);
    rhsTarget.append(lhsOnly.size(), 1);
    rhsTarget.append(rhsShape);
    auto left = arrange(lhs, lhsOrder, lhsTarget);
    auto right = succeeded(left) ? arrange(rhs, rhsOrder, rhsTarget) : noValue();
    auto value = succeeded(right) ? node.create<MulOp>(ValueRange{*left, *right}) : noValue();
    if (failed(value))
      return failure();
    return Operand{*value, resultLabels};
  }

  // [batch, M, K] @ [batch, K, N]. Without batch dims the lhs keeps its own
  // dims ([..., K] @ [K, N]), the form raising recognizes as a linear layer.
  int64_t k = product(sizesOf(contracted));
  Labels lhsOrder = batch, rhsOrder = batch;
  lhsOrder.append(lhsOnly);
  lhsOrder.append(contracted);
  rhsOrder.append(contracted);
  rhsOrder.append(rhsOnly);
  SmallVector<int64_t> lhsTarget(batchShape), rhsTarget(batchShape);
  if (batch.empty() && !lhsOnly.empty())
    lhsTarget.append(lhsShape);
  else
    lhsTarget.push_back(product(lhsShape));
  lhsTarget.push_back(k);
  rhsTarget.push_back(k);
  rhsTarget.push_back(product(rhsShape));
  auto left = arrange(lhs, lhsOrder, lhsTarget);
  auto right = succeeded(left) ? arrange(rhs, rhsOrder, rhsTarget) : noValue();
  auto value = succeeded(right) ? node.create<MatMulOp>(ValueRange{*left, *right}) : noValue();
  value = succeeded(value) ? reshapeTo(node, *value, resultShape) : noValue();
  if (failed(value))
    return failure();
  return Operand{*value, resultLabels};
}

LogicalResult EinsumBuilder::build() {
  if (failed(parse()))
    return failure();
  for (Operand &operand : operands)
    if (failed(takeDiagonals(operand)) || failed(dropBroadcastDims(operand)))
      return failure();
  Type element = tensorType(operands.front().value).getElementType();
  for (auto [index, operand] : llvm::enumerate(operands))
    if (tensorType(operand.value).getElementType() != element)
      return node.error() << "input " << index << " has element type "
                          << tensorType(operand.value).getElementType() << "; expected " << element
                          << " as input 0";

  // Labels still needed after operand i: the output's and later operands'.
  auto neededAfter = [&](size_t i) {
    llvm::SmallSetVector<int, 16> keep(output.begin(), output.end());
    for (size_t j = i + 1; j < operands.size(); ++j)
      keep.insert(operands[j].labels.begin(), operands[j].labels.end());
    return keep;
  };
  Operand result = operands.front();
  for (size_t i = 1; i < operands.size(); ++i) {
    auto next = contract(result, operands[i], neededAfter(i));
    if (failed(next))
      return failure();
    result = *next;
  }
  llvm::SmallSetVector<int, 16> keep(output.begin(), output.end());
  if (failed(sumExcept(result, keep)))
    return failure();
  return node.define(arrange(result, output, sizesOf(output)));
}

LogicalResult importEinsum(NodeContext &node) {
  auto equation = node.stringAttr("equation", "");
  if (failed(equation))
    return failure();
  if (node.numInputs() == 0)
    return node.error() << "Einsum has no inputs; expected at least one";
  if (failed(node.requireInputs(node.numInputs())))
    return failure();
  return EinsumBuilder(node, *equation).build();
}

} // namespace

void registerEinsumImporters(OpImporterMap &map) { map["Einsum"] = {importEinsum, 12}; }

} // namespace shardc::import
