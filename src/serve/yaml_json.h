// YAML text read as the JSON value it writes down, so that a YAML pipeline (kiln ci) is checked by
// the same field rules as a JSON one. The parser is yaml-cpp (Debian's libyaml-cpp-dev); this file
// gives its nodes JSON types by YAML 1.2's core schema:
//   plain scalars: null, ~ and empty -> null; true/false (any case form the schema lists) -> bool;
//   decimal, 0x and 0o integers -> integer; decimal floats, .inf, .nan -> number; the rest -> string;
//   quoted scalars and those tagged !!str stay strings; !!int, !!float, !!bool, !!null are checked.
// Mapping keys must be scalars and distinct. A pipeline is small and shallow, and its file may come
// from anyone's repository, so: at most `kMaxYamlDepth` levels and `kMaxYamlValues` values after
// aliases are expanded (an alias "bomb" of nested anchors is refused, not expanded). Errors are
// kBadInput, one line naming `what`, the line and the column.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kiln::serve {

inline constexpr int kMaxYamlDepth = 64;
inline constexpr int kMaxYamlValues = 100000;

// The one document of `text` (a second one, after a "---" or "..." line, is refused).
nlohmann::json yaml_to_json(std::string_view text, const std::string& what);

}  // namespace kiln::serve
