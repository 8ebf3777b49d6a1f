#include "artifact/load/packed_weights.h"

#include "artifact/format/byte_io.h"
#include "artifact/format/format.h"
#include "support/error.h"

namespace kiln::artifact {

PackedSections encode_packed(const engine::WeightCache& cache,
                             const std::map<const void*, uint64_t>& weight_offsets) {
  PackedSections out;
  ByteWriter index, data;
  std::vector<engine::WeightCache::Packed> entries = cache.packed();
  std::vector<const engine::WeightCache::Packed*> kept;
  for (const auto& e : entries) {
    if (weight_offsets.contains(e.source)) kept.push_back(&e);
    else ++out.skipped;
  }
  index.u64(kept.size());
  for (const auto* e : kept) {
    data.pad_to(kAlignment);
    index.u64(weight_offsets.at(e->source));
    index.str(e->from_desc);
    index.str(e->to_desc);
    index.u64(data.size());
    index.u64(e->bytes.size());
    data.raw(e->bytes.data(), e->bytes.size());
    out.bytes += e->bytes.size();
  }
  data.pad_to(kAlignment);
  out.entries = static_cast<int>(kept.size());
  out.index = std::move(index.bytes());
  out.data = std::move(data.bytes());
  return out;
}

int preload_packed(engine::WeightCache& cache, std::span<const uint8_t> index,
                   std::span<const uint8_t> data, const std::map<uint64_t, Tensor>& weights_by_offset,
                   std::shared_ptr<void> owner) {
  ByteReader r(index, "artifact packed-index section");
  const uint64_t n = r.count(40, "packed weights");
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t source = r.u64();
    std::string from = r.str();
    std::string to = r.str();
    const uint64_t offset = r.u64();
    const uint64_t length = r.u64();
    auto it = weights_by_offset.find(source);
    if (it == weights_by_offset.end())
      r.bad(fmt::format("packed weight {} of a tensor at weights offset {} the graph does not have",
                        i, source));
    if (offset > data.size() || length > data.size() - offset || offset % kAlignment != 0)
      r.bad(fmt::format("packed weight {} at offset {} (+{}) outside the packed-data section "
                        "({} bytes) or unaligned", i, offset, length, data.size()));
    // Bytes held unaligned (an artifact read into memory, not mapped) are repacked instead.
    if (reinterpret_cast<uintptr_t>(data.data() + offset) % kAlignment != 0) continue;
    cache.preload(it->second, std::move(from), std::move(to), data.subspan(offset, length), owner);
  }
  if (!r.at_end()) r.bad("bytes after the last packed weight");
  return static_cast<int>(n);
}

}  // namespace kiln::artifact
