#include "ops/check.h"

#include <set>

#include "ir/walk.h"
#include "ops/op.h"
#include "spec/op_types.h"
#include "support/error.h"

namespace kiln {

namespace {

// Domains whose ops kiln knows by schema; others are neither ONNX nor local functions.
bool is_known_domain(const std::string& d) {
  return d.empty() || d == "ai.onnx.ml" || d == "ai.onnx.preview.training" ||
         d == "ai.onnx.preview";
}

int trimmed_count(const std::vector<Value*>& vs) {
  int n = static_cast<int>(vs.size());
  while (n > 0 && vs[n - 1] == nullptr) --n;
  return n;
}

void check_node(const Node& n, const Model& m) {
  if (m.find_function(n.domain, n.op_type)) return;  // a model-local function call
  KILN_CHECK(is_known_domain(n.domain), ErrorKind::kUnsupported,
             "{}unknown domain '{}' (not ONNX and no local function of that name)", n.where(),
             n.domain);
  const OpSchema* s = OpRegistry::global().find(n.domain, n.op_type);
  KILN_CHECK(s, ErrorKind::kUnsupported, "{}unknown op '{}' in domain '{}'", n.where(), n.op_type,
             n.domain.empty() ? "ai.onnx" : n.domain);
  KILN_CHECK(n.opset >= s->since && (s->removed == 0 || n.opset < s->removed),
             ErrorKind::kBadModel, "{}op does not exist in opset {} (it exists in {}..{})",
             n.where(), n.opset, s->since, s->removed ? std::to_string(s->removed - 1) : "now");
  const int ins = trimmed_count(n.inputs), outs = trimmed_count(n.outputs);
  KILN_CHECK(ins >= s->min_inputs && (s->max_inputs < 0 || ins <= s->max_inputs),
             ErrorKind::kBadModel, "{}{} inputs, expected {}..{}", n.where(), ins, s->min_inputs,
             s->max_inputs < 0 ? "any" : std::to_string(s->max_inputs));
  KILN_CHECK(outs >= std::min(s->min_outputs, 1) && (s->max_outputs < 0 || outs <= s->max_outputs),
             ErrorKind::kBadModel, "{}{} outputs, expected {}..{}", n.where(), outs,
             s->min_outputs, s->max_outputs < 0 ? "any" : std::to_string(s->max_outputs));
  for (int i = 0; i < std::min(ins, s->min_inputs); ++i)
    KILN_CHECK(n.inputs[i] != nullptr, ErrorKind::kBadModel, "{}required input {} is empty",
               n.where(), i);
  for (const auto& spec : s->attrs) {
    const Attribute* a = n.attr(spec.name);
    if (!a) {
      KILN_CHECK(!spec.required, ErrorKind::kBadModel, "{}required attribute '{}' is missing",
                 n.where(), spec.name);
      continue;
    }
    KILN_CHECK(a->kind == spec.kind || !a->ref_attr_name.empty(), ErrorKind::kBadModel,
               "{}attribute '{}' is {}, expected {}", n.where(), spec.name,
               attr_kind_name(a->kind), attr_kind_name(spec.kind));
  }
}

// Opset imports beyond kiln's knowledge: a refusal, or a warning when allowed.
void check_opsets(const std::map<std::string, int64_t>& opsets, const std::string& who,
                  const CheckOptions& opts, std::vector<std::string>& warnings) {
  for (const auto& [domain, version] : opsets) {
    const int newest = newest_known_opset(domain);
    if (newest == 0 || version <= newest) continue;  // not an ONNX domain, or known
    const std::string what = fmt::format("{} imports {} opset {}; kiln knows up to {}", who,
                                         domain.empty() ? "ai.onnx" : domain, version, newest);
    KILN_CHECK(opts.allow_newer_opset, ErrorKind::kUnsupported,
               "{} (its ops may have changed meaning since; --allow-newer-opset runs them as "
               "opset {} defines them)", what, newest);
    warnings.push_back(what + ": its ops are run as opset " + std::to_string(newest) +
                       " defines them");
  }
}

}  // namespace

std::vector<std::string> check_model(const Model& m, const CheckOptions& opts) {
  std::vector<std::string> warnings;
  check_opsets(m.opsets, "model", opts, warnings);
  for (const Function& f : m.functions) {
    check_opsets(f.opsets, "function '" + f.name + "'", opts, warnings);
    // A function's body is inlined into the model's graph: one version of each domain for both.
    for (const auto& [domain, version] : f.opsets) {
      const auto it = m.opsets.find(domain);
      KILN_CHECK(it == m.opsets.end() || it->second == version, ErrorKind::kBadModel,
                 "function '{}' imports {} opset {}, the model imports {}", f.name,
                 domain.empty() ? "ai.onnx" : domain, version, it->second);
    }
  }
  for_each_node(m, [&](const Node& n) { check_node(n, m); });
  return warnings;
}

}  // namespace kiln
