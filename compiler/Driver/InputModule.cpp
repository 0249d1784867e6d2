//===- InputModule.cpp - the module shardc starts from --------------------===//
#include "compiler/Driver/InputModule.h"

#include "compiler/Driver/Diagnostics.h"
#include "compiler/Driver/Options.h"
#include "compiler/Import/Importer.h"
#include "compiler/Import/WeightReader.h"
#include "dialects/Dist/DistDialect.h"
#include "dialects/Exec/ExecDialect.h"
#include "dialects/Graph/GraphDialect.h"
#include "dialects/Graph/GraphOps.h"
#include "passes/Sharding/ShardingConversion.h"
#include "runtime/core/PrintableText.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace shardc::driver {
namespace {

/// Whether `c` may continue an alias name after `#` or `!` (MLIR's lexer:
/// a suffix-id).
bool isAliasChar(char c) { return llvm::isAlnum(c) || llvm::StringRef("$._-").contains(c); }

/// Where MLIR text first nests deeper than kMaxMlirNesting: brackets ((, [,
/// {, <) outside string literals and comments, and an alias (#name, !name)
/// as deep where it is used as its definition reaches. A cheap pass over the
/// bytes before the parser recurses into them; an alias counts everything up
/// to the next definition (the ops after the last one too), which only
/// overstates. None when nothing does.
std::optional<size_t> firstTooDeep(StringRef text) {
  SmallVector<char> open;
  llvm::StringMap<unsigned> aliasDepth;
  unsigned *defining = nullptr; // the depth of the alias being defined
  auto tooDeep = [&](unsigned depth) {
    if (defining)
      *defining = std::max(*defining, depth);
    return depth > kMaxMlirNesting;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') { // to the closing quote, or the line's end as the lexer stops there
      for (++i; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (text.substr(i).starts_with("//")) {
      i = std::min(text.find('\n', i), text.size());
    } else if (text.substr(i).starts_with("->")) {
      ++i; // not a closing '>'
    } else if (StringRef("([{<").contains(c)) {
      open.push_back(c);
      if (tooDeep(open.size()))
        return i;
    } else if (StringRef(")]}>").contains(c)) {
      // A bracket that closes none open ('>=' in an integer set) counts as nothing.
      static constexpr StringRef kOpening = "([{<", kClosing = ")]}>";
      if (!open.empty() && open.back() == kOpening[kClosing.find(c)])
        open.pop_back();
    } else if ((c == '#' || c == '!') && i + 1 < text.size() && isAliasChar(text[i + 1])) {
      size_t end = i + 1;
      bool digits = llvm::isDigit(text[end]); // #0: digits only
      while (end < text.size() && (digits ? llvm::isDigit(text[end]) : isAliasChar(text[end])))
        ++end;
      StringRef name = text.slice(i, end);
      size_t next = text.find_first_not_of(" \t\r\n", end);
      if (open.empty() && next < text.size() && text[next] == '=' &&
          !text.substr(next).starts_with("==")) {
        defining = &aliasDepth[name]; // StringMap's entries stay where they are
        *defining = 0;
      } else if (auto found = aliasDepth.find(name); found != aliasDepth.end()) {
        // An alias used past the end of its own definition (the ops after
        // it) does not deepen itself.
        unsigned depth = open.size() + found->second;
        if (&found->second == defining ? depth > kMaxMlirNesting : tooDeep(depth))
          return i;
      }
      i = end - 1;
    }
  }
  return std::nullopt;
}

/// How many attributes, types and locations a node holds, each alias
/// counted where it is used: what printing it takes. Each distinct node is
/// counted once (an alias used twice by the next doubles with each: a
/// billion laughs), as deep as firstTooDeep let the nesting go.
class ExpandedSize {
public:
  template <typename Node> uint64_t of(Node node) {
    const void *key = node.getAsOpaquePointer();
    if (auto known = sizes.find(key); known != sizes.end())
      return known->second;
    uint64_t size = 1;
    auto add = [&](auto inner) { size = llvm::SaturatingAdd(size, of(inner)); };
    node.walkImmediateSubElements(add, add);
    return sizes[key] = size;
  }

private:
  llvm::DenseMap<const void *, uint64_t> sizes;
};

/// Fails unless `module`'s attributes, types and locations expanded hold at
/// most kMaxMlirExpansion nodes, before a verifier's diagnostic prints one;
/// the error names the file alone, as the op's location may be the culprit.
LogicalResult checkExpansion(ModuleOp module, StringRef path) {
  ExpandedSize size;
  uint64_t total = 0;
  auto add = [&](auto node) { total = llvm::SaturatingAdd(total, size.of(node)); };
  module.walk([&](Operation *op) {
    add(Attribute(op->getLoc()));
    add(Attribute(op->getAttrDictionary()));
    llvm::for_each(op->getResultTypes(), add);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments()) {
          add(argument.getType());
          add(Attribute(argument.getLoc()));
        }
  });
  if (total <= kMaxMlirExpansion)
    return success();
  return emitError(FileLineColLoc::get(module.getContext(), path, 0, 0))
         << "attributes, types and locations come to more than " << kMaxMlirExpansion
         << " once each alias is expanded where it is used; expected a module as --emit=graph "
            "prints it";
}

/// Whether `text` holds a control character (NUL, a newline, an escape):
/// names and paths reach file systems, terminals and other tools' formats.
/// The messages that say so escape it themselves (rt::printableName): the
/// diagnostic handler turns a newline into a space.
bool hasControlCharacter(StringRef text) {
  return llvm::any_of(text, rt::isControlByte);
}

/// Fails unless the input or output (`kind`) #`index` of `function` has a
/// name without control characters.
LogicalResult checkNamed(func::FuncOp function, StringRef kind, unsigned index, StringAttr name) {
  if (!name || name.getValue().empty())
    return emitError(function.getLoc())
           << kind << " #" << index << " has no " << graph::kNameAttrName
           << "; expected every input and output named, as --emit=graph prints them";
  if (hasControlCharacter(name.getValue()))
    return emitError(function.getLoc()) << kind << " '" << rt::printableName(name.getValue())
                                        << "' has a control character in its name";
  return success();
}

/// Each input and output of `function` named, without control characters,
/// once; an output may carry an input's name only by returning that input
/// (ONNX names a value, not a slot).
LogicalResult checkInputOutputNames(func::FuncOp function) {
  llvm::StringMap<unsigned> inputs;
  for (unsigned index = 0; index < function.getNumArguments(); ++index) {
    auto name = function.getArgAttrOfType<StringAttr>(index, graph::kNameAttrName);
    if (failed(checkNamed(function, "input", index, name)))
      return failure();
    if (!inputs.try_emplace(name.getValue(), index).second)
      return emitError(function.getLoc())
             << "input '" << name.getValue() << "' is listed twice; expected each input named once";
  }
  Operation *terminator = function.isExternal() ? nullptr : function.front().getTerminator();
  llvm::StringSet<> outputs;
  for (unsigned index = 0; index < function.getNumResults(); ++index) {
    auto name = function.getResultAttrOfType<StringAttr>(index, graph::kNameAttrName);
    if (failed(checkNamed(function, "output", index, name)))
      return failure();
    if (!outputs.insert(name.getValue()).second)
      return emitError(function.getLoc()) << "output '" << name.getValue()
                                          << "' is listed twice; expected each output named once";
    auto input = inputs.find(name.getValue());
    if (input != inputs.end() &&
        (!terminator || index >= terminator->getNumOperands() ||
         terminator->getOperand(index) != function.getArgument(input->second)))
      return emitError(function.getLoc())
             << "output '" << name.getValue()
             << "' has the name of an input but returns another value; expected an output "
                "named after an input to return that input";
  }
  return success();
}

/// The axes of `mesh` as --mesh takes them (less pp), and its ranks within
/// `maxRanks`; the verifier checked that the sizes are positive.
LogicalResult checkMesh(dist::MeshOp mesh, int64_t maxRanks) {
  std::vector<std::string> named;
  for (StringRef name : mesh.getAxisNames().getAsValueRange<StringAttr>()) {
    std::string problem = meshAxisNameProblem(name, named, /*pipeline=*/false);
    if (!problem.empty())
      return emitError(mesh.getLoc()) << "the module's dist.mesh: expected " << problem;
    named.push_back(name.str());
  }
  if (llvm::Error error = checkRankCount(sharding::meshShapeOf(mesh), maxRanks))
    return emitError(mesh.getLoc()) << llvm::toString(std::move(error));
  return success();
}

/// A graph.weight's or exec.weight's name without control characters and
/// its file (when it has one: a trained weight's state has none) inside
/// `folders`, the module's first (import::confineWeightFile's rule); the
/// file is replaced by its absolute path. Stacked experts' parts
/// (part_offsets) are ranges of that one file.
template <typename WeightOp>
LogicalResult checkWeight(WeightOp weight, ArrayRef<std::string> folders) {
  StringRef name = weight.getName(), file = weight.getFile();
  if (hasControlCharacter(name))
    return emitError(weight.getLoc())
           << "weight '" << rt::printableName(name) << "' has a control character in its name";
  if (file.empty())
    return success();
  if (hasControlCharacter(file))
    return emitError(weight.getLoc())
           << "weight '" << name << "' reads '" << rt::printableName(file)
           << "', a path with a control character";
  std::string allowed = "the module's folder '" + folders.front() + "'";
  for (auto [index, folder] : llvm::enumerate(folders.drop_front()))
    allowed += (index ? ", '" : " or --weights-dir '") + folder + "'";
  if (folders.size() == 1)
    allowed += " (give another with --weights-dir)";
  FailureOr<std::string> path = import::confineWeightFile(
      weight.getLoc(), "weight '" + name + "' reads", file, folders.front(), folders, allowed);
  if (failed(path))
    return failure();
  weight.setFile(*path);
  return success();
}

/// The rules of parseMlirInput past its ops' verifiers.
LogicalResult checkMlirModule(ModuleOp module, StringRef path, const MlirInputRules &rules) {
  StringRef moduleFolder = llvm::sys::path::parent_path(path);
  std::vector<std::string> folders{moduleFolder.empty() ? "." : moduleFolder.str()};
  folders.insert(folders.end(), rules.weightDirs.begin(), rules.weightDirs.end());
  WalkResult walked = module.walk([&](Operation *op) {
    LogicalResult checked =
        llvm::TypeSwitch<Operation *, LogicalResult>(op)
            .Case([](func::FuncOp function) { return checkInputOutputNames(function); })
            .Case([&](dist::MeshOp mesh) { return checkMesh(mesh, rules.maxRanks); })
            .Case<graph::WeightOp, exec::WeightOp>(
                [&](auto weight) { return checkWeight(weight, folders); })
            .Default([](Operation *) { return success(); });
    return failed(checked) ? WalkResult::interrupt() : WalkResult::advance();
  });
  return failure(walked.wasInterrupted());
}

} // namespace

