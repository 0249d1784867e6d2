//===- MinSumSolverTest.cpp - variable elimination finds the exact minimum -===//
//
// The solver is checked against brute-force enumeration on random small
// problems (repeated pairs, both orders, forbidden entries), against a
// Viterbi pass on a long chain, and on its two ways of giving up: a table
// over the limit and a problem with no finite assignment. Cliques whose
// forbidden values leave one choice per variable (by their own costs, or
// through a pair) solve under a table limit a full elimination would pass.
//
//===----------------------------------------------------------------------===//
#include "passes/Sharding/MinSumSolver.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using shardc::sharding::MinSumProblem;

namespace {

const double kInfinity = std::numeric_limits<double>::infinity();

/// The smallest cost over every assignment (odometer over the domains).
double bruteForceMinimum(const MinSumProblem &problem, const std::vector<unsigned> &domains) {
  double best = kInfinity;
  std::vector<unsigned> values(domains.size(), 0);
  while (true) {
    best = std::min(best, problem.cost(values));
    size_t position = 0;
    while (position < values.size() && ++values[position] == domains[position])
      values[position++] = 0;
    if (position == values.size())
      return best;
  }
}

/// A cost in [0, 10), or infinity with probability `forbidden`.
double randomCost(std::mt19937 &random, double forbidden) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  if (unit(random) < forbidden)
    return kInfinity;
  return 10.0 * unit(random);
}

/// Both costs are the same minimum: equal when finite, both infinite otherwise.
void expectSameMinimum(double solved, double expected) {
  if (std::isinf(expected)) {
    EXPECT_TRUE(std::isinf(solved)) << "solver found " << solved << ", none is finite";
  } else {
    EXPECT_NEAR(solved, expected, 1e-9);
  }
}

TEST(MinSumSolver, RandomProblemsMatchBruteForce) {
  std::mt19937 random(20240611);
  int infeasible = 0;
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    MinSumProblem problem;
    unsigned variables = 2 + random() % 8;
    std::vector<unsigned> domains;
    for (unsigned variable = 0; variable < variables; ++variable) {
      domains.push_back(1 + random() % 4);
      std::vector<double> unary;
      for (unsigned value = 0; value < domains.back(); ++value)
        unary.push_back(randomCost(random, 0.05));
      EXPECT_EQ(problem.addVariable(unary), variable);
    }
    unsigned pairs = random() % (2 * variables + 1);
    for (unsigned pair = 0; pair < pairs; ++pair) {
      unsigned a = random() % variables, b = random() % (variables - 1);
      b += b >= a; // any variable but a, so (a, b) comes in both orders
      std::vector<double> table;
      for (unsigned entry = 0; entry < domains[a] * domains[b]; ++entry)
        table.push_back(randomCost(random, 0.1));
      problem.addPairwise(a, b, table);
      // Now and then a second table on the same two variables, reversed.
      if (random() % 4 == 0) {
        std::vector<double> reversed;
        for (unsigned entry = 0; entry < domains[a] * domains[b]; ++entry)
          reversed.push_back(randomCost(random, 0.1));
        problem.addPairwise(b, a, reversed);
      }
    }
    ASSERT_EQ(problem.numVariables(), variables);

    std::string error;
    auto solution = problem.solve(size_t(1) << 20, error);
    ASSERT_TRUE(solution) << error;
    ASSERT_EQ(solution->values.size(), variables);
    for (unsigned variable = 0; variable < variables; ++variable)
      EXPECT_LT(solution->values[variable], domains[variable]);
    double expected = bruteForceMinimum(problem, domains);
    infeasible += std::isinf(expected);
    expectSameMinimum(solution->cost, expected);
    double recomputed = problem.cost(solution->values);
    if (std::isinf(recomputed))
      EXPECT_TRUE(std::isinf(solution->cost));
    else
      EXPECT_EQ(solution->cost, recomputed);
  }
  // The forbidden entries must leave both kinds of problem in the sample.
  EXPECT_GT(infeasible, 0);
  EXPECT_LT(infeasible, 150);
}

