#include "serve/gate.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "support/error.h"

namespace kiln::serve {

namespace {

using json = nlohmann::json;

constexpr double kNoLimit = std::numeric_limits<double>::infinity();

std::optional<double> number(const json& j, const char* name, const char* what, double lo, double hi) {
  if (!j.contains(name) || j[name].is_null()) return std::nullopt;
  KILN_CHECK(j[name].is_number() && j[name].get<double>() >= lo && j[name].get<double>() <= hi, ErrorKind::kBadInput,
             "{} must be a number {}", what, hi > 1e300 ? fmt::format("of at least {}", lo) : fmt::format("{}-{}", lo, hi));
  return j[name].get<double>();
}

std::string fixed(std::optional<double> v, const char* spec) {
  return v ? fmt::format(fmt::runtime(spec), *v) : "-";
}

const json* find_target(const json& targets, const std::string& name) {
  if (!targets.is_array()) return nullptr;
  for (const json& t : targets)
    if (t.is_object() && t.value("target", "") == name) return &t;
  return nullptr;
}

std::optional<double> p50(const json& t) {
  if (!t.contains("measured") || !t["measured"].is_object()) return std::nullopt;
  const double ms = t["measured"].value("latency_p50_ms", 0.0);
  return ms > 0 ? std::optional<double>(ms) : std::nullopt;
}

}  // namespace

GateThresholds parse_gate_thresholds(const json& j) {
  KILN_CHECK(j.is_object(), ErrorKind::kBadInput, "the gate must be a JSON object");
  GateThresholds t;
  if (j.contains("tolerance") && !j["tolerance"].is_null()) {
    const json& tol = j["tolerance"];
    KILN_CHECK(tol.is_object(), ErrorKind::kBadInput, "'tolerance' must be {{\"max_abs\": X, \"min_cosine\": Y}}");
    for (const auto& [k, v] : tol.items())
      KILN_CHECK(k == "max_abs" || k == "min_cosine", ErrorKind::kBadInput,
                 "unknown field tolerance.{} (known: max_abs, min_cosine)", k.substr(0, 100));
    t.max_abs = number(tol, "max_abs", "tolerance.max_abs", 0, kNoLimit);
    t.min_cosine = number(tol, "min_cosine", "tolerance.min_cosine", -1, 1);
  }
  t.latency_regression = number(j, "latency_regression", "'latency_regression' (0.10: 10 % slower allowed)", -0.99,
                                kNoLimit);
  return t;
}

json gate_thresholds_json(const GateThresholds& t) {
  json tol = json::object();
  if (t.max_abs) tol["max_abs"] = *t.max_abs;
  if (t.min_cosine) tol["min_cosine"] = *t.min_cosine;
  json j = {{"tolerance", tol}};
  if (t.latency_regression) j["latency_regression"] = *t.latency_regression;
  return j;
}

GateThresholds stricter_thresholds(const GateThresholds& a, const GateThresholds& b) {
  const auto pick = [](std::optional<double> x, std::optional<double> y, bool lower) -> std::optional<double> {
    if (!x || !y) return x ? x : y;
    return lower ? std::min(*x, *y) : std::max(*x, *y);
  };
  return {.max_abs = pick(a.max_abs, b.max_abs, true),
          .min_cosine = pick(a.min_cosine, b.min_cosine, false),
          .latency_regression = pick(a.latency_regression, b.latency_regression, true)};
}

GateVerdict evaluate_gate(const json& candidate, const json& baseline, const GateThresholds& th) {
  GateVerdict v;
  KILN_CHECK(candidate.is_array() && !candidate.empty(), ErrorKind::kBadInput, "the candidate job has no targets");
  for (const json& t : candidate) {
    GateRow r;
    r.target = t.value("target", "?");
    r.state = t.value("state", "failed");
    const auto fail = [&](const std::string& why) {
      r.passed = false;
      r.why.push_back(why);
    };
    if (r.state == "failed") {
      fail(t.value("error", std::string("failed")));
    } else if (r.state == "fell-back" && !p50(t)) {
      std::string reason = t.contains("fallback") && t["fallback"].is_object()
                               ? t["fallback"].value("reason", std::string()) : std::string();
      r.why.push_back("not verified here: " + reason);
    } else {
      // Accuracy: the artifact against its input model, and the quantized model against the float one.
      double art_abs = 0;
      const json acc = t.value("accuracy", json::object());
      if (!acc.value("outputs_match", true)) fail("outputs differ from the model's");
      for (const json& o : acc.value("outputs", json::array())) art_abs = std::max(art_abs, o.value("max_abs_error", 0.0));
      double q_abs = 0;
      std::optional<double> cosine;
      if (t.contains("quantize")) {
        for (const json& o : t["quantize"]["accuracy"].value("outputs", json::array())) {
          if (!o.value("compared", false)) continue;
          q_abs = std::max(q_abs, o.value("max_abs", 0.0));
          const double c = o.value("cosine", 1.0);
          cosine = cosine ? std::min(*cosine, c) : c;
        }
      }
      if (acc.contains("outputs")) r.max_abs = art_abs + q_abs;
      r.min_cosine = cosine;
      if (th.max_abs && !r.max_abs) fail("no accuracy measured (runs 0)");
      if (th.max_abs && r.max_abs && *r.max_abs > *th.max_abs)
        fail(fmt::format("max abs error {:.3g} > {:.3g}", *r.max_abs, *th.max_abs));
      if (th.min_cosine && cosine && *cosine < *th.min_cosine)
        fail(fmt::format("cosine {:.6f} < {:.6f}", *cosine, *th.min_cosine));
      r.latency_ms = p50(t);
      if (const json* b = find_target(baseline, r.target)) r.baseline_ms = p50(*b);
      if (th.latency_regression && r.latency_ms && r.baseline_ms) {
        const double change = *r.latency_ms / *r.baseline_ms - 1;
        if (change > *th.latency_regression)
          fail(fmt::format("latency {:+.1f}% > {:+.1f}%", 100 * change, 100 * *th.latency_regression));
      } else if (th.latency_regression && !r.latency_ms) {
        fail("no latency measured (runs 0)");
      }
      // The latency of steps no fast kernel took at this target's ISA: a note, not a failure.
      const json plan = t.value("measured", json::object()).value("plan", json::object());
      if (const int slow = plan.value("kernels", json::object()).value("reference", 0); slow > 0)
        r.why.push_back(fmt::format("{} of {} steps on the reference kernels", slow, plan.value("steps", 0)));
    }
    v.passed = v.passed && r.passed;
    v.rows.push_back(std::move(r));
  }
  return v;
}

json gate_verdict_json(const GateVerdict& v) {
  json rows = json::array();
  for (const GateRow& r : v.rows) {
    json j = {{"target", r.target}, {"state", r.state}, {"passed", r.passed}, {"why", r.why}};
    if (r.max_abs) j["max_abs"] = *r.max_abs;
    if (r.min_cosine) j["min_cosine"] = *r.min_cosine;
    if (r.latency_ms) j["latency_p50_ms"] = *r.latency_ms;
    if (r.baseline_ms) j["baseline_p50_ms"] = *r.baseline_ms;
    rows.push_back(j);
  }
  return {{"passed", v.passed}, {"targets", rows}};
}

std::string gate_table(const GateVerdict& v) {
  std::string s = fmt::format("{:<16} {:<10} {:>12} {:>10} {:>10} {:>12} {:>8}  {}\n", "target", "state", "max abs err",
                              "cosine", "p50 ms", "baseline ms", "change", "verdict");
  for (const GateRow& r : v.rows) {
    const std::string change =
        r.latency_ms && r.baseline_ms ? fmt::format("{:+.1f}%", 100 * (*r.latency_ms / *r.baseline_ms - 1)) : "-";
    std::string verdict = r.passed ? "pass" : "FAIL";
    for (const std::string& w : r.why) verdict += (verdict.size() == 4 ? ": " : "; ") + w;
    s += fmt::format("{:<16} {:<10} {:>12} {:>10} {:>10} {:>12} {:>8}  {}\n", r.target, r.state,
                     fixed(r.max_abs, "{:.3g}"), fixed(r.min_cosine, "{:.6f}"), fixed(r.latency_ms, "{:.3f}"),
                     fixed(r.baseline_ms, "{:.3f}"), change, verdict);
  }
  return s;
}

std::string gate_failures(const GateVerdict& v) {
  std::string s;
  for (const GateRow& r : v.rows) {
    if (r.passed) continue;
    std::string why;
    for (const std::string& w : r.why) why += (why.empty() ? "" : ", ") + w;
    s += (s.empty() ? "" : "; ") + r.target + ": " + why;
  }
  return s;
}

PromoteOutcome promote_through_gate(RegistryStore& registry, JobQueue& queue, const std::string& name,
                                    const std::string& alias, int64_t version, const json& gate) {
  PromoteOutcome out;
  const auto refuse = [&](int status, const std::string& error) {
    out.status = status;
    out.error = error;
    return out;
  };
  if (!gate.is_object() || !gate.contains("job") || !gate["job"].is_number_integer())
    return refuse(400, "the gate must be {\"job\": J, \"baseline_job\": K, \"tolerance\": {...}, "
                       "\"latency_regression\": X} (kiln ci sends it)");
  for (const auto& [k, v] : gate.items())
    if (k != "job" && k != "baseline_job" && k != "tolerance" && k != "latency_regression")
      return refuse(400, "unknown field gate." + k.substr(0, 100) +
                             " (known: job, baseline_job, tolerance, latency_regression)");
  GateThresholds th;
  try {
    th = parse_gate_thresholds(gate);
  } catch (const Error& e) {
    return refuse(400, std::string("gate: ") + e.what());
  }
  std::optional<GateThresholds> policy;
  const auto policies = registry.alias_policies(name);
  if (const auto p = policies.find(alias); p != policies.end()) {
    const json j = json::parse(p->second, nullptr, false);
    KILN_CHECK(!j.is_discarded(), ErrorKind::kInternal, "the stored policy of alias '{}' of '{}' is not JSON", alias,
               name);
    policy = parse_gate_thresholds(j);
    th = stricter_thresholds(th, *policy);
  }
  // Why job `id` cannot stand for `want_version` (empty: it can).
  const auto unfit_job = [&](const json& id, int64_t want_version, const char* what, std::optional<Job>& job)
      -> std::pair<int, std::string> {
    job = queue.job(id.get<int64_t>());
    if (!job) return {404, fmt::format("gate: no {} {}", what, id.get<int64_t>())};
    if (job->spec.model != name || job->spec.version != want_version)
      return {409, fmt::format("gate: {} {} compiled {} version {}, not {} version {}", what, job->id, job->spec.model,
                               job->spec.version, name, want_version)};
    if (job->state == JobState::kQueued || job->state == JobState::kRunning)
      return {409, fmt::format("gate: {} {} is {}", what, job->id, job_state_name(job->state))};
    return {0, ""};
  };
  std::optional<Job> candidate, baseline;
  if (auto [status, why] = unfit_job(gate["job"], version, "job", candidate); status) return refuse(status, why);
  const auto aliases = registry.aliases(name);
  const auto now = aliases.find(alias);
  if (now != aliases.end() && now->second != version) {
    if (!gate.contains("baseline_job") || !gate["baseline_job"].is_number_integer())
      return refuse(409, fmt::format("gate: '{}' points at version {} now: the gate needs \"baseline_job\", a compile "
                                     "of version {} for the same targets",
                                     alias, now->second, now->second));
    if (auto [status, why] = unfit_job(gate["baseline_job"], now->second, "baseline job", baseline); status)
      return refuse(status, why);
    const auto targets = [](const Job& j) {
      std::set<std::string> s;
      for (const json& t : j.spec.request.value("targets", json::array())) s.insert(t.get<std::string>());
      return s;
    };
    if (targets(*candidate) != targets(*baseline))
      return refuse(409, fmt::format("gate: jobs {} and {} compiled different targets", candidate->id, baseline->id));
  }
  const auto results = [](const std::optional<Job>& j) {
    return j && j->results.is_object() ? j->results.value("targets", json::array()) : json::array();
  };
  const GateVerdict v = evaluate_gate(results(candidate), results(baseline), th);
  out.verdict = gate_verdict_json(v);
  out.verdict["job"] = candidate->id;
  if (baseline) out.verdict["baseline_job"] = baseline->id;
  out.verdict["thresholds"] = gate_thresholds_json(th);
  if (policy) out.verdict["policy"] = gate_thresholds_json(*policy);
  if (!v.passed)
    return refuse(409, "the gate did not pass: " + gate_failures(v) +
                           (policy ? fmt::format(" (thresholds: the stricter of the gate's and alias '{}''s policy)", alias)
                                   : std::string()));
  registry.set_alias(name, alias, version);
  return out;
}

}  // namespace kiln::serve
