#include "artifact/format/manifest.h"

#include <fmt/format.h>

#include <charconv>

#include "support/error.h"

namespace kiln::artifact {

namespace {

int64_t parse_int(std::string_view s, const std::string& spec) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  KILN_CHECK(ec == std::errc() && p == s.data() + s.size() && v > 0, ErrorKind::kBadInput,
             "--shapes '{}': '{}' is not a positive integer", spec, s);
  return v;
}

template <typename T>
T field(const nlohmann::json& j, const char* key) {
  KILN_CHECK(j.contains(key), ErrorKind::kBadModel, "artifact manifest: no field '{}'", key);
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    fail(ErrorKind::kBadModel, "artifact manifest: field '{}' has the wrong type", key);
  }
}

}  // namespace

bool DimProfile::allows(int64_t v) const {
  if (range) return v >= values[0] && v <= values[1];
  for (int64_t x : values)
    if (x == v) return true;
  return false;
}

std::string DimProfile::to_string() const {
  if (range) return fmt::format("{}={}..{}", dim, values[0], values[1]);
  return fmt::format("{}={}", dim, fmt::join(values, ","));
}

DimProfile parse_dim_profile(const std::string& spec) {
  const size_t eq = spec.find('=');
  KILN_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < spec.size(), ErrorKind::kBadInput,
             "--shapes '{}': expected NAME=V1,V2 or NAME=LO..HI", spec);
  DimProfile p;
  p.dim = spec.substr(0, eq);
  const std::string_view rest = std::string_view(spec).substr(eq + 1);
  if (const size_t dots = rest.find(".."); dots != std::string_view::npos) {
    p.range = true;
    p.values = {parse_int(rest.substr(0, dots), spec), parse_int(rest.substr(dots + 2), spec)};
    KILN_CHECK(p.values[0] <= p.values[1], ErrorKind::kBadInput,
               "--shapes '{}': the range's low end is above its high end", spec);
    return p;
  }
  size_t start = 0;
  while (start <= rest.size()) {
    const size_t comma = rest.find(',', start);
    const auto item = rest.substr(start, comma == std::string_view::npos ? rest.npos : comma - start);
    p.values.push_back(parse_int(item, spec));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return p;
}

std::string Manifest::to_text() const { return json.dump(2); }

void sync_manifest_json(Manifest& m) {
  nlohmann::json& j = m.json;
  j["format_version"] = m.format_version;
  j["kiln_version"] = m.kiln_version;
  j["target"]["name"] = m.target;
  j["target"]["arch"] = m.target_arch;
  j["target"]["level"] = m.target_level;
  j["target"]["required_features"] = m.required_features;
  j["onednn_version"] = m.onednn_version;
  nlohmann::json profiles = nlohmann::json::array();
  for (const DimProfile& p : m.profiles)
    profiles.push_back({{"dim", p.dim}, {"values", p.values}, {"range", p.range},
                        {"spec", p.to_string()}});
  j["shape_profiles"] = profiles;
  j["strict_shapes"] = m.strict_shapes;
  j["planned_signatures"] = m.planned_signatures;
}

Manifest parse_manifest(std::string_view text) {
  Manifest m;
  try {
    m.json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail(ErrorKind::kBadModel, "artifact manifest: not JSON ({})", e.what());
  }
  KILN_CHECK(m.json.is_object(), ErrorKind::kBadModel, "artifact manifest: not a JSON object");
  const nlohmann::json& j = m.json;
  m.format_version = field<uint32_t>(j, "format_version");
  m.kiln_version = field<std::string>(j, "kiln_version");
  const auto target = field<nlohmann::json>(j, "target");
  KILN_CHECK(target.is_object(), ErrorKind::kBadModel, "artifact manifest: 'target' is not an object");
  m.target = field<std::string>(target, "name");
  m.target_arch = field<std::string>(target, "arch");
  m.target_level = field<int>(target, "level");
  m.required_features = field<std::vector<std::string>>(target, "required_features");
  m.onednn_version = field<std::string>(j, "onednn_version");
  for (const auto& p : field<nlohmann::json>(j, "shape_profiles")) {
    DimProfile d;
    d.dim = field<std::string>(p, "dim");
    d.values = field<std::vector<int64_t>>(p, "values");
    d.range = field<bool>(p, "range");
    KILN_CHECK(!d.values.empty() && (!d.range || d.values.size() == 2), ErrorKind::kBadModel,
               "artifact manifest: shape profile of '{}' has {} values", d.dim, d.values.size());
    m.profiles.push_back(std::move(d));
  }
  m.strict_shapes = field<bool>(j, "strict_shapes");
  m.planned_signatures =
      field<std::vector<std::vector<std::vector<int64_t>>>>(j, "planned_signatures");
  return m;
}

}  // namespace kiln::artifact
