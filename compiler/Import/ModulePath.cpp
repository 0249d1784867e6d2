//===- ModulePath.cpp - the torch module an ONNX node came from -----------===//
#include "compiler/Import/ModulePath.h"

#include "llvm/ADT/StringRef.h"

#include <google/protobuf/unknown_field_set.h>

#include <optional>
#include <vector>

namespace shardc::import {
namespace {

constexpr llvm::StringLiteral kNameScopesKey = "pkg.torch.onnx.name_scopes";
/// NodeProto.metadata_props (IR version 10) is newer than the libonnx this
/// links, whose NodeProto keeps it among the unknown fields.
constexpr int kNodeMetadataField = 9;

/// The value of metadata entry `key` of `node`, if present.
std::optional<std::string> nodeMetadata(const onnx::NodeProto &node, llvm::StringRef key) {
  const google::protobuf::UnknownFieldSet &fields =
      node.GetReflection()->GetUnknownFields(node);
  for (int i = 0; i < fields.field_count(); ++i) {
    const google::protobuf::UnknownField &field = fields.field(i);
    if (field.number() != kNodeMetadataField ||
        field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::StringStringEntryProto entry;
    if (entry.ParseFromString(field.length_delimited()) && entry.key() == key)
      return entry.value();
  }
  return std::nullopt;
}

/// The quoted strings of a Python list literal: ['', 'model', "it's"].
std::vector<std::string> pythonStrings(llvm::StringRef text) {
  std::vector<std::string> strings;
  while (true) {
    size_t open = text.find_first_of("'\"");
    if (open == llvm::StringRef::npos)
      return strings;
    char quote = text[open];
    size_t close = text.find(quote, open + 1);
    if (close == llvm::StringRef::npos)
      return strings;
    strings.push_back(text.slice(open + 1, close).str());
    text = text.drop_front(close + 1);
  }
}

/// The dynamo exporter's scopes: the innermost one that is a module path,
/// which the node's own name (the last scope) follows.
std::string fromNameScopes(llvm::StringRef value) {
  std::vector<std::string> scopes = pythonStrings(value);
  if (scopes.size() < 2)
    return {};
  return scopes[scopes.size() - 2];
}

/// The TorchScript exporter's /model/layers.0/self_attn/MatMul: every
/// component but the last (the op) is a module.
std::string fromNodeName(llvm::StringRef name) {
  if (!name.consume_front("/"))
    return {};
  size_t last = name.rfind('/');
  if (last == llvm::StringRef::npos)
    return {};
  std::string path = name.take_front(last).str();
  for (char &c : path)
    if (c == '/')
      c = '.';
  return path;
}

} // namespace

std::string modulePathOf(const onnx::NodeProto &node) {
  if (std::optional<std::string> scopes = nodeMetadata(node, kNameScopesKey))
    return fromNameScopes(*scopes);
  return fromNodeName(node.name());
}

} // namespace shardc::import
