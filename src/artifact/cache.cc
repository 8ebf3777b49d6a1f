#include "artifact/cache.h"

#include <algorithm>
#include <charconv>
#include <system_error>
#include <vector>

#include "artifact/format/format.h"
#include "support/error.h"
#include "support/mapped_file.h"

namespace kiln::artifact {

namespace fs = std::filesystem;

namespace {

constexpr const char* kExtension = ".kiln";

struct Entry {
  fs::path path;
  fs::file_time_type used;
  uint64_t bytes;
};

std::vector<Entry> entries(const fs::path& dir) {
  std::vector<Entry> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec) || e.path().extension() != kExtension) continue;
    out.push_back({e.path(), e.last_write_time(ec), static_cast<uint64_t>(e.file_size(ec))});
  }
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  return out;
}

}  // namespace

uint64_t parse_size(const std::string& text) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  KILN_CHECK(ec == std::errc() && p != text.data(), ErrorKind::kBadInput,
             "size '{}': expected a number of bytes, optionally with K, M or G", text);
  const std::string_view unit(p, text.data() + text.size() - p);
  const uint64_t scale = unit.empty() ? 1 : unit == "K" ? 1ull << 10 : unit == "M" ? 1ull << 20
                         : unit == "G" ? 1ull << 30 : 0;
  KILN_CHECK(scale != 0, ErrorKind::kBadInput, "size '{}': unit '{}' (K, M or G)", text, unit);
  KILN_CHECK(v <= UINT64_MAX / scale, ErrorKind::kBadInput, "size '{}' is too large", text);
  return v * scale;
}

ArtifactCache::ArtifactCache(fs::path dir, uint64_t max_bytes)
    : dir_(std::move(dir)), max_bytes_(max_bytes) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  KILN_CHECK(fs::is_directory(dir_, ec), ErrorKind::kBadInput, "--cache '{}': not a folder kiln can make",
             dir_.string());
}

fs::path ArtifactCache::path_of(const std::string& key) const { return dir_ / (key + kExtension); }

std::optional<fs::path> ArtifactCache::lookup(const std::string& key) {
  const fs::path p = path_of(key);
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  try {
    auto f = MappedFile::open(p);
    read_container({f->data(), static_cast<size_t>(f->size())}, nullptr, p.string());
  } catch (const Error&) {
    fs::remove(p, ec);  // damaged (or from another format version): compiled again
    return std::nullopt;
  }
  fs::last_write_time(p, fs::file_time_type::clock::now(), ec);
  return p;
}

fs::path ArtifactCache::store(const std::string& key, const std::string& bytes, Eviction* evicted) {
  const fs::path p = path_of(key);
  write_file_atomically(p, bytes);
  Eviction ev;
  uint64_t total = 0;
  auto all = entries(dir_);
  for (const Entry& e : all) total += e.bytes;
  for (const Entry& e : all) {
    if (total <= max_bytes_) break;
    if (e.path == p) continue;  // the one just stored stays, even alone above the limit
    std::error_code ec;
    if (fs::remove(e.path, ec)) {
      total -= e.bytes;
      ++ev.files;
      ev.bytes += e.bytes;
    }
  }
  if (evicted) *evicted = ev;
  return p;
}

uint64_t ArtifactCache::size_bytes() const {
  uint64_t total = 0;
  for (const Entry& e : entries(dir_)) total += e.bytes;
  return total;
}

}  // namespace kiln::artifact
