//===- MinSumSolver.h - exact minimum of a sum of small cost tables -*- C++ -*-===//
//
// The search's optimizer: discrete variables (one per op, its strategies),
// unary costs (compute) and pairwise costs (the reshard between a producer's
// and a consumer's choice). Solved exactly by variable elimination, a
// dynamic program, after dropping the values no best assignment needs; of
// two greedy orders (smallest table first, fewest new ties first) the
// cheaper runs: on a chain of transformer layers every table stays small, so
// the time grows linearly with the number of layers. Plain C++, so it is
// unit-tested against brute force.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_SHARDING_MINSUMSOLVER_H
#define SHARDC_PASSES_SHARDING_MINSUMSOLVER_H

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace shardc::sharding {

class MinSumProblem {
public:
  /// A variable with one cost per value (infinity forbids the value).
  unsigned addVariable(std::vector<double> unary);
  /// Adds `table` (|a| x |b|, row-major, a's value major) to the cost.
  void addPairwise(unsigned a, unsigned b, const std::vector<double> &table);

  unsigned numVariables() const { return domains.size(); }
  double cost(const std::vector<unsigned> &values) const;

  struct Solution {
    std::vector<unsigned> values;
    double cost;
  };
  /// The exact minimum, or an error when an elimination would need a table
  /// of more than `maxTableEntries` entries (`error` names the variable).
  /// Values no finite assignment can take are dropped first and variables
  /// left with one value are fixed, so only real choices are eliminated.
  std::optional<Solution> solve(size_t maxTableEntries, std::string &error) const;

private:
  /// Per variable and value, whether some best assignment may take it: a
  /// finite value with a finite partner in every pair (to a fixpoint), not
  /// dominated by another value of its variable.
  std::vector<std::vector<bool>> survivingValues() const;
  /// Variable elimination over the whole problem as it is.
  std::optional<Solution> eliminate(size_t maxTableEntries, std::string &error) const;

  std::vector<unsigned> domains;
  std::vector<std::vector<double>> unary;
  struct Pair {
    unsigned a, b;
    std::vector<double> table;
  };
  std::vector<Pair> pairs;
};

} // namespace shardc::sharding

#endif
