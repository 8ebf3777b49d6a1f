#include "artifact/format/format.h"

#include <cstring>

#include "artifact/format/byte_io.h"
#include "support/error.h"

#ifndef KILN_VERSION_STRING
#define KILN_VERSION_STRING "0.1.0"
#endif
#ifndef KILN_BUILD_ID
#define KILN_BUILD_ID "unknown"
#endif

namespace kiln::artifact {

namespace {
constexpr size_t kTableEntryBytes = 32;  // kind, flags, offset, length, checksum
constexpr uint32_t kFlagChecksum = 1;
}  // namespace

const char* section_name(SectionKind k) {
  switch (k) {
    case SectionKind::kManifest: return "manifest";
    case SectionKind::kGraph: return "graph";
    case SectionKind::kWeights: return "weights";
    case SectionKind::kPackedIndex: return "packed-index";
    case SectionKind::kPackedData: return "packed-data";
  }
  return "unknown";
}

const char* kiln_version() { return KILN_VERSION_STRING; }
const char* kiln_build_id() { return KILN_BUILD_ID; }

uint64_t fnv1a64(std::span<const uint8_t> bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) {
    h ^= b;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string write_container(const std::vector<SectionOut>& sections) {
  ByteWriter w;
  w.raw(kMagic, sizeof kMagic);
  w.u32(kFormatVersion);
  w.u32(kHeaderBytes);
  w.u64(0);  // file size, patched below
  w.u32(static_cast<uint32_t>(sections.size()));
  w.u32(0);
  w.u64(0);  // table offset, patched below
  char version[kVersionField] = {};
  std::strncpy(version, kiln_version(), kVersionField - 1);
  w.raw(version, kVersionField);
  w.pad_to(kHeaderBytes);
  struct Entry {
    uint32_t kind, flags;
    uint64_t offset, length, checksum;
  };
  std::vector<Entry> table;
  for (const SectionOut& s : sections) {
    w.pad_to(kAlignment);
    const auto* p = reinterpret_cast<const uint8_t*>(s.bytes.data());
    table.push_back({static_cast<uint32_t>(s.kind), s.checksum ? kFlagChecksum : 0u, w.size(),
                     s.bytes.size(), s.checksum ? fnv1a64({p, s.bytes.size()}) : 0});
    w.raw(s.bytes.data(), s.bytes.size());
  }
  w.pad_to(kAlignment);
  const uint64_t table_offset = w.size();
  for (const Entry& e : table) {
    w.u32(e.kind);
    w.u32(e.flags);
    w.u64(e.offset);
    w.u64(e.length);
    w.u64(e.checksum);
  }
  std::string& out = w.bytes();
  const uint64_t size = out.size();
  std::memcpy(out.data() + 16, &size, sizeof size);
  std::memcpy(out.data() + 32, &table_offset, sizeof table_offset);
  return std::move(out);
}

std::span<const uint8_t> Container::section(SectionKind k) const {
  auto it = sections.find(k);
  KILN_CHECK(it != sections.end(), ErrorKind::kBadModel, "artifact has no {} section",
             section_name(k));
  return it->second;
}

bool looks_like_artifact(std::span<const uint8_t> bytes) {
  return bytes.size() >= sizeof kMagic && std::memcmp(bytes.data(), kMagic, sizeof kMagic) == 0;
}

Container read_container(std::span<const uint8_t> bytes, std::shared_ptr<void> owner,
                         const std::string& what, bool verify_checksums) {
  KILN_CHECK(looks_like_artifact(bytes), ErrorKind::kBadModel,
             "'{}': not a kiln artifact (no KILNART magic)", what);
  ByteReader h(bytes, "'" + what + "': header");
  h.take(sizeof kMagic, "the magic");
  Container c;
  c.owner = std::move(owner);
  c.format_version = h.u32();
  const uint32_t header_bytes = h.u32();
  const uint64_t file_size = h.u64();
  const uint32_t count = h.u32();
  h.u32();
  const uint64_t table_offset = h.u64();
  auto version = h.take(kVersionField, "the kiln version");
  c.kiln_version.assign(reinterpret_cast<const char*>(version.data()),
                        strnlen(reinterpret_cast<const char*>(version.data()), kVersionField));
  KILN_CHECK(c.format_version == kFormatVersion, ErrorKind::kUnsupported,
             "'{}': artifact format version {} (written by kiln {}), this kiln {} reads version {}: "
             "recompile the model with this kiln (kiln compile)",
             what, c.format_version, c.kiln_version, kiln_version(), kFormatVersion);
  KILN_CHECK(header_bytes == kHeaderBytes, ErrorKind::kBadModel,
             "'{}': header size {}, expected {}", what, header_bytes, kHeaderBytes);
  KILN_CHECK(file_size == bytes.size(), ErrorKind::kBadModel,
             "'{}': the header says {} bytes, the file has {} (truncated or extended)", what,
             file_size, bytes.size());
  KILN_CHECK(count <= kMaxSections, ErrorKind::kBadModel, "'{}': {} sections (at most {})", what,
             count, kMaxSections);
  KILN_CHECK(table_offset >= kHeaderBytes && table_offset <= bytes.size() &&
                 count * kTableEntryBytes <= bytes.size() - table_offset,
             ErrorKind::kBadModel, "'{}': section table at offset {} outside the file", what,
             table_offset);
  ByteReader t(bytes.subspan(table_offset, count * kTableEntryBytes), "'" + what + "': section table");
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t kind = t.u32();
    const uint32_t flags = t.u32();
    const uint64_t offset = t.u64();
    const uint64_t length = t.u64();
    const uint64_t checksum = t.u64();
    KILN_CHECK(kind >= 1 && kind <= 5, ErrorKind::kBadModel, "'{}': section {} of unknown kind {}",
               what, i, kind);
    const auto k = static_cast<SectionKind>(kind);
    KILN_CHECK(offset % kAlignment == 0 && offset >= kHeaderBytes && offset <= table_offset &&
                   length <= table_offset - offset,
               ErrorKind::kBadModel, "'{}': {} section (offset {}, {} bytes) outside the data", what,
               section_name(k), offset, length);
    KILN_CHECK(!c.sections.contains(k), ErrorKind::kBadModel, "'{}': two {} sections", what,
               section_name(k));
    auto s = bytes.subspan(offset, length);
    if ((flags & kFlagChecksum) && verify_checksums)
      KILN_CHECK(fnv1a64(s) == checksum, ErrorKind::kBadModel,
                 "'{}': {} section is corrupted (checksum mismatch)", what, section_name(k));
    c.sections.emplace(k, s);
  }
  return c;
}

}  // namespace kiln::artifact
