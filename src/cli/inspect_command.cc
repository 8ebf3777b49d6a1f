// kiln inspect: what a model is, as text or one JSON object; with --impls, which implementations
// the fast engine tries for an op, in order (its dispatch lists).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <map>

#include "artifact/load/artifact.h"
#include "cli/commands.h"
#include "cli/json_text.h"
#include "engine/kernel_table.h"
#include "ir/walk.h"
#include "onnx/import.h"
#include "ops/check.h"
#include "ops/cost.h"
#include "ops/infer.h"
#include "ops/op.h"
#include "runtime/inline_functions.h"
#include "spec/type_constraints.h"
#include "support/error.h"

namespace kiln::cli {

namespace {

using nlohmann::ordered_json;

ordered_json value_json(const Value& v) {
  ordered_json j;
  j["name"] = v.name;
  j["type"] = v.type.to_string();
  if (v.type.is_tensor()) {
    j["dtype"] = dtype_name(v.type.elem);
    if (v.type.shape) {
      ordered_json dims = ordered_json::array();
      for (const Dim& d : *v.type.shape) {
        if (d.is_known()) dims.push_back(d.value());
        else if (d.is_symbolic()) dims.push_back(d.sym());
        else dims.push_back(nullptr);
      }
      j["shape"] = dims;
    }
  }
  return j;
}

struct Summary {
  std::map<std::string, int> ops;
  int nodes = 0;
  int subgraphs = 0;
  int64_t params = 0;
  int64_t param_bytes = 0;
  double macs = 0, flops = 0;
  bool cost_exact = true;
  std::vector<std::string> problems;
  std::vector<const Value*> values;
};

void walk(const Graph& g, Summary& s, bool top) {
  for (const Value* v : g.initializers) {
    s.params += v->data.numel();
    s.param_bytes += static_cast<int64_t>(v->data.nbytes());
  }
  for (const auto& n : g.nodes()) {
    ++s.nodes;
    // Exporters such as paddle2onnx keep the weights in Constant nodes, not initializers.
    if (n->domain.empty() && n->op_type == "Constant")
      for (const auto& a : n->attrs)
        if (a.kind == AttrKind::kTensor) {
          s.params += a.t.numel();
          s.param_bytes += static_cast<int64_t>(a.t.nbytes());
        }
    ++s.ops[n->domain.empty() ? n->op_type : n->domain + "." + n->op_type];
    const NodeCost c = node_cost(*n);
    s.macs += c.macs;
    s.flops += c.flops;
    s.cost_exact &= c.exact;
    const OpSchema* schema = OpRegistry::global().find(n->domain, n->op_type);
    if (schema && !schema->kernel)
      s.problems.push_back(n->where() + "no reference kernel yet");
    for (const Value* v : n->outputs) {
      if (!v) continue;
      s.values.push_back(v);
      if (top && v->type.kind == TypeInfo::Kind::kUnknown)
        s.problems.push_back("value '" + v->name + "': type not inferred");
    }
    for_each_subgraph(*n, [&](const Graph& sg) {
      ++s.subgraphs;
      walk(sg, s, false);
    });
  }
  if (top) {
    for (const Value* v : g.initializers)
      if (v->uses.empty() && !v->is_graph_input)
        s.problems.push_back("initializer '" + v->name + "' is never used");
  }
}

std::string human(double x) {
  const char* units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (x >= 1000 && u < 4) { x /= 1000; ++u; }
  return fmt::format("{:.2f}{}", x, units[u]);
}

}  // namespace

Action add_inspect(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto values = std::make_shared<bool>(false);
  auto newer_opset = std::make_shared<bool>(false);
  auto impls_op = std::make_shared<std::string>();
  app.add_option("model", *path, "ONNX model file");
  app.add_flag("--json", *json, "Print one JSON object");
  app.add_flag("--values", *values, "List every intermediate value's type and shape");
  add_allow_newer_opset(app, *newer_opset);
  CLI::Option* impls =
      app.add_option("--impls", *impls_op,
                     "Print the fast engine's implementations of OP (all ops without OP) in the "
                     "order they are tried, instead of a model")
          ->expected(0, 1)
          ->type_name("[OP]");
  return [=]() {
    if (impls->count() > 0) {
      std::cout << engine::KernelTable::global().describe(*impls_op);
      return 0;
    }
    if (path->empty()) fail(ErrorKind::kBadInput, "model is required (or --impls)");
    if (artifact::is_artifact_file(*path)) {  // a compiled artifact: its manifest, and whether it runs here
      const artifact::ArtifactInfo info = artifact::inspect_artifact(*path);
      nlohmann::json j = info.manifest.json;
      j["here"] = {{"fit", artifact::fit_name(info.compatibility.fit)},
                   {"message", info.compatibility.message}};
      if (*json) {
        std::cout << json_text(j) << "\n";
      } else {
        std::cout << info.manifest.to_text() << "\n";
        std::cout << fmt::format("here: {}{}\n", artifact::fit_name(info.compatibility.fit),
                                 info.compatibility.message.empty() ? "" : ": " + info.compatibility.message);
      }
      return 0;
    }
    Model m = load_model(*path);
    for (const std::string& w : check_model(m, {.allow_newer_opset = *newer_opset}))
      std::cerr << "kiln: warning: " << w << "\n";
    // Calls of local functions are inferred where a Session runs them, inlined: check a second,
    // inlined load so that what they make is judged too (the report shows the model as written).
    if (!m.functions.empty()) {
      Model inlined = load_model(*path);
      inline_functions(inlined);
      infer_shapes(inlined);
      check_type_constraints(inlined);
    }
    InferFacts facts;
    infer_shapes(m, {}, &facts);
    // Nodes whose op version kiln has no signature for: their types are not checked.
    std::vector<std::string> notes;
    for (const std::string& line : check_type_constraints(m)) notes.push_back(line + ", types not judged");
    for (const auto& [n, why] : facts.warnings) notes.push_back(n->where() + why);
    Summary s;
    walk(*m.graph, s, true);

    if (*json) {
      ordered_json j;
      j["model"] = *path;
      j["ir_version"] = m.ir_version;
      j["producer"] = m.producer_name + (m.producer_version.empty() ? "" : " " + m.producer_version);
      ordered_json opsets = ordered_json::object();
      for (const auto& [d, v] : m.opsets) opsets[d.empty() ? "ai.onnx" : d] = v;
      j["opsets"] = opsets;
      j["inputs"] = ordered_json::array();
      for (const Value* v : m.graph->inputs)
        if (!v->is_constant()) j["inputs"].push_back(value_json(*v));
      j["outputs"] = ordered_json::array();
      for (const Value* v : m.graph->outputs) j["outputs"].push_back(value_json(*v));
      j["nodes"] = s.nodes;
      j["subgraphs"] = s.subgraphs;
      j["ops"] = s.ops;
      j["functions"] = m.functions.size();
      j["parameters"] = s.params;
      j["parameter_bytes"] = s.param_bytes;
      j["macs"] = s.macs;
      j["flops"] = s.flops;
      j["cost_exact"] = s.cost_exact;
      j["problems"] = s.problems;
      j["notes"] = notes;
      if (*values) {
        j["values"] = ordered_json::array();
        for (const Value* v : s.values) j["values"].push_back(value_json(*v));
      }
      std::cout << json_text(j, 2) << "\n";
      return 0;
    }
    std::cout << fmt::format("model      {}\n", *path);
    std::cout << fmt::format("producer   {} {} (ir_version {})\n", m.producer_name,
                             m.producer_version, m.ir_version);
    std::string ops;
    for (const auto& [d, v] : m.opsets) ops += fmt::format("{}{}={}", ops.empty() ? "" : ", ", d.empty() ? "ai.onnx" : d, v);
    std::cout << fmt::format("opsets     {}\n", ops);
    std::cout << "inputs\n";
    for (const Value* v : m.graph->inputs)
      if (!v->is_constant()) std::cout << fmt::format("  {:<24} {}\n", v->name, v->type.to_string());
    std::cout << "outputs\n";
    for (const Value* v : m.graph->outputs)
      std::cout << fmt::format("  {:<24} {}\n", v->name, v->type.to_string());
    std::cout << fmt::format("nodes      {} ({} subgraphs, {} functions)\n", s.nodes, s.subgraphs,
                             m.functions.size());
    std::cout << fmt::format("parameters {} ({} bytes)\n", human(double(s.params)),
                             human(double(s.param_bytes)));
    std::cout << fmt::format("compute    {}MAC, {}FLOP{}\n", human(s.macs), human(s.flops),
                             s.cost_exact ? "" : " (symbolic dims taken as 1)");
    std::cout << "ops\n";
    std::vector<std::pair<int, std::string>> sorted;
    for (const auto& [op, count] : s.ops) sorted.emplace_back(-count, op);
    std::sort(sorted.begin(), sorted.end());
    for (const auto& [neg, op] : sorted) std::cout << fmt::format("  {:<24} {}\n", op, -neg);
    if (*values) {
      std::cout << "values\n";
      for (const Value* v : s.values)
        std::cout << fmt::format("  {:<40} {}\n", v->name, v->type.to_string());
    }
    std::cout << fmt::format("problems   {}\n", s.problems.empty() ? "none" : "");
    for (const auto& p : s.problems) std::cout << "  " << p << "\n";
    if (!notes.empty()) std::cout << "notes\n";
    for (const auto& n : notes) std::cout << "  " << n << "\n";
    return 0;
  };
}

}  // namespace kiln::cli
