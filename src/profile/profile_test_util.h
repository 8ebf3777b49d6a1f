// Helpers for the profile layer's unit tests: a tiny model and a well-formedness check for the
// markup the reports write.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/rt_value.h"

namespace kiln::testing {

// x float[batch, 4] -> MatMul(w float[4, 3]) -> Relu -> Softmax(axis -1) -> y.
inline Model tiny_mlp() {
  Model m;
  m.ir_version = 8;
  m.opsets[""] = 17;
  m.graph = std::make_unique<Graph>();
  Graph& g = *m.graph;
  Value* x = g.add_value("x");
  x->is_graph_input = true;
  x->type = TypeInfo::tensor(DataType::kFloat, Shape{Dim::symbol("batch"), 4});
  g.inputs.push_back(x);
  Value* w = g.add_value("w");
  w->data = Tensor(DataType::kFloat, {4, 3});
  for (int i = 0; i < 12; ++i) w->data.set_f64(i, 0.1 * (i - 6));
  w->type = TypeInfo::tensor(DataType::kFloat, Shape{4, 3});
  g.initializers.push_back(w);
  auto add = [&](const char* op, const char* name, std::vector<Value*> ins, const char* out) {
    Node* n = g.add_node(op);
    n->name = name;
    n->opset = 17;
    for (size_t i = 0; i < ins.size(); ++i) g.set_input(n, static_cast<int>(i), ins[i]);
    g.set_output(n, 0, g.add_value(out));
    return n->outputs[0];
  };
  Value* h = add("MatMul", "fc", {x, w}, "h");
  Value* r = add("Relu", "relu", {h}, "r");
  Value* y = add("Softmax", "softmax", {r}, "y");
  g.outputs.push_back(y);
  return m;
}

inline RtValue float_input(std::vector<int64_t> dims) {
  Tensor t(DataType::kFloat, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, 0.25 * static_cast<double>(i % 7) - 0.5);
  return RtValue::of(std::move(t));
}

// Checks that every tag is closed in order (HTML void elements and <!...> excepted), attribute
// values are quoted and text holds no raw '<'. Returns "" when well formed, else what is wrong.
inline std::string markup_problem(std::string_view s) {
  std::vector<std::string> open;
  size_t i = 0;
  while ((i = s.find('<', i)) != std::string_view::npos) {
    const size_t end = s.find('>', i);
    if (end == std::string_view::npos) return "unterminated tag at " + std::to_string(i);
    std::string_view tag = s.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.starts_with("!")) continue;
    if (tag.find('<') != std::string_view::npos) return "'<' inside a tag: " + std::string(tag);
    size_t quotes = 0;
    for (char c : tag) quotes += c == '"';
    if (quotes % 2) return "unbalanced quotes in <" + std::string(tag) + ">";
    const bool closing = tag.starts_with("/");
    const bool self_closing = tag.ends_with("/");
    std::string_view name = tag.substr(closing ? 1 : 0);
    name = name.substr(0, name.find_first_of(" /\n\t"));
    if (name.empty()) return "empty tag name at " + std::to_string(i);
    if (self_closing || name == "meta" || name == "br") continue;
    if (!closing) {
      open.emplace_back(name);
      continue;
    }
    if (open.empty() || open.back() != name)
      return "</" + std::string(name) + "> closes " + (open.empty() ? "nothing" : "<" + open.back() + ">");
    open.pop_back();
  }
  return open.empty() ? "" : "<" + open.back() + "> is never closed";
}

// How many times `what` occurs in s (overlapping ones too): bars, dots and rows of a report.
inline size_t count(std::string_view s, std::string_view what) {
  size_t n = 0;
  for (size_t i = s.find(what); i != std::string_view::npos; i = s.find(what, i + 1)) ++n;
  return n;
}

}  // namespace kiln::testing