TEST(MinSumSolver, LongChainSolvesWithSmallTables) {
  // 200 variables, each tied to the next: eliminating from an end never
  // needs more than a pairwise table. Checked against a Viterbi pass.
  std::mt19937 random(77);
  const unsigned length = 200, domain = 6;
  MinSumProblem problem;
  std::vector<std::vector<double>> unary(length), link(length - 1);
  for (unsigned variable = 0; variable < length; ++variable) {
    for (unsigned value = 0; value < domain; ++value)
      unary[variable].push_back(randomCost(random, 0.0));
    problem.addVariable(unary[variable]);
  }
  for (unsigned variable = 0; variable + 1 < length; ++variable) {
    for (unsigned entry = 0; entry < domain * domain; ++entry)
      link[variable].push_back(randomCost(random, 0.05));
    // Alternate the orders so both layouts of a pairwise table appear.
    if (variable % 2 == 0) {
      problem.addPairwise(variable, variable + 1, link[variable]);
    } else {
      std::vector<double> transposed(domain * domain);
      for (unsigned x = 0; x < domain; ++x)
        for (unsigned y = 0; y < domain; ++y)
          transposed[y * domain + x] = link[variable][x * domain + y];
      problem.addPairwise(variable + 1, variable, transposed);
    }
  }

  std::vector<double> best = unary[0];
  for (unsigned variable = 1; variable < length; ++variable) {
    std::vector<double> next(domain, kInfinity);
    for (unsigned y = 0; y < domain; ++y)
      for (unsigned x = 0; x < domain; ++x)
        next[y] = std::min(next[y], best[x] + link[variable - 1][x * domain + y]);
    for (unsigned y = 0; y < domain; ++y)
      next[y] += unary[variable][y];
    best = next;
  }
  double expected = *std::min_element(best.begin(), best.end());
  ASSERT_FALSE(std::isinf(expected));

  std::string error;
  auto solution = problem.solve(64, error);
  ASSERT_TRUE(solution) << error;
  EXPECT_NEAR(solution->cost, expected, 1e-9);
  EXPECT_EQ(solution->cost, problem.cost(solution->values));
}

/// Ties every two of the variables [first, count), each of `domain`
/// values, with a random finite pair.
void tieAllPairs(MinSumProblem &problem, std::mt19937 &random, unsigned first, unsigned count,
                 unsigned domain) {
  for (unsigned a = first; a < count; ++a)
    for (unsigned b = a + 1; b < count; ++b) {
      std::vector<double> table;
      for (unsigned entry = 0; entry < domain * domain; ++entry)
        table.push_back(randomCost(random, 0.0));
      problem.addPairwise(a, b, table);
    }
}

/// A clique of `variables` x `domain` with random finite pairs, where a
/// full elimination needs domain^(variables-1) entries.
MinSumProblem randomClique(std::mt19937 &random, unsigned variables, unsigned domain,
                           const std::vector<std::vector<double>> &unary) {
  MinSumProblem problem;
  for (unsigned variable = 0; variable < variables; ++variable)
    problem.addVariable(unary[variable]);
  tieAllPairs(problem, random, 0, variables, domain);
  return problem;
}

TEST(MinSumSolver, CliqueOverTheTableLimitIsRefused) {
  // Every variable of a 12-clique neighbours the 11 others: the first
  // elimination needs 4^11 entries, far over 1000.
  std::mt19937 random(5);
  const unsigned variables = 12, domain = 4;
  MinSumProblem problem =
      randomClique(random, variables, domain,
                   std::vector<std::vector<double>>(variables, std::vector<double>(domain, 1.0)));
  std::string error;
  EXPECT_FALSE(problem.solve(1000, error));
  EXPECT_NE(error.find("entries"), std::string::npos) << error;
}

