#include "serve/quantize_request.h"

#include <set>

#include "artifact/format/format.h"
#include "serve/json_fields.h"
#include "support/error.h"
#include "support/sha256.h"

namespace kiln::serve {

namespace {

using json = nlohmann::json;

constexpr int kMaxSets = 1000;

const json& member(const json& q, const char* name) { return q.at(name); }

std::string one_of(const json& q, const char* name, const std::set<std::string>& allowed, const std::string& fallback) {
  if (!q.contains(name)) return fallback;
  const json& v = member(q, name);
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  KILN_CHECK(v.is_string() && allowed.contains(v.get<std::string>()), ErrorKind::kBadInput,
             "compile request: quantize.{} must be one of {}", name, list);
  return v.get<std::string>();
}

std::vector<std::string> string_list(const json& q, const char* name) {
  if (!q.contains(name)) return {};
  const json& v = member(q, name);
  KILN_CHECK(v.is_array() && v.size() <= 10000, ErrorKind::kBadInput,
             "compile request: quantize.{} must be an array of strings", name);
  std::vector<std::string> out;
  for (const json& s : v) {
    KILN_CHECK(s.is_string() && !s.get<std::string>().empty() && s.get<std::string>().find(',') == std::string::npos,
               ErrorKind::kBadInput, "compile request: quantize.{} must be an array of non-empty names", name);
    out.push_back(s.get<std::string>());
  }
  return out;
}

int count(const json& q, const char* name, int lo, int hi, int fallback) {
  if (!q.contains(name)) return fallback;
  const json& v = member(q, name);
  KILN_CHECK(v.is_number_integer() && v.get<int64_t>() >= lo && v.get<int64_t>() <= hi, ErrorKind::kBadInput,
             "compile request: quantize.{} must be an integer {}-{}", name, lo, hi);
  return v.get<int>();
}

bool is_sha256(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

QuantizeRequest parse_quantize_request(const json& q) {
  KILN_CHECK(q.is_object(), ErrorKind::kBadInput,
             "compile request: 'quantize' must be an object such as {{\"mode\": \"dynamic\"}}");
  check_known_fields(q, {"mode", "format", "per_channel", "activation_type", "weight_type", "method", "percentile",
                         "include_ops", "exclude_ops", "exclude_nodes", "keep_io_types", "bf16_whole_graph",
                         "fallback", "calibrate_random",
                         "calibrate", "eval_random", "max_loss", "dims"},
                     "compile request", "quantize.");
  QuantizeRequest r;
  r.mode = one_of(q, "mode", {"dynamic", "static", "fp16", "bf16"}, "dynamic");
  r.format = one_of(q, "format", {"qdq", "qoperator"}, "qdq");
  r.activation_type = one_of(q, "activation_type", {"uint8", "int8"}, "uint8");
  r.weight_type = one_of(q, "weight_type", {"int8", "uint8"}, "int8");
  r.method = one_of(q, "method", {"minmax", "entropy", "percentile"}, "minmax");
  r.fallback = one_of(q, "fallback", {"float", "bf16"}, "float");
  if (q.contains("per_channel")) {
    KILN_CHECK(q["per_channel"].is_boolean(), ErrorKind::kBadInput,
               "compile request: quantize.per_channel must be true or false");
    r.per_channel = q["per_channel"].get<bool>();
  }
  for (auto [name, flag] : {std::pair{"keep_io_types", &r.keep_io_types},
                             std::pair{"bf16_whole_graph", &r.bf16_whole_graph}}) {
    if (!q.contains(name)) continue;
    KILN_CHECK(q[name].is_boolean(), ErrorKind::kBadInput,
               "compile request: quantize.{} must be true or false", name);
    *flag = q[name].get<bool>();
  }
  KILN_CHECK(!r.bf16_whole_graph || r.mode == "bf16", ErrorKind::kBadInput,
             "compile request: quantize.bf16_whole_graph needs mode bf16");
  if (q.contains("percentile")) {
    const json& p = q["percentile"];
    KILN_CHECK(p.is_number() && p.get<double>() > 0 && p.get<double>() <= 100, ErrorKind::kBadInput,
               "compile request: quantize.percentile must be a number in (0, 100]");
    r.percentile = p.get<double>();
  }
  if (q.contains("max_loss")) {
    const json& m = q["max_loss"];
    KILN_CHECK(m.is_number() && m.get<double>() >= 0 && m.get<double>() <= 2, ErrorKind::kBadInput,
               "compile request: quantize.max_loss must be a number 0-2 (1 - cosine)");
    KILN_CHECK(r.mode == "dynamic" || r.mode == "static", ErrorKind::kBadInput,
               "compile request: quantize.max_loss needs mode dynamic or static");
    r.max_loss = m.get<double>();
  }
  r.include_ops = string_list(q, "include_ops");
  r.exclude_ops = string_list(q, "exclude_ops");
  r.exclude_nodes = string_list(q, "exclude_nodes");
  r.dims = string_list(q, "dims");
  for (const std::string& d : r.dims) {
    const auto eq = d.find('=');
    KILN_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < d.size() &&
                   d.find_first_not_of("0123456789", eq + 1) == std::string::npos && d.size() - eq <= 10,
               ErrorKind::kBadInput, "compile request: quantize.dims '{}': expected NAME=VALUE", d.substr(0, 100));
  }
  r.calibrate_random = count(q, "calibrate_random", 1, kMaxSets, 0);
  r.eval_random = count(q, "eval_random", 1, 100, 2);
  if (q.contains("calibrate")) {
    const json& sets = q["calibrate"];
    KILN_CHECK(sets.is_array() && !sets.empty() && sets.size() <= kMaxSets, ErrorKind::kBadInput,
               "compile request: quantize.calibrate must be 1-{} sets, each an array of the sha256s of "
               "tensors uploaded with POST /v1/tensors (in the model's input order)",
               kMaxSets);
    for (const json& set : sets) {
      KILN_CHECK(set.is_array() && !set.empty() && set.size() <= 1000, ErrorKind::kBadInput,
                 "compile request: quantize.calibrate: each set must be an array of tensor sha256s");
      std::vector<std::string> s;
      for (const json& t : set) {
        KILN_CHECK(t.is_string() && is_sha256(t.get<std::string>()), ErrorKind::kBadInput,
                   "compile request: quantize.calibrate: '{}' is not the sha256 of an uploaded tensor "
                   "(64 lowercase hex digits, as POST /v1/tensors answers)",
                   t.is_string() ? t.get<std::string>().substr(0, 100) : t.dump().substr(0, 100));
        s.push_back(t.get<std::string>());
      }
      r.calibrate.push_back(std::move(s));
    }
  }
  KILN_CHECK(r.calibrate.empty() || r.calibrate_random == 0, ErrorKind::kBadInput,
             "compile request: quantize.calibrate and quantize.calibrate_random exclude each other");
  KILN_CHECK(r.mode != "static" || !r.calibrate.empty() || r.calibrate_random > 0, ErrorKind::kBadInput,
             "compile request: quantize mode static needs calibration sets: quantize.calibrate (uploaded "
             "tensors) or quantize.calibrate_random N");
  return r;
}

json quantize_request_json(const QuantizeRequest& q) {
  json j = {{"mode", q.mode},
            {"format", q.format},
            {"activation_type", q.activation_type},
            {"weight_type", q.weight_type},
            {"method", q.method},
            {"percentile", q.percentile},
            {"include_ops", q.include_ops},
            {"exclude_ops", q.exclude_ops},
            {"exclude_nodes", q.exclude_nodes},
            {"keep_io_types", q.keep_io_types},
            {"bf16_whole_graph", q.bf16_whole_graph},
            {"fallback", q.fallback},
            {"eval_random", q.eval_random},
            {"dims", q.dims}};
  if (q.per_channel) j["per_channel"] = *q.per_channel;
  if (q.max_loss) j["max_loss"] = *q.max_loss;
  if (q.calibrate_random > 0) j["calibrate_random"] = q.calibrate_random;
  if (!q.calibrate.empty()) j["calibrate"] = q.calibrate;
  return j;
}

quant::QuantizeOptions quantize_options(const QuantizeRequest& q) { return quant::quantize_options(q, "quantize.", '_'); }

std::vector<std::string> calibration_tensors(const QuantizeRequest& q) {
  std::vector<std::string> out;
  for (const auto& set : q.calibrate) out.insert(out.end(), set.begin(), set.end());
  return out;
}

std::vector<std::string> quantize_args(const QuantizeRequest& q, const std::string& model, const std::string& out,
                                       const std::string& report, const std::string& calibration_dir, uint64_t seed,
                                       int threads, int level) {
  const auto joined = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
    return s;
  };
  std::vector<std::string> a = {"quantize", model, "-o", out, "--report", report, "--no-progress",
                                "--mode", q.mode, "--format", q.format, "--activation-type", q.activation_type,
                                "--weight-type", q.weight_type, "--method", q.method,
                                "--percentile", fmt::format("{}", q.percentile),
                                "--eval-random", std::to_string(q.eval_random), "--latency-runs", "0",
                                "--seed", std::to_string(seed), "--threads", std::to_string(threads),
                                "-O", std::to_string(level)};
  if (q.per_channel) a.push_back(*q.per_channel ? "--per-channel" : "--per-tensor");
  if (!q.keep_io_types) a.push_back("--no-keep-io-types");
  if (q.bf16_whole_graph) a.push_back("--bf16-whole-graph");
  if (q.fallback != "float") a.insert(a.end(), {"--fallback", q.fallback});
  if (!q.include_ops.empty()) a.insert(a.end(), {"--include-ops", joined(q.include_ops)});
  if (!q.exclude_ops.empty()) a.insert(a.end(), {"--exclude-ops", joined(q.exclude_ops)});
  if (!q.exclude_nodes.empty()) a.insert(a.end(), {"--exclude-nodes", joined(q.exclude_nodes)});
  for (const std::string& d : q.dims) a.insert(a.end(), {"--dim", d});
  if (q.calibrate_random > 0) a.insert(a.end(), {"--calibrate-random", std::to_string(q.calibrate_random)});
  if (!q.calibrate.empty()) a.insert(a.end(), {"--calibrate", calibration_dir});
  if (q.max_loss) a.insert(a.end(), {"--max-loss", fmt::format("{}", *q.max_loss)});
  return a;
}

std::string quantized_model_key(const std::string& model_sha256, const QuantizeRequest& q, uint64_t seed) {
  return sha256_hex(fmt::format("kiln {} build {}\nquantize {}\nmodel {}\nseed {}\n", artifact::kiln_version(),
                                artifact::kiln_build_id(), quantize_request_json(q).dump(), model_sha256, seed));
}

}  // namespace kiln::serve
