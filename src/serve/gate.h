// The gate an alias moves through (kiln ci, PUT /v1/models/{name}/aliases/{alias}): a candidate
// compile job's per-target results against thresholds (accuracy against the original, latency
// against the job of the version the alias points at now), as a verdict with one row per target.
// The server computes the verdict itself from the jobs it ran before it moves an alias, so a
// client cannot promote a version that does not pass by saying it did.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/job_queue.h"
#include "serve/registry_store.h"

namespace kiln::serve {

struct GateThresholds {
  // The largest absolute error of any output against the original (the float model when the job
  // quantized: the quantized model's error plus the artifact's against it, a bound).
  std::optional<double> max_abs;
  // Quantized jobs: the lowest cosine similarity of any output against the float original.
  std::optional<double> min_cosine;
  // The p50 latency may be at most this fraction above the baseline's (0.10: 10 % slower).
  std::optional<double> latency_regression;
};

// {"tolerance": {"max_abs": X, "min_cosine": Y}, "latency_regression": Z}, each optional; other
// fields are the caller's. Fails (kBadInput) naming the field.
GateThresholds parse_gate_thresholds(const nlohmann::json& j);
nlohmann::json gate_thresholds_json(const GateThresholds& t);
// Each threshold the stricter of the two (one missing: the other's): what a gate moving an alias
// that has a policy (RegistryStore::alias_policies) is evaluated under.
GateThresholds stricter_thresholds(const GateThresholds& a, const GateThresholds& b);

struct GateRow {
  std::string target, state;
  std::optional<double> max_abs, min_cosine;
  std::optional<double> latency_ms, baseline_ms;
  bool passed = true;
  std::vector<std::string> why;  // what failed; or, when passed, a note (not verified here ...)
};

struct GateVerdict {
  bool passed = true;
  std::vector<GateRow> rows;
};

// The candidate's targets (a job's "targets" array) against `thresholds`, and against the
// baseline's targets of the same name (empty: no latency comparison). A failed target fails the
// gate; one that fell back (it does not run here) passes unverified, saying so.
GateVerdict evaluate_gate(const nlohmann::json& candidate, const nlohmann::json& baseline, const GateThresholds& t);
nlohmann::json gate_verdict_json(const GateVerdict& v);
std::string gate_table(const GateVerdict& v);
// The failing rows in one line: "x86-64: latency +31% > +10%; ...".
std::string gate_failures(const GateVerdict& v);

// Moves `alias` of `name` to `version` through the gate `gate` ({"job": J, "baseline_job": K,
// "tolerance": ..., "latency_regression": ...}): job J must be a finished compile of that
// version and, when the alias points at another version now, job K one of that version for the
// same targets; the verdict is computed here from the jobs' stored results, under the stricter of
// the gate's thresholds and the alias's policy, when it has one.
struct PromoteOutcome {
  int status = 200;       // 200 moved; 400 a malformed gate; 404 a missing job; 409 the gate refused
  std::string error;      // one line, when not moved
  nlohmann::json verdict; // gate_verdict_json, when computed
};
PromoteOutcome promote_through_gate(RegistryStore& registry, JobQueue& queue, const std::string& name,
                                    const std::string& alias, int64_t version, const nlohmann::json& gate);

}  // namespace kiln::serve
