//===- ArtifactFuzzer.cpp - libFuzzer target over the artifact loader ----===//
//
// Feeds arbitrary bytes through what `shardrun ARTIFACT` does to rank 0 of
// an artifact: read the layout, load and check the manifest, the program
// and the weights, prepare the program on the CPU and run it once on zero
// inputs. Any input must end in success or a one-line error: never a crash,
// a sanitizer report or a hang.
//
// An input is the artifact's three files one after the other, each part
// ended by kSeparator: manifest.json, rank0.program, rank0.safetensors
// (test/fuzz/pack_artifact.py makes one from an artifact directory). The
// manifest is not checksummed, so an attacker rewrites its sizes and CRC-32s
// to match whatever files they wrote; the harness does the same, so the
// fuzzer's mutations reach the program and weight checks instead of dying at
// the checksum.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Artifact.h"
#include "runtime/core/Executor.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/cpu/CpuBackend.h"
#include "runtime/io/Checksum.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

namespace {

constexpr std::string_view kSeparator = "\n#shardc-fuzz-file#\n";
const char *const kFiles[] = {"manifest.json", "rank0.program", "rank0.safetensors"};

/// Bigger arenas and inputs are valid but only slow the fuzzer down (and
/// trip libFuzzer's memory limit); the checks that matter run before.
constexpr uint64_t kMaxBytes = 16 << 20;

/// One folder per fuzzing process, rewritten for every input.
const std::string &directory() {
  static const std::string path = [] {
    char pattern[] = "/tmp/shardc-artifact-fuzz-XXXXXX";
    if (!mkdtemp(pattern))
      std::abort();
    return std::string(pattern);
  }();
  return path;
}

void writeFile(const std::string &name, std::string_view bytes) {
  std::ofstream out(directory() + "/" + name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// The manifest with the program's and the weights' true sizes and CRC-32s.
std::string withChecksums(std::string_view manifest, std::string_view program,
                          std::string_view weights) {
  nlohmann::json json = nlohmann::json::parse(manifest, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("files") || !json["files"].is_object())
    return std::string(manifest);
  for (auto [name, bytes] : {std::pair{kFiles[1], program}, std::pair{kFiles[2], weights}}) {
    uint32_t crc = shardc::rt::io::crc32Update(0, bytes.data(), bytes.size());
    json["files"][name] = {{"bytes", bytes.size()}, {"crc32", shardc::rt::io::crc32Hex(crc)}};
  }
  return json.dump();
}

/// The bytes of the program's state buffers, which the executor allocates
/// beside the arena (a zero_init state's size is bounded by nothing else);
/// counted until past kMaxBytes.
uint64_t stateBytes(const shardc::schema::Program &program) {
  using namespace shardc::rt;
  uint64_t bytes = 0;
  for (const shardc::schema::Buffer *buffer : *program.buffers())
    if (buffer->storage() == shardc::schema::Storage::State && bytes <= kMaxBytes)
      bytes += static_cast<uint64_t>(
                   numElements(Shape(buffer->shape()->begin(), buffer->shape()->end()))) *
               dtypeSize(static_cast<DType>(buffer->dtype()));
  return bytes;
}

void runArtifact() {
  using namespace shardc::rt;
  StatusOr<ArtifactLayout> layout = readArtifactLayout(directory());
  if (!layout)
    return;
  StatusOr<Artifact> artifact = loadArtifact(*layout, 0);
  if (!artifact || artifact->program->arena_bytes() > kMaxBytes ||
      stateBytes(*artifact->program) > kMaxBytes)
    return;
  std::vector<HostTensor> inputs;
  uint64_t inputBytes = 0;
  for (const TensorSignature &input : artifact->inputs) {
    inputBytes += static_cast<uint64_t>(numElements(input.shape)) * dtypeSize(input.dtype);
    if (inputBytes > kMaxBytes)
      return;
    inputs.emplace_back(input.dtype, input.shape);
  }
  std::vector<const HostTensor *> ordered;
  for (const HostTensor &input : inputs)
    ordered.push_back(&input);
  cpu::CpuDevice device;
  auto executor = Executor::prepare(*artifact, device);
  if (!executor)
    return;
  std::vector<HostTensor> outputs;
  (void)(*executor)->run(ordered, outputs);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  shardc::rt::cpu::setThreads(1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view rest(reinterpret_cast<const char *>(data), size);
  std::string_view parts[3];
  for (std::string_view &part : parts) {
    size_t end = rest.find(kSeparator);
    part = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + kSeparator.size());
  }
  writeFile(kFiles[0], withChecksums(parts[0], parts[1], parts[2]));
  writeFile(kFiles[1], parts[1]);
  writeFile(kFiles[2], parts[2]);
  runArtifact();
  return 0;
}
