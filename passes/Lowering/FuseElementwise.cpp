//===- FuseElementwise.cpp - chains of elementwise kernels into one -------===//
//
// A "fused" kernel carries its expression in two parameters:
//   ops  = ["mul", "add", "gelu"]        the steps, in evaluation order
//   args = array<i64: 0, 1, 3, 2, 4>     each step's arguments, one per arity:
//          an index below the number of kernel inputs names that input, an
//          index i above it names the result of step i - #inputs.
// The last step is the kernel's output. Every step is evaluated per element
// of the output's (broadcast) index space.
//
//===----------------------------------------------------------------------===//
#include "passes/Lowering/ElementwiseExpression.h"
#include "passes/Lowering/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace shardc;

namespace shardc::lowering {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "passes/Lowering/Passes.h.inc"
} // namespace shardc::lowering

namespace {

using lowering::Expression;
using lowering::expressionOf;

/// The output of `kernel` when it may be computed inside the kernels that
/// read it: written by `kernel` alone, read (and not written) by kernels of
/// the same block only, and by nothing else (an output, a view).
std::optional<Value> internalizableOutput(exec::KernelOp kernel,
                                          SmallVectorImpl<exec::KernelOp> &readers) {
  Value output = kernel.getOutputs()[0];
  if (llvm::is_contained(kernel.getInputs(), output))
    return std::nullopt;
  for (Operation *user : output.getUsers()) {
    if (user == kernel.getOperation())
      continue;
    auto reader = dyn_cast<exec::KernelOp>(user);
    if (!reader || reader->getBlock() != kernel->getBlock() ||
        llvm::is_contained(reader.getOutputs(), output))
      return std::nullopt;
    readers.push_back(reader);
  }
  if (readers.empty())
    return std::nullopt;
  return output;
}

/// Kernels fused into one: `members` in program order, the last (the root)
/// writing the group's output; every other member's output is read inside
/// the group only.
struct Group {
  SmallVector<exec::KernelOp> members;
  SmallVector<Value> internal; // the members' outputs the fused kernel drops
};

/// Partitions the fusible kernels of `op` into groups in one backward walk:
/// a kernel joins the group of the kernels that read its output when all of
/// them are in one group (they come later in the block, so they are placed
/// already). Every path from a member out of its group passes through the
/// root, so the root's place is a valid place for the whole group.
SmallVector<Group> findGroups(Operation *op,
                              const DenseMap<Operation *, Expression> &expressions) {
  SmallVector<exec::KernelOp> kernels;
  op->walk([&](exec::KernelOp kernel) {
    if (expressions.count(kernel))
      kernels.push_back(kernel);
  });
  DenseMap<Operation *, unsigned> groupOf;
  SmallVector<Group> groups;
  SmallVector<exec::KernelOp> readers;
  for (exec::KernelOp kernel : llvm::reverse(kernels)) {
    readers.clear();
    std::optional<Value> output = internalizableOutput(kernel, readers);
    std::optional<unsigned> group;
    if (output) {
      auto first = groupOf.find(readers.front());
      if (first != groupOf.end() && llvm::all_of(readers, [&](exec::KernelOp reader) {
            auto found = groupOf.find(reader);
            return found != groupOf.end() && found->second == first->second;
          }))
        group = first->second;
    }
    if (!group) {
      group = groups.size();
      groups.emplace_back();
    } else {
      groups[*group].internal.push_back(*output);
    }
    groupOf[kernel] = *group;
    groups[*group].members.push_back(kernel);
  }
  for (Group &group : groups)
    std::reverse(group.members.begin(), group.members.end());
  return groups;
}

/// The expression of a whole group: its members' steps in program order,
/// reading the group's external buffers (each once, in order of first use)
/// and the results of earlier steps for its internal ones.
Expression mergeGroup(const Group &group, const DenseMap<Operation *, Expression> &expressions) {
  DenseSet<Value> internal(group.internal.begin(), group.internal.end());
  Expression merged;
  DenseMap<Value, int64_t> inputIndex;
  for (exec::KernelOp member : group.members)
    for (Value input : expressions.find(member)->second.inputs)
      if (!internal.contains(input) && inputIndex.try_emplace(input, merged.inputs.size()).second)
        merged.inputs.push_back(input);
  const int64_t inputs = merged.inputs.size();
  DenseMap<Value, int64_t> resultIndex; // an internal buffer -> the step computing it
  for (exec::KernelOp member : group.members) {
    const Expression &expression = expressions.find(member)->second;
    const int64_t memberInputs = expression.inputs.size();
    const int64_t firstStep = inputs + merged.ops.size();
    for (int64_t arg : expression.args) {
      if (arg >= memberInputs) {
        merged.args.push_back(firstStep + arg - memberInputs);
        continue;
      }
      Value input = expression.inputs[arg];
      merged.args.push_back(internal.contains(input) ? resultIndex.lookup(input)
                                                      : inputIndex.lookup(input));
    }
    llvm::append_range(merged.ops, expression.ops);
    resultIndex[member.getOutputs()[0]] = inputs + merged.ops.size() - 1;
  }
  return merged;
}

/// Replaces the group's kernels by one fused kernel at the root's place.
void fuseGroup(const Group &group, const DenseMap<Operation *, Expression> &expressions) {
  Expression merged = mergeGroup(group, expressions);
  exec::KernelOp root = group.members.back();
  OpBuilder builder(root);
  SmallVector<StringRef> ops(merged.ops.begin(), merged.ops.end());
  SmallVector<NamedAttribute> params = {
      builder.getNamedAttr("ops", builder.getStrArrayAttr(ops)),
      builder.getNamedAttr("args", builder.getDenseI64ArrayAttr(merged.args))};
  std::string source;
  SmallVector<Location> locations;
  for (exec::KernelOp member : group.members) {
    if (!member.getSource().empty())
      source += (source.empty() ? "" : ", ") + member.getSource().str();
    locations.push_back(member.getLoc());
  }
  builder.create<exec::KernelOp>(builder.getFusedLoc(locations), lowering::kFusedKernel, merged.inputs,
                                 root.getOutputs(), builder.getDictionaryAttr(params), source);
  for (exec::KernelOp member : llvm::reverse(group.members))
    member.erase();
  for (Value value : group.internal)
    if (Operation *buffer = value.getDefiningOp(); buffer && buffer->use_empty())
      buffer->erase();
}

struct FuseElementwisePass
    : shardc::lowering::impl::FuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    // Grouped first, fused after: linear in the program (growing a fused
    // kernel one producer at a time copied its expression at every step).
    DenseMap<Operation *, Expression> expressions;
    getOperation().walk([&](exec::KernelOp kernel) {
      if (std::optional<Expression> expression = expressionOf(kernel))
        expressions[kernel] = std::move(*expression);
    });
    for (const Group &group : findGroups(getOperation(), expressions))
      if (group.members.size() > 1)
        fuseGroup(group, expressions);
  }
};

} // namespace
