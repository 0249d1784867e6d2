//===- SharedPackedWeights.cpp - one packed copy of a weight block per process ===//
#include "runtime/cpu/SharedPackedWeights.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

namespace shardc::rt::cpu {
namespace {

using BlockKey = std::tuple<std::uintptr_t, bool, int64_t, int64_t, int64_t, int64_t>;

/// One packed copy, or the promise of one: the first thread to take
/// `packing` packs, and threads asking meanwhile wait on it.
struct Entry {
  dnnl::memory::desc layout;
  std::mutex packing;
  std::weak_ptr<const dnnl::memory> packed;
};

struct Registry {
  std::mutex lock;
  std::map<BlockKey, std::vector<std::shared_ptr<Entry>>> entries;
  size_t liveBytes = 0, peakBytes = 0;

  void packed(size_t bytes) {
    std::lock_guard<std::mutex> guard(lock);
    liveBytes += bytes;
    peakBytes = std::max(peakBytes, liveBytes);
  }
  void released(size_t bytes) {
    std::lock_guard<std::mutex> guard(lock);
    liveBytes -= bytes;
  }

  /// The entry of `key` in `layout`, made if there is none. Drops the
  /// entries of `key` that nothing holds and no thread is packing (the map
  /// alone owns them).
  std::shared_ptr<Entry> entryFor(const BlockKey &key, const dnnl::memory::desc &layout) {
    std::lock_guard<std::mutex> guard(lock);
    std::vector<std::shared_ptr<Entry>> &sameBlock = entries[key];
    sameBlock.erase(std::remove_if(sameBlock.begin(), sameBlock.end(),
                                   [](const std::shared_ptr<Entry> &entry) {
                                     return entry.use_count() == 1 && entry->packed.expired();
                                   }),
                    sameBlock.end());
    for (const std::shared_ptr<Entry> &entry : sameBlock)
      if (entry->layout == layout)
        return entry;
    auto entry = std::make_shared<Entry>();
    entry->layout = layout;
    sameBlock.push_back(entry);
    return entry;
  }

  PackedBlocks live() {
    std::lock_guard<std::mutex> guard(lock);
    PackedBlocks blocks{0, liveBytes, peakBytes};
    for (const auto &[key, sameBlock] : entries)
      for (const std::shared_ptr<Entry> &entry : sameBlock)
        blocks.count += entry->packed.expired() ? 0 : 1;
    return blocks;
  }
};

/// Never destroyed: a packed copy freed during exit (a step held by a
/// static, or by an interpreter finalizing late) still finds it.
Registry &registry() {
  static Registry *instance = new Registry();
  return *instance;
}

} // namespace

StatusOr<std::shared_ptr<const dnnl::memory>>
sharedPackedBlock(const WeightBlock &block, const dnnl::memory::desc &layout,
                  const std::function<StatusOr<dnnl::memory>()> &pack) {
  const BlockKey key{reinterpret_cast<std::uintptr_t>(block.weight), block.transposed, block.k,
                     block.n, block.begin, block.width};
  std::shared_ptr<Entry> entry = registry().entryFor(key, layout);
  std::lock_guard<std::mutex> packing(entry->packing);
  if (std::shared_ptr<const dnnl::memory> packed = entry->packed.lock())
    return packed;
  // The copy counts toward the process's packed bytes while it lives.
  const size_t bytes = layout.get_size();
  StatusOr<dnnl::memory> made = pack();
  if (!made)
    return made.status();
  std::shared_ptr<const dnnl::memory> packed(new dnnl::memory(std::move(*made)),
                                             [bytes](const dnnl::memory *copy) {
                                               registry().released(bytes);
                                               delete copy;
                                             });
  registry().packed(bytes);
  entry->packed = packed;
  return packed;
}

PackedBlocks livePackedBlocks() { return registry().live(); }

} // namespace shardc::rt::cpu
