//===- OnnxExport.cpp - a training artifact's trained model as ONNX -------===//
#include "runtime/session/OnnxExport.h"
#include "runtime/session/TensorBlocks.h"

#include "runtime/io/AtomicFile.h"
#include "runtime/io/Checksum.h"
#include "runtime/io/MappedFile.h"
#include "runtime/io/OnnxModel.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cstring>
#include <set>

#include <sys/stat.h>

namespace shardc::rt {

StatusOr<ExportPlan> readExportPlan(const ArtifactLayout &layout) {
  const std::string manifestPath = layout.directory + "/manifest.json";
  auto fail = [&](const std::string &message) {
    return Status::error(manifestPath + ": " + message);
  };
  const nlohmann::json &manifest = *layout.manifest;
  const nlohmann::json training = manifest.value("training", nlohmann::json::object());
  if (!training.is_object() || !training.contains("export"))
    return Status::error(layout.directory +
                         ": has no model to export (compiled by a shardc without ONNX export; "
                         "compile it again with shardc --train)");
  const nlohmann::json &section = training.at("export");
  if (!section.is_object())
    return fail("training.export: expected an object");
  const nlohmann::json model = section.value("model", nlohmann::json());
  if (model.is_null()) {
    const nlohmann::json reason = section.value("reason", nlohmann::json());
    return Status::error(layout.directory + ": cannot be exported to ONNX: " +
                         (reason.is_string() ? io::printable(reason.get<std::string>())
                                             : std::string("(no reason given)")));
  }
  ExportPlan plan;
  const nlohmann::json files = manifest.value("files", nlohmann::json::object());
  if (!model.is_string() || model.get<std::string>().empty() ||
      model.get<std::string>().find('/') != std::string::npos || !files.is_object() ||
      !files.contains(model.get<std::string>()))
    return fail("training.export.model: expected the name of a file the manifest lists");
  const nlohmann::json &facts = files.at(model.get<std::string>());
  if (!facts.is_object() || !facts.value("bytes", nlohmann::json()).is_number_unsigned() ||
      !facts.value("crc32", nlohmann::json()).is_string())
    return fail("files: lacks the size and CRC-32 of '" + model.get<std::string>() + "'");
  plan.modelPath = layout.directory + "/" + model.get<std::string>();
  plan.modelBytes = facts.at("bytes").get<uint64_t>();
  plan.modelCrc32 = facts.at("crc32").get<std::string>();

  const nlohmann::json parameters = training.value("parameters", nlohmann::json());
  if (!parameters.is_array())
    return fail("training.parameters: expected an array");
  for (const nlohmann::json &entry : parameters) {
    ExportParameter parameter;
    const std::string where = "training.parameters[" + std::to_string(plan.parameters.size()) + "]";
    if (!entry.is_object() || !entry.value("buffer", nlohmann::json()).is_string() ||
        !entry.value("initializer", nlohmann::json()).is_string())
      return fail(where + ": expected an object with a buffer and an initializer");
    parameter.buffer = entry.at("buffer").get<std::string>();
    parameter.initializer = entry.at("initializer").get<std::string>();
    auto stored = shapeOf(entry.value("stored_shape", nlohmann::json()));
    auto box = shapeOf(entry.value("box_offsets", nlohmann::json()));
    auto shape = shapeOf(entry.value("shape", nlohmann::json()));
    if (!stored || !box || !shape || !fits(*box, *shape, *stored))
      return fail(where + ": expected a shape, box_offsets and stored_shape that hold it");
    parameter.storedShape = *stored;
    parameter.boxOffsets = *box;
    parameter.shape = *shape;
    const nlohmann::json blocks = entry.value("blocks", nlohmann::json());
    if (!blocks.is_array() || blocks.size() != static_cast<size_t>(layout.ranks))
      return fail(where + ".blocks: expected one block offset per rank (" +
                  std::to_string(layout.ranks) + ")");
    for (const nlohmann::json &block : blocks) {
      if (block.is_null()) { // the rank holds none (a pipeline's other stages)
        parameter.blocks.push_back(std::nullopt);
        continue;
      }
      auto offsets = shapeOf(block);
      if (!offsets || offsets->size() != shape->size())
        return fail(where + ".blocks: expected offsets of " + std::to_string(shape->size()) +
                    " dims");
      parameter.blocks.push_back(*offsets);
    }
    if (std::none_of(parameter.blocks.begin(), parameter.blocks.end(),
                     [](const std::optional<Shape> &block) { return block.has_value(); }))
      return fail(where + ".blocks: no rank holds '" + io::printable(parameter.buffer) + "'");
    const nlohmann::json parts = entry.value("parts", nlohmann::json::array());
    const size_t slices = parameter.storedShape.empty() ? 0 : size_t(parameter.storedShape[0]);
    if (!parts.is_array() || (!parts.empty() && parts.size() != slices))
      return fail(where + ".parts: expected one initializer name per slice of dim 0 (" +
                  std::to_string(slices) + ")");
    for (const nlohmann::json &part : parts) {
      if (!part.is_string() || part.get<std::string>().empty())
        return fail(where + ".parts: expected initializer names");
      parameter.parts.push_back(part.get<std::string>());
    }
    plan.parameters.push_back(std::move(parameter));
  }
  const nlohmann::json ties = training.value("ties", nlohmann::json::array());
  if (!ties.is_array())
    return fail("training.ties: expected an array");
  for (const nlohmann::json &entry : ties) {
    if (!entry.is_object() || !entry.value("initializer", nlohmann::json()).is_string() ||
        !entry.value("of", nlohmann::json()).is_string() ||
        !entry.value("transposed", nlohmann::json()).is_boolean())
      return fail("training.ties: expected objects with initializer, of and transposed");
    plan.ties.push_back({entry.at("initializer").get<std::string>(),
                         entry.at("of").get<std::string>(), entry.at("transposed").get<bool>()});
  }
  return plan;
}

StatusOr<std::map<std::string, HostTensor>> assembleInitializers(const ExportPlan &plan,
                                                                 const ReadBlock &read) {
  std::map<std::string, HostTensor> values;
  // Elements each initializer got, to see that every one was trained.
  std::map<std::string, int64_t> covered;
  for (const ExportParameter &parameter : plan.parameters) {
    std::set<Shape> seen;
    for (size_t rank = 0; rank < parameter.blocks.size(); ++rank) {
      if (!parameter.blocks[rank])
        continue; // the rank holds no block of it
      const Shape &offsets = *parameter.blocks[rank];
      if (!seen.insert(offsets).second)
        continue; // a replica of a block already placed
      StatusOr<HostTensor> block = read(static_cast<int>(rank), parameter.buffer);
      if (!block)
        return block.status();
      if (!fits(offsets, block->shape, parameter.shape))
        return Status::error("rank " + std::to_string(rank) + "'s block " +
                             formatShape(block->shape) + " of '" + parameter.buffer +
                             "' does not fit its shape " + formatShape(parameter.shape));
      auto [whole, fresh] =
          values.try_emplace(parameter.initializer, block->dtype, parameter.storedShape);
      if (whole->second.dtype != block->dtype || whole->second.shape != parameter.storedShape)
        return Status::error("the trained buffers of '" + parameter.initializer +
                             "' disagree on its type or shape");
      Shape at = offsets;
      for (size_t dim = 0; dim < at.size(); ++dim)
        at[dim] += parameter.boxOffsets[dim];
      copyOverlap(block->bytes.data(), block->shape, at, whole->second.bytes.data(),
                  parameter.storedShape, Shape(at.size(), 0), dtypeSize(block->dtype));
      covered[parameter.initializer] += block->numel();
    }
  }
  for (const auto &[name, value] : values)
    if (covered[name] != value.numel())
      return Status::error("initializer '" + name + "': the trained blocks cover " +
                           std::to_string(covered[name]) + " of its " +
                           std::to_string(value.numel()) + " elements");
  // A stack of experts goes back into its experts' initializers.
  for (const ExportParameter &parameter : plan.parameters) {
    auto stacked = values.find(parameter.initializer);
    if (parameter.parts.empty() || stacked == values.end())
      continue;
    const HostTensor whole = std::move(stacked->second);
    values.erase(stacked);
    const Shape sliceShape(whole.shape.begin() + 1, whole.shape.end());
    const size_t sliceBytes = whole.bytes.size() / parameter.parts.size();
    for (size_t index = 0; index < parameter.parts.size(); ++index) {
      HostTensor slice(whole.dtype, sliceShape);
      std::memcpy(slice.bytes.data(), whole.bytes.data() + index * sliceBytes, sliceBytes);
      if (!values.emplace(parameter.parts[index], std::move(slice)).second)
        return Status::error("the stacked weight '" + parameter.initializer + "' names '" +
                             parameter.parts[index] + "', which is trained already");
    }
  }
  for (const ExportTie &tie : plan.ties) {
    auto original = values.find(tie.of);
    if (original == values.end())
      return Status::error("the tie of '" + tie.initializer + "' names '" + tie.of +
                           "', which is not trained");
    HostTensor copy = original->second;
    if (tie.transposed) {
      const Shape &shape = original->second.shape;
      if (shape.size() != 2)
        return Status::error("the tie of '" + tie.initializer + "' transposes '" + tie.of +
                             "', which is not a matrix");
      copy.shape = {shape[1], shape[0]};
      const size_t width = dtypeSize(copy.dtype);
      for (int64_t row = 0; row < shape[0]; ++row)
        for (int64_t column = 0; column < shape[1]; ++column)
          std::memcpy(copy.bytes.data() + static_cast<size_t>(column * shape[0] + row) * width,
                      original->second.bytes.data() +
                          static_cast<size_t>(row * shape[1] + column) * width,
                      width);
    }
    if (!values.emplace(tie.initializer, std::move(copy)).second)
      return Status::error("the tie of '" + tie.initializer + "' names a trained initializer");
  }
  return values;
}

Status checkExportDestination(const std::string &path) {
  StatusOr<std::string> target = io::replaceableFile(path);
  if (!target)
    return target.status();
  struct stat info;
  if (::stat(target->c_str(), &info) != 0)
    return {};
  StatusOr<io::MappedFile> existing = io::MappedFile::open(*target);
  if (!existing)
    return existing.status();
  std::string_view bytes(reinterpret_cast<const char *>(existing->data()), existing->size());
  if (!io::hasMetadataKey(bytes, io::kExportMarkerKey))
    return Status::error(path + ": exists and is not a model shardrun exported; it is not "
                                "replaced (remove it, or name another file)");
  return {};
}

Status writeExport(const ExportPlan &plan, const std::map<std::string, HostTensor> &values,
                   const std::string &path) {
  if (Status status = checkExportDestination(path); !status)
    return status;
  StatusOr<io::MappedFile> model = io::MappedFile::open(plan.modelPath);
  if (!model)
    return model.status();
  if (model->size() != plan.modelBytes ||
      io::crc32Hex(io::crc32Update(0, model->data(), model->size())) != plan.modelCrc32)
    return Status::error(plan.modelPath +
                         ": its size or CRC-32 differs from the manifest's (corrupted artifact?)");
  std::map<std::string, io::InitializerValue> written;
  for (const auto &[name, value] : values)
    written[name] = {value.dtype, value.shape, value.bytes.data()};
  StatusOr<io::AtomicFile> out = io::AtomicFile::create(path);
  if (!out)
    return out.status();
  std::string_view bytes(reinterpret_cast<const char *>(model->data()), model->size());
  if (Status status = io::writeModelWithInitializers(bytes, written, plan.modelPath, *out); !status)
    return status;
  return out->commit();
}

} // namespace shardc::rt
