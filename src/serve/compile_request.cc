#include "serve/compile_request.h"

#include <algorithm>
#include <set>

#include "artifact/format/manifest.h"
#include "serve/json_fields.h"
#include "support/error.h"
#include "target/target.h"

namespace kiln::serve {

namespace {

using json = nlohmann::json;

constexpr size_t kMaxTargets = 16;

template <typename T>
T field(const json& body, const char* name, json::value_t type, const char* what, T fallback) {
  if (!body.contains(name)) return fallback;
  const json& v = body.at(name);
  const bool ok = type == json::value_t::number_integer ? v.is_number_integer() : v.type() == type;
  KILN_CHECK(ok, ErrorKind::kBadInput, "compile request: '{}' must be {}", name, what);
  return v.get<T>();
}

std::vector<std::string> strings(const json& body, const char* name) {
  if (!body.contains(name)) return {};
  const json& v = body.at(name);
  KILN_CHECK(v.is_array(), ErrorKind::kBadInput, "compile request: '{}' must be an array of strings", name);
  std::vector<std::string> out;
  for (const json& s : v) {
    KILN_CHECK(s.is_string(), ErrorKind::kBadInput, "compile request: '{}' must be an array of strings", name);
    out.push_back(s.get<std::string>());
  }
  return out;
}

}  // namespace

CompileRequest parse_compile_request(const json& body) {
  KILN_CHECK(body.is_object(), ErrorKind::kBadInput, "compile request: expected a JSON object with \"targets\"");
  check_known_fields(body, {"targets", "shapes", "level", "passes", "strict_shapes", "runs", "seed", "threads",
                            "allow_newer_opset", "measure_hits", "quantize"},
                     "compile request");
  CompileRequest r;
  r.targets = strings(body, "targets");
  KILN_CHECK(!r.targets.empty() && r.targets.size() <= kMaxTargets, ErrorKind::kBadInput,
             "compile request: \"targets\" must name 1 to {} targets (kiln compile --list-targets)", kMaxTargets);
  std::set<std::string> seen;
  for (const auto& t : r.targets) {
    find_target(t);  // fails naming the known targets
    KILN_CHECK(seen.insert(t).second, ErrorKind::kBadInput, "compile request: target '{}' is named twice", t);
  }
  r.shapes = strings(body, "shapes");
  for (const auto& s : r.shapes) artifact::parse_dim_profile(s);
  r.level = field<int>(body, "level", json::value_t::number_integer, "an integer 0-3", 2);
  KILN_CHECK(r.level >= 0 && r.level <= 3, ErrorKind::kBadInput, "compile request: 'level' must be 0-3");
  r.passes = field<std::string>(body, "passes", json::value_t::string, "a string of comma-separated passes", "");
  r.strict_shapes = field<bool>(body, "strict_shapes", json::value_t::boolean, "true or false", false);
  r.allow_newer_opset = field<bool>(body, "allow_newer_opset", json::value_t::boolean, "true or false", false);
  r.measure_hits = field<bool>(body, "measure_hits", json::value_t::boolean, "true or false", false);
  r.runs = field<int>(body, "runs", json::value_t::number_integer, "an integer 0-1000", 10);
  KILN_CHECK(r.runs >= 0 && r.runs <= 1000, ErrorKind::kBadInput, "compile request: 'runs' must be 0-1000");
  r.threads = field<int>(body, "threads", json::value_t::number_integer, "an integer 0-1024", 0);
  KILN_CHECK(r.threads >= 0 && r.threads <= 1024, ErrorKind::kBadInput, "compile request: 'threads' must be 0-1024");
  if (body.contains("seed")) {
    KILN_CHECK(body["seed"].is_number_unsigned(), ErrorKind::kBadInput,
               "compile request: 'seed' must be a non-negative integer");
    r.seed = body["seed"].get<uint64_t>();
  }
  if (body.contains("quantize") && !body["quantize"].is_null()) r.quantize = parse_quantize_request(body["quantize"]);
  return r;
}

json compile_request_json(const CompileRequest& r) {
  json j = {{"targets", r.targets}, {"shapes", r.shapes}, {"level", r.level}, {"passes", r.passes},
          {"strict_shapes", r.strict_shapes}, {"runs", r.runs}, {"seed", r.seed}, {"threads", r.threads},
          {"allow_newer_opset", r.allow_newer_opset}, {"measure_hits", r.measure_hits}};
  if (r.quantize) j["quantize"] = quantize_request_json(*r.quantize);
  return j;
}

artifact::CompileOptions compile_options(const CompileRequest& r, const std::string& target,
                                         const std::string& model_path) {
  return {.model = model_path, .target = target, .shapes = r.shapes, .passes = r.passes, .level = r.level,
          .strict_shapes = r.strict_shapes, .threads = r.threads, .allow_newer_opset = r.allow_newer_opset,
          .measure_runs = r.runs, .seed = r.seed};
}

}  // namespace kiln::serve
