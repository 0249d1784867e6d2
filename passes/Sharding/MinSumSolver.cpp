//===- MinSumSolver.cpp - variable elimination with min-sum ----------------===//
#include "passes/Sharding/MinSumSolver.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <map>
#include <set>

namespace shardc::sharding {

unsigned MinSumProblem::addVariable(std::vector<double> costs) {
  domains.push_back(costs.size());
  unary.push_back(std::move(costs));
  return domains.size() - 1;
}

void MinSumProblem::addPairwise(unsigned a, unsigned b, const std::vector<double> &table) {
  assert(a != b && "a pair of two different variables");
  pairs.push_back({a, b, table});
}

double MinSumProblem::cost(const std::vector<unsigned> &values) const {
  double total = 0;
  for (unsigned variable = 0; variable < domains.size(); ++variable)
    total += unary[variable][values[variable]];
  for (const Pair &pair : pairs)
    total += pair.table[values[pair.a] * domains[pair.b] + values[pair.b]];
  return total;
}

namespace {

/// A cost table over a sorted list of variables, row-major.
struct Table {
  std::vector<unsigned> scope;
  std::vector<double> values;
};

/// What eliminating one variable left behind to recover its best value.
struct Elimination {
  unsigned variable;
  std::vector<unsigned> scope;
  std::vector<unsigned> best;
};

} // namespace

std::optional<MinSumProblem::Solution> MinSumProblem::solve(size_t maxTableEntries,
                                                            std::string &error) const {
  const double infinity = std::numeric_limits<double>::infinity();
  std::vector<Table> tables;
  for (unsigned variable = 0; variable < domains.size(); ++variable)
    tables.push_back({{variable}, unary[variable]});
  // Pairs over the same two variables are summed into one table.
  std::map<std::pair<unsigned, unsigned>, size_t> pairTable;
  for (const Pair &pair : pairs) {
    unsigned low = std::min(pair.a, pair.b), high = std::max(pair.a, pair.b);
    auto [it, inserted] = pairTable.try_emplace({low, high}, tables.size());
    if (inserted)
      tables.push_back({{low, high}, std::vector<double>(domains[low] * domains[high], 0.0)});
    Table &table = tables[it->second];
    for (unsigned x = 0; x < domains[pair.a]; ++x)
      for (unsigned y = 0; y < domains[pair.b]; ++y) {
        unsigned lowValue = pair.a == low ? x : y, highValue = pair.a == low ? y : x;
        table.values[lowValue * domains[high] + highValue] += pair.table[x * domains[pair.b] + y];
      }
  }

  std::vector<std::set<size_t>> tablesOf(domains.size());
  for (size_t index = 0; index < tables.size(); ++index)
    for (unsigned variable : tables[index].scope)
      tablesOf[variable].insert(index);

  auto neighbourhood = [&](unsigned variable) {
    std::set<unsigned> scope;
    for (size_t index : tablesOf[variable])
      scope.insert(tables[index].scope.begin(), tables[index].scope.end());
    scope.erase(variable);
    return std::vector<unsigned>(scope.begin(), scope.end());
  };
  auto entries = [&](const std::vector<unsigned> &scope) {
    double product = 1;
    for (unsigned variable : scope)
      product *= domains[variable];
    return product;
  };

  std::vector<bool> eliminated(domains.size(), false);
  // The size of the table eliminating each variable would make; only the
  // neighbours of an eliminated variable change.
  std::vector<double> score(domains.size());
  for (unsigned variable = 0; variable < domains.size(); ++variable)
    score[variable] = entries(neighbourhood(variable));
  std::vector<Elimination> order;
  double constant = 0;
  for (unsigned step = 0; step < domains.size(); ++step) {
    unsigned pick = 0;
    double smallest = infinity;
    for (unsigned variable = 0; variable < domains.size(); ++variable)
      if (!eliminated[variable] && score[variable] < smallest) {
        smallest = score[variable];
        pick = variable;
      }
    std::vector<unsigned> scope = neighbourhood(pick);
    if (smallest > double(maxTableEntries)) {
      error = "variable " + std::to_string(pick) + " would need a table of " +
              std::to_string(int64_t(smallest)) + " entries";
      return std::nullopt;
    }
    std::vector<size_t> involved(tablesOf[pick].begin(), tablesOf[pick].end());
    // Strides of every involved table over (scope..., pick).
    std::vector<std::vector<size_t>> strides(involved.size());
    for (size_t t = 0; t < involved.size(); ++t) {
      const Table &table = tables[involved[t]];
      std::vector<size_t> own(table.scope.size());
      size_t stride = 1;
      for (size_t position = table.scope.size(); position-- > 0;) {
        own[position] = stride;
        stride *= domains[table.scope[position]];
      }
      strides[t].assign(scope.size() + 1, 0);
      for (size_t position = 0; position < table.scope.size(); ++position) {
        unsigned variable = table.scope[position];
        size_t slot =
            variable == pick
                ? scope.size()
                : size_t(std::lower_bound(scope.begin(), scope.end(), variable) - scope.begin());
        strides[t][slot] = own[position];
      }
    }
    size_t size = size_t(smallest);
    Table result{scope, std::vector<double>(size, infinity)};
    Elimination elimination{pick, scope, std::vector<unsigned>(size, 0)};
    std::vector<unsigned> assignment(scope.size(), 0);
    for (size_t entry = 0; entry < size; ++entry) {
      std::vector<size_t> base(involved.size(), 0);
      for (size_t t = 0; t < involved.size(); ++t)
        for (size_t slot = 0; slot < scope.size(); ++slot)
          base[t] += assignment[slot] * strides[t][slot];
      for (unsigned value = 0; value < domains[pick]; ++value) {
        double sum = 0;
        for (size_t t = 0; t < involved.size(); ++t)
          sum += tables[involved[t]].values[base[t] + value * strides[t][scope.size()]];
        if (sum < result.values[entry]) {
          result.values[entry] = sum;
          elimination.best[entry] = value;
        }
      }
      for (size_t slot = scope.size(); slot-- > 0;) {
        if (++assignment[slot] < domains[scope[slot]])
          break;
        assignment[slot] = 0;
      }
    }
    for (size_t index : involved) {
      for (unsigned variable : tables[index].scope)
        tablesOf[variable].erase(index);
    }
    eliminated[pick] = true;
    order.push_back(std::move(elimination));
    if (scope.empty()) {
      constant += result.values[0];
      continue;
    }
    tables.push_back(std::move(result));
    for (unsigned variable : tables.back().scope)
      tablesOf[variable].insert(tables.size() - 1);
    for (unsigned variable : tables.back().scope)
      score[variable] = entries(neighbourhood(variable));
  }

  Solution solution{std::vector<unsigned>(domains.size(), 0), constant};
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    size_t entry = 0;
    for (unsigned variable : it->scope)
      entry = entry * domains[variable] + solution.values[variable];
    solution.values[it->variable] = it->best[entry];
  }
  solution.cost = cost(solution.values);
  return solution;
}

} // namespace shardc::sharding