TEST(MinSumSolver, ForbiddenValuesAreDroppedBeforeElimination) {
  // 8 variables of 3 values, all tied: eliminating one would need 3^7
  // entries. Six of them may take one value only (the others cost
  // infinity), so only a pair of real choices remains: 3 entries.
  std::mt19937 random(11);
  const unsigned variables = 8, domain = 3;
  std::vector<std::vector<double>> unary(variables);
  for (unsigned variable = 0; variable < variables; ++variable)
    for (unsigned value = 0; value < domain; ++value)
      unary[variable].push_back(variable < 2 || value == variable % domain ? randomCost(random, 0.0)
                                                                           : kInfinity);
  MinSumProblem problem = randomClique(random, variables, domain, unary);
  std::string error;
  auto solution = problem.solve(10, error);
  ASSERT_TRUE(solution) << error;
  EXPECT_NEAR(solution->cost, bruteForceMinimum(problem, std::vector<unsigned>(variables, domain)),
              1e-9);
  for (unsigned variable = 2; variable < variables; ++variable)
    EXPECT_EQ(solution->values[variable], variable % domain);
}

TEST(MinSumSolver, PairsThatForbidPropagate) {
  // The same clique with every value finite alone, but variable 0 has one
  // value, and its pair with each variable v >= 2 forbids all of v's values
  // but v % 3: the one left to each follows through the pairs only.
  std::mt19937 random(12);
  const unsigned variables = 8, domain = 3;
  std::vector<std::vector<double>> unary(variables);
  unary[0] = {randomCost(random, 0.0)};
  for (unsigned variable = 1; variable < variables; ++variable)
    for (unsigned value = 0; value < domain; ++value)
      unary[variable].push_back(randomCost(random, 0.0));
  MinSumProblem problem;
  for (const std::vector<double> &costs : unary)
    problem.addVariable(costs);
  for (unsigned variable = 1; variable < variables; ++variable) {
    std::vector<double> table;
    for (unsigned value = 0; value < domain; ++value)
      table.push_back(variable < 2 || value == variable % domain ? randomCost(random, 0.0)
                                                                 : kInfinity);
    // Half of them with the pinned variable second.
    if (variable % 2)
      problem.addPairwise(0, variable, table);
    else
      problem.addPairwise(variable, 0, table);
  }
  tieAllPairs(problem, random, 1, variables, domain);
  std::vector<unsigned> domains(variables, domain);
  domains[0] = 1;
  std::string error;
  auto solution = problem.solve(10, error);
  ASSERT_TRUE(solution) << error;
  EXPECT_NEAR(solution->cost, bruteForceMinimum(problem, domains), 1e-9);
  for (unsigned variable = 2; variable < variables; ++variable)
    EXPECT_EQ(solution->values[variable], variable % domain);
}

TEST(MinSumSolver, AllForbiddenCostsInfinity) {
  MinSumProblem problem;
  unsigned a = problem.addVariable({kInfinity, kInfinity});
  unsigned b = problem.addVariable({kInfinity, kInfinity, kInfinity});
  problem.addPairwise(a, b, std::vector<double>(6, kInfinity));
  std::string error;
  auto solution = problem.solve(1000, error);
  ASSERT_TRUE(solution) << error;
  EXPECT_TRUE(std::isinf(solution->cost));
  EXPECT_GT(solution->cost, 0);
}

TEST(MinSumSolver, ForbiddenPairsSteerTheChoice) {
  // Alone each variable would take value 0; the pair forbids (0, 0) and
  // (1, 0), so b must move to 1 and a stays at 0.
  MinSumProblem problem;
  unsigned a = problem.addVariable({0.0, 1.0});
  unsigned b = problem.addVariable({0.0, 5.0});
  problem.addPairwise(a, b, {kInfinity, 0.0, kInfinity, 0.0});
  std::string error;
  auto solution = problem.solve(1000, error);
  ASSERT_TRUE(solution) << error;
  EXPECT_EQ(solution->values, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(solution->cost, 5.0);
}

} // namespace
