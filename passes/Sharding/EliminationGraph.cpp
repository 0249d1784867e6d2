//===- EliminationGraph.cpp - the interaction graph variable elimination changes -===//
#include "passes/Sharding/EliminationGraph.h"

namespace shardc::sharding {

EliminationGraph::EliminationGraph(const std::vector<unsigned> &domains,
                                   std::vector<std::set<unsigned>> neighbours, bool keepFills)
    : domains(domains), neighbours(std::move(neighbours)), keepFills(keepFills),
      mark(domains.size(), 0), sharedNeighbours(domains.size()) {
  if (!keepFills)
    return;
  for (unsigned variable = 0; variable < domains.size(); ++variable) {
    double sum = 0;
    for (unsigned neighbour : this->neighbours[variable])
      sum += domains[neighbour];
    domainSums.push_back(sum);
    fills.push_back(recomputedFill(variable));
  }
}

double EliminationGraph::tableEntries(unsigned variable) const {
  double product = 1;
  for (unsigned neighbour : neighbours[variable])
    product *= domains[neighbour];
  return product;
}

double EliminationGraph::recomputedFill(unsigned variable) {
  // All pairs of neighbours less the tied ones, each tied pair found from
  // both of its sides.
  const std::set<unsigned> &around = neighbours[variable];
  markAll(around);
  double sum = 0, squares = 0, tiedPairs = 0;
  for (unsigned neighbour : around) {
    double domain = domains[neighbour];
    sum += domain;
    squares += domain * domain;
    for (unsigned other : neighbours[neighbour])
      if (marked(other))
        tiedPairs += domain * domains[other];
  }
  return (sum * sum - squares - tiedPairs) / 2;
}

std::vector<unsigned> EliminationGraph::eliminate(unsigned pick) {
  std::vector<unsigned> around(neighbours[pick].begin(), neighbours[pick].end());
  std::vector<unsigned> changed = around;
  if (keepFills)
    updateFills(pick, around, changed);
  for (unsigned neighbour : around) {
    neighbours[neighbour].erase(pick);
    for (unsigned other : around)
      if (other != neighbour)
        neighbours[neighbour].insert(other);
  }
  neighbours[pick].clear();
  return changed;
}

void EliminationGraph::markAll(const std::set<unsigned> &variables) {
  ++generation;
  for (unsigned variable : variables)
    mark[variable] = generation;
}

/// From the graph before `pick` goes (its new edges are the untied pairs
/// of `around`).
void EliminationGraph::updateFills(unsigned pick, const std::vector<unsigned> &around,
                                   std::vector<unsigned> &changed) {
  markAll(neighbours[pick]);
  // A variable apart from the pick keeps its neighbours: it loses the
  // untied pairs among them that the pick ties.
  std::vector<unsigned> sharing;
  for (unsigned neighbour : around)
    for (unsigned other : neighbours[neighbour])
      if (other != pick && !marked(other)) {
        if (sharedNeighbours[other].empty())
          sharing.push_back(other);
        sharedNeighbours[other].push_back(neighbour);
      }
  for (unsigned variable : sharing) {
    std::vector<unsigned> &shared = sharedNeighbours[variable];
    if (shared.size() >= 2) {
      for (size_t i = 0; i < shared.size(); ++i)
        for (size_t j = i + 1; j < shared.size(); ++j)
          if (!tied(shared[i], shared[j]))
            fills[variable] -= product(shared[i], shared[j]);
      changed.push_back(variable);
    }
    shared.clear();
  }
  // A neighbour of the pick loses it and gains the pick's other neighbours.
  auto apartFromPick = [&](unsigned variable) { return variable != pick && !marked(variable); };
  for (unsigned variable : around) {
    const std::set<unsigned> &before = neighbours[variable];
    std::vector<unsigned> kept, gained;
    double keptSum = 0;
    for (unsigned other : around) {
      if (other == variable)
        continue;
      if (before.count(other)) {
        kept.push_back(other);
        keptSum += domains[other];
      } else {
        gained.push_back(other);
      }
    }
    // The domains of its neighbours apart from the pick and the pick's
    // neighbours: each was an untied pair with the pick.
    double apartSum = domainSums[variable] - domains[pick] - keptSum;
    double delta = -double(domains[pick]) * apartSum;
    for (size_t i = 0; i < kept.size(); ++i)
      for (size_t j = i + 1; j < kept.size(); ++j)
        if (!tied(kept[i], kept[j]))
          delta -= product(kept[i], kept[j]);
    // A gained neighbour pairs untied with those apart that it is not tied
    // to already (searched from the smaller side); with the pick's other
    // neighbours it is tied now.
    double gainedSum = 0;
    for (unsigned other : gained) {
      double tiedApart = 0;
      if (neighbours[other].size() < before.size()) {
        for (unsigned x : neighbours[other])
          if (apartFromPick(x) && before.count(x))
            tiedApart += domains[x];
      } else {
        for (unsigned x : before)
          if (apartFromPick(x) && tied(other, x))
            tiedApart += domains[x];
      }
      delta += domains[other] * (apartSum - tiedApart);
      gainedSum += domains[other];
    }
    fills[variable] += delta;
    domainSums[variable] += gainedSum - domains[pick];
  }
}

} // namespace shardc::sharding
