//===- EliminationGraph.h - the interaction graph variable elimination changes -*- C++ -*-===//
//
// Two variables of a min-sum problem are neighbours when a table holds
// both; eliminating a variable ties its neighbours together. The greedy
// orders of MinSumSolver.cpp simulate that on this graph, scoring each
// variable by the entries of the table its elimination builds or by its
// fill: the value pairs of its neighbours not yet tied, which its
// elimination would tie (entries the new edges bring into later tables).
//
// The fills are kept by what each elimination changes, not recomputed: a
// hub (a value every optimizer update reads, one neighbour per weight)
// would cost its degree times its neighbours' degrees at every elimination
// near it, seconds on a GPT-3-sized training step. Fills are sums of
// products of domain sizes, integers exact in a double, so the kept fill
// equals the recomputed one exactly (EliminationGraphTest checks it).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_SHARDING_ELIMINATIONGRAPH_H
#define SHARDC_PASSES_SHARDING_ELIMINATIONGRAPH_H

#include <cstddef>
#include <set>
#include <vector>

namespace shardc::sharding {

class EliminationGraph {
public:
  /// `neighbours[v]`: the variables sharing a table with v (symmetric, no
  /// v itself). Fills are kept only when `keepFills`.
  EliminationGraph(const std::vector<unsigned> &domains, std::vector<std::set<unsigned>> neighbours,
                   bool keepFills);

  /// Entries of the table eliminating `variable` builds (its neighbours').
  double tableEntries(unsigned variable) const;
  /// The kept fill of `variable` (with keepFills).
  double fill(unsigned variable) const { return fills[variable]; }
  /// The fill of `variable` counted from the graph as it is now.
  double recomputedFill(unsigned variable);

  /// Eliminates `variable`: ties its neighbours; returns the variables
  /// whose table or fill changed.
  std::vector<unsigned> eliminate(unsigned variable);

private:
  void markAll(const std::set<unsigned> &variables);
  bool marked(unsigned variable) const { return mark[variable] == generation; }
  bool tied(unsigned a, unsigned b) const { return neighbours[a].count(b) > 0; }
  double product(unsigned a, unsigned b) const { return double(domains[a]) * domains[b]; }
  void updateFills(unsigned pick, const std::vector<unsigned> &around,
                   std::vector<unsigned> &changed);

  const std::vector<unsigned> &domains;
  std::vector<std::set<unsigned>> neighbours;
  bool keepFills;
  std::vector<double> fills, domainSums;
  /// Membership by stamp: a hub's set is too deep to search per neighbour.
  std::vector<size_t> mark;
  size_t generation = 0;
  /// Per variable, the eliminated variable's neighbours it neighbours
  /// (empty between eliminations).
  std::vector<std::vector<unsigned>> sharedNeighbours;
};

} // namespace shardc::sharding

#endif // SHARDC_PASSES_SHARDING_ELIMINATIONGRAPH_H