bool isMlirInput(StringRef path) { return llvm::sys::path::extension(path) == ".mlir"; }

std::optional<Phase> inputPhase(StringRef path) {
  return isMlirInput(path) ? std::optional<Phase>(Phase::Graph) : std::nullopt;
}

FailureOr<OwningOpRef<ModuleOp>> parseMlirInput(MLIRContext &context,
                                                std::unique_ptr<llvm::MemoryBuffer> buffer,
                                                StringRef path, const MlirInputRules &rules) {
  llvm::SourceMgr sourceMgr;
  unsigned id = sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  StringRef text = sourceMgr.getMemoryBuffer(id)->getBuffer();
  if (std::optional<size_t> at = firstTooDeep(text)) {
    auto [line, column] =
        sourceMgr.getLineAndColumn(llvm::SMLoc::getFromPointer(text.data() + *at));
    return emitError(FileLineColLoc::get(&context, path, line, column))
           << "brackets, regions or aliases nest deeper than " << kMaxMlirNesting
           << " levels; expected a module as --emit=graph prints it";
  }
  // Parse errors are diagnostics at the file's line and column: one line
  // each. The verifiers run once the module is known to print in bounds.
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context, /*verifyAfterParse=*/false));
  if (!module || failed(checkExpansion(*module, path)) || failed(verify(*module)) ||
      failed(checkMlirModule(*module, path, rules)))
    return failure();
  return module;
}

FailureOr<OwningOpRef<ModuleOp>> loadInput(MLIRContext &context, StringRef path,
                                           const import::ImportOptions &options,
                                           const MlirInputRules &rules, StringRef tool) {
  if (isMlirInput(path)) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer) {
      printError(tool, path + ": cannot read the file: " + buffer.getError().message());
      return failure();
    }
    return parseMlirInput(context, std::move(*buffer), path, rules);
  }
  auto model = import::loadModel(path.str());
  if (!model) {
    printError(tool, llvm::toString(model.takeError()));
    return failure();
  }
  auto imported = import::importModel(context, *model, options);
  if (failed(imported))
    return failure();
  return std::move(*imported);
}

} // namespace shardc::driver
