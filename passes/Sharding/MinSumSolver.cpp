//===- MinSumSolver.cpp - variable elimination with min-sum ----------------===//
#include "passes/Sharding/MinSumSolver.h"

#include "passes/Sharding/EliminationGraph.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <map>
#include <set>
#include <tuple>

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

/// How the next variable to eliminate is picked.
enum class Greedy {
  SmallestTable, ///< the one whose table has the fewest entries
  LeastFill      ///< the one that ties the fewest value pairs of its neighbours
};

/// An elimination order, what its largest table holds and the work of all.
struct Order {
  std::vector<unsigned> variables;
  double largest = 0, work = 0;
  unsigned largestAt = 0;
};

/// Simulates variable elimination on the interaction graph. Neither greedy
/// rule is best everywhere (on the zoo's training steps either one builds
/// tables 10-200 times the other's), so the solver simulates both and runs
/// the cheaper.
Order greedyOrder(const std::vector<unsigned> &domains, std::vector<std::set<unsigned>> neighbours,
                  Greedy greedy) {
  const unsigned count = domains.size();
  EliminationGraph graph(domains, std::move(neighbours), greedy == Greedy::LeastFill);
  auto score = [&](unsigned variable) {
    double entries = graph.tableEntries(variable);
    return greedy == Greedy::SmallestTable ? std::make_pair(entries, 0.0)
                                           : std::make_pair(graph.fill(variable), entries);
  };
  // The variables left by (score, variable): the least score first, the
  // lowest variable among equals (a scan's order, in log time: a training
  // step has 10^5 variables).
  std::vector<std::pair<double, double>> scores(count);
  std::set<std::tuple<double, double, unsigned>> queue;
  for (unsigned variable = 0; variable < count; ++variable) {
    scores[variable] = score(variable);
    queue.insert({scores[variable].first, scores[variable].second, variable});
  }
  Order order;
  for (unsigned step = 0; step < count; ++step) {
    unsigned pick = std::get<2>(*queue.begin());
    queue.erase(queue.begin());
    double entries = graph.tableEntries(pick);
    order.variables.push_back(pick);
    order.work += entries * domains[pick];
    if (entries > order.largest) {
      order.largest = entries;
      order.largestAt = pick;
    }
    for (unsigned variable : graph.eliminate(pick)) {
      queue.erase({scores[variable].first, scores[variable].second, variable});
      scores[variable] = score(variable);
      queue.insert({scores[variable].first, scores[variable].second, variable});
    }
  }
  return order;
}

} // namespace

