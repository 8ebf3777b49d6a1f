// The artifact's pre-packed weights: constants in the layouts oneDNN's primitives asked for when
// the compile made the declared shapes' plans (engine/onednn/weight_cache.h), stored so that
// loading takes them instead of reordering. The index names each by its source tensor's offset in
// the weights section and the two oneDNN memory descriptors; the data section holds the bytes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "engine/onednn/weight_cache.h"
#include "ir/tensor.h"

namespace kiln::artifact {

struct PackedSections {
  std::string index, data;
  int entries = 0;
  uint64_t bytes = 0;
  int skipped = 0;  // packed constants that are not initializers (computed at plan time)
};
PackedSections encode_packed(const engine::WeightCache& cache,
                             const std::map<const void*, uint64_t>& weight_offsets);

// Hands every entry to `cache` (WeightCache::preload). Fails (kBadModel) on an index that points
// outside its sections or at a tensor the graph does not have. Returns the entry count.
int preload_packed(engine::WeightCache& cache, std::span<const uint8_t> index,
                   std::span<const uint8_t> data, const std::map<uint64_t, Tensor>& weights_by_offset,
                   std::shared_ptr<void> owner);

}  // namespace kiln::artifact
