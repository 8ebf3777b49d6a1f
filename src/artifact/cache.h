// The artifact cache (`kiln compile --cache DIR`): artifacts stored as DIR/<key>.kiln, the key a
// sha256 of the model's bytes, the options, the target and this kiln (compile_key). A hit touches
// the file (its mtime is its last use); a store writes atomically, then evicts the least recently
// used until the folder is under its size limit.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace kiln::artifact {

inline constexpr uint64_t kDefaultCacheBytes = uint64_t(2) << 30;

// "2G", "512M", "64K", "1000": bytes; fails (kBadInput) otherwise.
uint64_t parse_size(const std::string& text);

struct Eviction {
  int files = 0;
  uint64_t bytes = 0;
};

class ArtifactCache {
 public:
  ArtifactCache(std::filesystem::path dir, uint64_t max_bytes);

  std::filesystem::path path_of(const std::string& key) const;
  // The cached artifact of `key` when there is one that reads as an artifact (a damaged entry is
  // removed and missed); marks it used now.
  std::optional<std::filesystem::path> lookup(const std::string& key);
  // Writes the artifact atomically, then evicts others until the cache fits its limit.
  std::filesystem::path store(const std::string& key, const std::string& bytes, Eviction* evicted = nullptr);
  uint64_t size_bytes() const;  // what the cache's artifacts take now

 private:
  std::filesystem::path dir_;
  uint64_t max_bytes_;
};

}  // namespace kiln::artifact