std::optional<MinSumProblem::Solution> MinSumProblem::eliminate(size_t maxTableEntries,
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

  std::vector<std::set<unsigned>> neighbours(domains.size());
  for (const Pair &pair : pairs) {
    neighbours[pair.a].insert(pair.b);
    neighbours[pair.b].insert(pair.a);
  }
  Order order = greedyOrder(domains, neighbours, Greedy::SmallestTable);
  Order leastFill = greedyOrder(domains, std::move(neighbours), Greedy::LeastFill);
  auto fits = [&](const Order &candidate) { return candidate.largest <= double(maxTableEntries); };
  if (std::make_pair(!fits(leastFill), leastFill.work) < std::make_pair(!fits(order), order.work))
    order = std::move(leastFill);
  if (!fits(order)) {
    error = "variable " + std::to_string(order.largestAt) + " would need a table of " +
            std::to_string(int64_t(order.largest)) + " entries";
    return std::nullopt;
  }

  std::vector<Elimination> eliminations;
  double constant = 0;
  for (unsigned pick : order.variables) {
    std::vector<unsigned> scope = neighbourhood(pick);
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
    size_t size = size_t(entries(scope));
    Table result{scope, std::vector<double>(size, infinity)};
    Elimination elimination{pick, scope, std::vector<unsigned>(size, 0)};
    std::vector<unsigned> assignment(scope.size(), 0);
    // Each involved table's offset at `assignment` (allocated once: a
    // training step's eliminations visit millions of entries).
    std::vector<size_t> base(involved.size());
    for (size_t entry = 0; entry < size; ++entry) {
      for (size_t t = 0; t < involved.size(); ++t) {
        base[t] = 0;
        for (size_t slot = 0; slot < scope.size(); ++slot)
          base[t] += assignment[slot] * strides[t][slot];
      }
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
    eliminations.push_back(std::move(elimination));
    if (scope.empty()) {
      constant += result.values[0];
      continue;
    }
    tables.push_back(std::move(result));
    for (unsigned variable : tables.back().scope)
      tablesOf[variable].insert(tables.size() - 1);
  }

  Solution solution{std::vector<unsigned>(domains.size(), 0), constant};
  for (auto it = eliminations.rbegin(); it != eliminations.rend(); ++it) {
    size_t entry = 0;
    for (unsigned variable : it->scope)
      entry = entry * domains[variable] + solution.values[variable];
    solution.values[it->variable] = it->best[entry];
  }
  solution.cost = cost(solution.values);
  return solution;
}

std::vector<std::vector<bool>> MinSumProblem::survivingValues() const {
  const double infinity = std::numeric_limits<double>::infinity();
  const unsigned count = domains.size();
  // A value survives while it has a finite cost and, in every pair, a
  // surviving partner at finite cost (arc consistency); a worklist of the
  // variables whose values changed revisits their pairs only.
  std::vector<std::vector<bool>> alive(count);
  std::vector<std::vector<size_t>> pairsOf(count);
  for (unsigned variable = 0; variable < count; ++variable)
    for (double value : unary[variable])
      alive[variable].push_back(value < infinity);
  for (size_t index = 0; index < pairs.size(); ++index) {
    pairsOf[pairs[index].a].push_back(index);
    pairsOf[pairs[index].b].push_back(index);
  }
  std::vector<unsigned> worklist(count);
  std::vector<bool> queued(count, true);
  for (unsigned variable = 0; variable < count; ++variable)
    worklist[variable] = variable;
  // The cost `pair` gives `variable` at x and the pair's other variable at z.
  auto costOf = [&](const Pair &pair, unsigned variable, unsigned x, unsigned z) {
    return pair.a == variable ? pair.table[x * domains[pair.b] + z]
                              : pair.table[z * domains[pair.b] + x];
  };
  // Drops `variable`'s values without a finite partner in `pair`.
  auto revise = [&](unsigned variable, const Pair &pair) {
    unsigned other = pair.a == variable ? pair.b : pair.a;
    bool changed = false;
    for (unsigned x = 0; x < domains[variable]; ++x) {
      if (!alive[variable][x])
        continue;
      bool supported = false;
      for (unsigned z = 0; z < domains[other] && !supported; ++z)
        supported = alive[other][z] && costOf(pair, variable, x, z) < infinity;
      if (!supported) {
        alive[variable][x] = false;
        changed = true;
      }
    }
    if (changed && !queued[variable]) {
      queued[variable] = true;
      worklist.push_back(variable);
    }
  };
  auto propagate = [&] {
    while (!worklist.empty()) {
      unsigned variable = worklist.back();
      worklist.pop_back();
      queued[variable] = false;
      for (size_t index : pairsOf[variable]) {
        const Pair &pair = pairs[index];
        revise(pair.a == variable ? pair.b : pair.a, pair);
      }
    }
  };
  // Whether value x of `variable` may go because y costs no more, alone
  // and beside every surviving value of every neighbour: then some best
  // assignment avoids x. Of values that always cost the same the first
  // stays (the one an elimination would pick among equals).
  auto dominated = [&](unsigned variable, unsigned x, unsigned y) {
    bool equal = unary[variable][x] == unary[variable][y];
    if (unary[variable][x] < unary[variable][y])
      return false;
    for (size_t index : pairsOf[variable]) {
      const Pair &pair = pairs[index];
      unsigned other = pair.a == variable ? pair.b : pair.a;
      for (unsigned z = 0; z < domains[other]; ++z) {
        if (!alive[other][z])
          continue;
        double costX = costOf(pair, variable, x, z), costY = costOf(pair, variable, y, z);
        if (costX < costY)
          return false;
        equal &= costX == costY;
      }
    }
    return !equal || y < x;
  };
  do {
    propagate();
    for (unsigned variable = 0; variable < count; ++variable)
      for (unsigned x = 0; x < domains[variable]; ++x)
        for (unsigned y = 0; y < domains[variable] && alive[variable][x]; ++y)
          if (y != x && alive[variable][y] && dominated(variable, x, y)) {
            alive[variable][x] = false;
            if (!queued[variable]) {
              queued[variable] = true;
              worklist.push_back(variable);
            }
          }
  } while (!worklist.empty());
  return alive;
}

std::optional<MinSumProblem::Solution> MinSumProblem::solve(size_t maxTableEntries,
                                                            std::string &error) const {
  const double infinity = std::numeric_limits<double>::infinity();
  const unsigned count = domains.size();
  std::vector<std::vector<bool>> alive = survivingValues();

  // No finite assignment: every one costs infinity.
  std::vector<std::vector<unsigned>> kept(count);
  for (unsigned variable = 0; variable < count; ++variable) {
    for (unsigned value = 0; value < domains[variable]; ++value)
      if (alive[variable][value])
        kept[variable].push_back(value);
    if (kept[variable].empty())
      return Solution{std::vector<unsigned>(count, 0), infinity};
  }

  // The problem over the surviving values; a pair with a fixed side is a
  // unary cost of the other side.
  std::vector<std::vector<double>> keptUnary(count);
  for (unsigned variable = 0; variable < count; ++variable)
    for (unsigned value : kept[variable])
      keptUnary[variable].push_back(unary[variable][value]);
  std::vector<Pair> keptPairs;
  for (const Pair &pair : pairs) {
    const std::vector<unsigned> &as = kept[pair.a], &bs = kept[pair.b];
    auto entry = [&](unsigned x, unsigned y) { return pair.table[x * domains[pair.b] + y]; };
    if (as.size() == 1) {
      for (size_t y = 0; y < bs.size(); ++y)
        keptUnary[pair.b][y] += entry(as[0], bs[y]);
    } else if (bs.size() == 1) {
      for (size_t x = 0; x < as.size(); ++x)
        keptUnary[pair.a][x] += entry(as[x], bs[0]);
    } else {
      std::vector<double> table;
      for (unsigned x : as)
        for (unsigned y : bs)
          table.push_back(entry(x, y));
      keptPairs.push_back({pair.a, pair.b, std::move(table)});
    }
  }
  MinSumProblem reduced;
  for (std::vector<double> &costs : keptUnary)
    reduced.addVariable(std::move(costs));
  reduced.pairs = std::move(keptPairs);
  std::optional<Solution> solution = reduced.eliminate(maxTableEntries, error);
  if (!solution)
    return std::nullopt;
  for (unsigned variable = 0; variable < count; ++variable)
    solution->values[variable] = kept[variable][solution->values[variable]];
  solution->cost = cost(solution->values);
  return solution;
}

} // namespace shardc::sharding
