//===- ExportModel.cpp - the source model a training artifact exports into ===//
#include "compiler/Artifact/ExportModel.h"

#include "compiler/Import/ModelLoader.h"
#include "runtime/io/OnnxModel.h"

#include <climits>

using namespace llvm;

namespace shardc::artifact {
namespace {

Error refuse(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// Leaves `tensor`'s name, type and dims: the runtime writes its data.
void dropData(onnx::TensorProto &tensor) {
  tensor.clear_raw_data();
  tensor.clear_float_data();
  tensor.clear_double_data();
  tensor.clear_int32_data();
  tensor.clear_int64_data();
  tensor.clear_uint64_data();
  tensor.clear_external_data();
  tensor.clear_data_location();
}

} // namespace

Expected<std::string> exportSkeleton(StringRef modelPath, const StringSet<> &trained) {
  Expected<import::LoadedModel> model = import::loadModel(modelPath);
  if (!model)
    return model.takeError();
  onnx::ModelProto &proto = model->proto;
  StringSet<> found;
  for (onnx::TensorProto &tensor : *proto.mutable_graph()->mutable_initializer()) {
    if (trained.contains(tensor.name())) {
      dropData(tensor);
      found.insert(tensor.name());
    } else if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
      return refuse("initializer '" + tensor.name() +
                    "' keeps its data in an external file, which the artifact does not carry");
    }
  }
  for (const auto &name : trained)
    if (!found.contains(name.getKey()))
      return refuse("the trained weight '" + name.getKey() +
                    "' is not an initializer of the model's graph");
  // One marker, whatever an earlier export of this model left.
  auto *properties = proto.mutable_metadata_props();
  for (int index = properties->size() - 1; index >= 0; --index)
    if (properties->Get(index).key() == rt::io::kExportMarkerKey)
      properties->DeleteSubrange(index, 1);
  onnx::StringStringEntryProto *marker = proto.add_metadata_props();
  marker->set_key(rt::io::kExportMarkerKey);
  marker->set_value("shardrun --export-onnx: the trained weights of a shardc training artifact");
  if (proto.ByteSizeLong() > static_cast<size_t>(INT_MAX))
    return refuse("the model without its trained weights is over protobuf's 2 GiB");
  std::string bytes;
  if (!proto.SerializeToString(&bytes))
    return refuse("the model could not be serialized");
  return bytes;
}

} // namespace shardc::artifact
