//===- EliminationGraphTest.cpp - kept fills equal counted fills ----------===//
//
// The fills the graph keeps by what each elimination changes must equal
// the fills counted afresh, exactly, at every step: on hand-counted small
// graphs, and on random graphs with hubs eliminated in random orders.
//
//===----------------------------------------------------------------------===//
#include "passes/Sharding/EliminationGraph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using shardc::sharding::EliminationGraph;

namespace {

using Neighbours = std::vector<std::set<unsigned>>;

void tie(Neighbours &neighbours, unsigned a, unsigned b) {
  neighbours[a].insert(b);
  neighbours[b].insert(a);
}

TEST(EliminationGraphTest, PathAndStarByHand) {
  // a - b - c, domains 2, 3, 4: eliminating b ties a (2) with c (4).
  std::vector<unsigned> domains = {2, 3, 4};
  Neighbours path(3);
  tie(path, 0, 1);
  tie(path, 1, 2);
  EliminationGraph line(domains, path, true);
  EXPECT_EQ(line.fill(1), 8);
  EXPECT_EQ(line.fill(0), 0);
  EXPECT_EQ(line.tableEntries(1), 8);
  std::vector<unsigned> changed = line.eliminate(1);
  std::sort(changed.begin(), changed.end());
  EXPECT_EQ(changed, (std::vector<unsigned>{0, 2}));
  EXPECT_EQ(line.fill(0), 0);
  EXPECT_EQ(line.tableEntries(0), 4);

  // Hub 0 with leaves of domains 2, 3, 5, two leaves tied: 2*3 + 2*5.
  std::vector<unsigned> starDomains = {7, 2, 3, 5};
  Neighbours star(4);
  for (unsigned leaf = 1; leaf < 4; ++leaf)
    tie(star, 0, leaf);
  tie(star, 2, 3);
  EliminationGraph hub(starDomains, star, true);
  EXPECT_EQ(hub.fill(0), 2 * 3 + 2 * 5);
  EXPECT_EQ(hub.fill(2), 0);
  // Leaf 1 goes: the hub loses its pairs with it.
  hub.eliminate(1);
  EXPECT_EQ(hub.fill(0), 0);
  // Leaf 2 had neighbours 0 and 3, tied already: nothing to fill.
  EXPECT_EQ(hub.fill(2), 0);
}

TEST(EliminationGraphTest, KeptFillsEqualCountedOnRandomGraphsWithHubs) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    unsigned count = 4 + random() % 40;
    std::vector<unsigned> domains(count);
    for (unsigned &domain : domains)
      domain = 1 + random() % 5;
    Neighbours neighbours(count);
    // A sparse graph (a chain and random edges) and one or two hubs.
    for (unsigned variable = 1; variable < count; ++variable)
      if (random() % 4)
        tie(neighbours, variable - 1, variable);
    for (unsigned edge = 0; edge < count; ++edge) {
      unsigned a = random() % count, b = random() % count;
      if (a != b)
        tie(neighbours, a, b);
    }
    for (unsigned hub = 0; hub < 1u + trial % 2; ++hub) {
      unsigned center = random() % count;
      for (unsigned variable = 0; variable < count; ++variable)
        if (variable != center && random() % 3)
          tie(neighbours, center, variable);
    }
    EliminationGraph graph(domains, neighbours, true);
    std::vector<unsigned> order(count);
    for (unsigned variable = 0; variable < count; ++variable)
      order[variable] = variable;
    std::shuffle(order.begin(), order.end(), random);
    for (size_t step = 0; step < order.size(); ++step) {
      for (size_t later = step; later < order.size(); ++later)
        ASSERT_EQ(graph.fill(order[later]), graph.recomputedFill(order[later]))
            << "trial " << trial << " step " << step << " variable " << order[later];
      graph.eliminate(order[step]);
    }
  }
}

} // namespace
