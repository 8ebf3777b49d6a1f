// The kiln artifact's container: a fixed header, a table of sections (offset, length, checksum),
// and the sections themselves, each 64-byte aligned so that weights are views into the mapped file.
// No protobuf and no optimizer: this folder (kiln_artifact_format) links only the IR.
//
//   offset 0   header (64 bytes): magic "KILNART\0", format version, header size, file size,
//              section count, section table offset, kiln version (16 bytes, NUL-padded)
//   ...        sections, each at a multiple of 64
//   table      per section: kind, flags, offset, length, FNV-1a 64 checksum (0: not checked)
//
// Every number is little-endian. docs/artifact.md describes each section.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace kiln::artifact {

inline constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'A', 'R', 'T', '\0'};
// Bumped on any change a reader of the previous version would misread.
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint32_t kHeaderBytes = 64;
inline constexpr uint64_t kAlignment = 64;
inline constexpr uint32_t kMaxSections = 64;
inline constexpr size_t kVersionField = 16;

enum class SectionKind : uint32_t {
  kManifest = 1,     // JSON text (manifest.h)
  kGraph = 2,        // the model's IR (graph_codec.h)
  kWeights = 3,      // tensor bytes the graph section points into, each at a multiple of 64
  kPackedIndex = 4,  // weights reordered for oneDNN's primitives: which, from and to what layout
  kPackedData = 5,   // their bytes, each at a multiple of 64
};
const char* section_name(SectionKind k);

// The kiln version this code is (the writer records it; the loader compares it).
const char* kiln_version();
// The git commit kiln was configured at ("unknown" outside a checkout), for the cache key.
const char* kiln_build_id();

// FNV-1a, 64 bits: detects a corrupted manifest or graph section before it is parsed.
uint64_t fnv1a64(std::span<const uint8_t> bytes);

struct SectionOut {
  SectionKind kind;
  std::string bytes;
  bool checksum = true;  // weights are not hashed: every byte pattern is a valid number
};
// The whole file, sections in the order given.
std::string write_container(const std::vector<SectionOut>& sections);

// A parsed container over bytes someone else keeps alive (`owner`, e.g. a MappedFile).
struct Container {
  uint32_t format_version = 0;
  std::string kiln_version;
  std::map<SectionKind, std::span<const uint8_t>> sections;
  std::shared_ptr<void> owner;

  bool has(SectionKind k) const { return sections.contains(k); }
  // Fails (kBadModel) naming the section when it is missing.
  std::span<const uint8_t> section(SectionKind k) const;
};

// True when `bytes` start with the artifact magic (how run/bench/profile tell it from an .onnx).
bool looks_like_artifact(std::span<const uint8_t> bytes);

// Checks the header, the table and every checksum; fails with kBadModel (a corrupted or foreign
// file) or kUnsupported (another format version: says which and what to do). `what` names the file.
// verify_checksums=false: for the fuzz target, whose mutations must reach the section parsers.
Container read_container(std::span<const uint8_t> bytes, std::shared_ptr<void> owner,
                         const std::string& what, bool verify_checksums = true);

}  // namespace kiln::artifact
