// SHA-256 (FIPS 180-4): content hashes (artifact manifests and cache keys, the serve registry's
// blobs) and token secrets. Streaming (Sha256) or of one string (sha256_hex).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace kiln {

class Sha256 {
 public:
  Sha256();
  void update(std::span<const uint8_t> bytes);
  void update(std::string_view s) { update({reinterpret_cast<const uint8_t*>(s.data()), s.size()}); }
  std::string hex();  // the digest as 64 lowercase hex digits; the object is spent after it

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

std::string sha256_hex(std::string_view bytes);

}  // namespace kiln
