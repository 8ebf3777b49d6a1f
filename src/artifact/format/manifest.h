// The manifest: the artifact's JSON section, what a person (or `kiln inspect`-like tools) reads
// about it and what the loader checks before anything else. docs/artifact.md lists every field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kiln::artifact {

// A declared shape profile of one symbolic dim: a list of values, or a range lo..hi.
struct DimProfile {
  std::string dim;
  std::vector<int64_t> values;  // a list ("seq=128,256,512"), or the two ends of a range
  bool range = false;           // "batch=1..8"
  bool allows(int64_t v) const;
  std::string to_string() const;  // "batch=1..8", "seq=128,256,512"
};
// Parses NAME=V1,V2 or NAME=LO..HI; fails (kBadInput) naming the flag's problem.
DimProfile parse_dim_profile(const std::string& spec);

// The fields the loader needs, read from (and written into) the manifest's JSON.
struct Manifest {
  uint32_t format_version = 0;
  std::string kiln_version;
  std::string target;                 // its name in targets.h
  std::string target_arch;
  int target_level = 0;
  std::vector<std::string> required_features;
  std::string onednn_version;         // the pre-packed weights' layouts are this oneDNN's
  std::vector<DimProfile> profiles;
  bool strict_shapes = false;
  // Input dims the loader plans ahead (each a list of dims per input, in feed order).
  std::vector<std::vector<std::vector<int64_t>>> planned_signatures;
  nlohmann::json json;                // everything, those fields included

  std::string to_text() const;  // the JSON text, indented
};

// Fails (kBadModel) on text that is not the JSON object a manifest is, naming the field.
Manifest parse_manifest(std::string_view text);
// Fills json from the typed fields (the typed fields win over json's same keys).
void sync_manifest_json(Manifest& m);

}  // namespace kiln::artifact
