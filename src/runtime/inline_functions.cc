#include "runtime/inline_functions.h"

#include <algorithm>
#include <unordered_map>

#include "ir/walk.h"
#include "spec/op_types.h"
#include "support/error.h"

namespace kiln {

namespace {

using ValueMap = std::unordered_map<const Value*, Value*>;

Value* mapped(const ValueMap& map, Value* v) {
  if (!v) return nullptr;
  auto it = map.find(v);
  return it == map.end() ? v : it->second;
}

std::shared_ptr<Graph> clone_graph(const Graph& src, Graph* parent, ValueMap& map);

// Copies attributes, resolving references to the caller's attributes (ref_attr_name).
std::vector<Attribute> resolve_attrs(const Node& body_node, const Node* caller,
                                     const Function* f, Graph* owner, ValueMap& map) {
  std::vector<Attribute> out;
  for (const Attribute& a : body_node.attrs) {
    Attribute copy;
    if (!a.ref_attr_name.empty() && caller) {
      const Attribute* given = caller->attr(a.ref_attr_name);
      if (!given) {
        for (const auto& d : f->attribute_defaults)
          if (d.name == a.ref_attr_name) given = &d;
      }
      if (!given) continue;  // optional attribute the caller did not set
      copy = *given;
      copy.name = a.name;
    } else {
      copy = a;
    }
    if (copy.g) copy.g = clone_graph(*copy.g, owner, map);
    for (auto& g : copy.graphs) g = clone_graph(*g, owner, map);
    out.push_back(std::move(copy));
  }
  return out;
}

std::shared_ptr<Graph> clone_graph(const Graph& src, Graph* parent, ValueMap& map) {
  auto g = std::make_shared<Graph>(parent);
  g->name = src.name;
  g->doc_string = src.doc_string;
  auto copy_value = [&](const Value* v) {
    Value* nv = g->add_value(v->name);
    nv->type = v->type;
    nv->data = v->data;
    nv->is_graph_input = v->is_graph_input;
    nv->has_declared_type = v->has_declared_type;
    map[v] = nv;
    return nv;
  };
  for (const Value* v : src.inputs) g->inputs.push_back(copy_value(v));
  for (const Value* v : src.initializers)
    g->initializers.push_back(g->find(v->name) ? g->find(v->name) : copy_value(v));
  for (const auto& n : src.nodes()) {
    Node* c = g->add_node(n->op_type, n->domain);
    c->name = n->name;
    c->opset = n->opset;
    c->overload = n->overload;
    for (size_t i = 0; i < n->outputs.size(); ++i)
      g->set_output(c, static_cast<int>(i), n->outputs[i] ? copy_value(n->outputs[i]) : nullptr);
    c->attrs = resolve_attrs(*n, nullptr, nullptr, g.get(), map);
    for (size_t i = 0; i < n->inputs.size(); ++i)
      g->set_input(c, static_cast<int>(i), mapped(map, n->inputs[i]));
  }
  for (Value* v : src.outputs) g->outputs.push_back(mapped(map, v));
  return g;
}

// A call may leave a function input out (fewer inputs, or an empty name) only where the body
// passes it on as an input its op may go without: inlined, the body node gets an empty input
// there. ONNX's own inference refuses any input left out; an omitted optional one is the meaning
// later ONNX gives it. A body node that calls a function is judged when that call is expanded.
void check_omitted_inputs(const Node& call, const Function& f, int opset_of_body_node,
                          const Node& bn, const std::vector<bool>& omitted) {
  const Graph& body = *f.body;
  const OpTypes* types = find_op_types(bn.domain, bn.op_type, opset_of_body_node);
  if (!types || types->inputs.empty()) return;
  for (size_t i = 0; i < bn.inputs.size(); ++i) {
    const auto at = std::find(body.inputs.begin(), body.inputs.end(), bn.inputs[i]);
    if (!bn.inputs[i] || at == body.inputs.end() || !omitted[at - body.inputs.begin()]) continue;
    const FormalTypes& formal = types->inputs[std::min(i, types->inputs.size() - 1)];
    std::string body_node = bn.where();
    body_node.resize(body_node.size() - 2);  // without the ": "
    KILN_CHECK(formal.optional || formal.variadic, ErrorKind::kBadModel,
               "{}input {} ('{}' of function '{}') is not given, but the body's {} requires it "
               "as its input {}",
               call.where(), at - body.inputs.begin(), (*at)->name, f.name, body_node, i);
  }
}

// Expands one call; returns the new nodes in order.
std::vector<Node*> expand(Graph& g, Node& call, const Function& f, const Model& m) {
  ValueMap map;
  const Graph& body = *f.body;
  std::vector<bool> omitted(body.inputs.size());
  for (size_t i = 0; i < body.inputs.size(); ++i) {
    map[body.inputs[i]] = i < call.inputs.size() ? call.inputs[i] : nullptr;
    omitted[i] = map[body.inputs[i]] == nullptr;
  }
  std::unordered_map<const Value*, Value*> formal_out;
  for (size_t i = 0; i < body.outputs.size() && i < call.outputs.size(); ++i)
    formal_out[body.outputs[i]] = call.outputs[i];
  std::vector<Node*> added;
  const std::string prefix = (call.name.empty() ? f.name : call.name) + "/";
  for (const auto& bn : body.nodes()) {
    Node* c = g.add_node(bn->op_type, bn->domain);
    c->name = prefix + bn->name;
    auto it = f.opsets.find(bn->domain);
    c->opset = it != f.opsets.end() ? static_cast<int>(it->second) : bn->opset;
    if (!m.find_function(bn->domain, bn->op_type))
      check_omitted_inputs(call, f, c->opset, *bn, omitted);
    c->attrs = resolve_attrs(*bn, &call, &f, &g, map);
    for (size_t i = 0; i < bn->inputs.size(); ++i)
      g.set_input(c, static_cast<int>(i), mapped(map, bn->inputs[i]));
    for (size_t i = 0; i < bn->outputs.size(); ++i) {
      const Value* bo = bn->outputs[i];
      Value* out = nullptr;
      if (bo) {
        auto fo = formal_out.find(bo);
        if (fo != formal_out.end() && fo->second) {
          out = fo->second;
        } else {
          out = g.add_value(g.unique_name(prefix + bo->name));
          out->type = bo->type;
        }
        map[bo] = out;
      }
      g.set_output(c, static_cast<int>(i), out);
    }
    added.push_back(c);
  }
  // A function output that is directly one of its inputs needs an Identity.
  for (size_t i = 0; i < body.outputs.size() && i < call.outputs.size(); ++i) {
    const Value* bo = body.outputs[i];
    if (!call.outputs[i] || bo->producer) continue;
    Node* id = g.add_node("Identity");
    id->opset = 13;
    g.set_input(id, 0, mapped(map, const_cast<Value*>(bo)));
    g.set_output(id, 0, call.outputs[i]);
    added.push_back(id);
  }
  return added;
}

bool inline_graph(Graph& g, const Model& m) {
  bool changed = false;
  std::vector<Node*> order;
  std::vector<Node*> calls;
  for (const auto& n : g.nodes())
    for_each_subgraph(*n, [&](Graph& sg) { changed |= inline_graph(sg, m); });
  const std::vector<Node*> original = [&] {
    std::vector<Node*> v;
    for (const auto& n : g.nodes()) v.push_back(n.get());
    return v;
  }();
  for (Node* n : original) {
    const Function* f = m.find_function(n->domain, n->op_type);
    if (!f) {
      order.push_back(n);
      continue;
    }
    auto added = expand(g, *n, *f, m);
    order.insert(order.end(), added.begin(), added.end());
    calls.push_back(n);
    changed = true;
  }
  if (calls.empty()) return changed;
  for (Node* c : calls) {
    for (Value* out : c->outputs)
      if (out && out->producer == c) out->producer = nullptr;  // re-set by the body's nodes
  }
  // Body nodes set the outputs' producers; restore them after the call nodes are gone.
  std::vector<Node*> keep;
  for (Node* n : order) keep.push_back(n);
  for (Node* c : calls) {
    for (int i = 0; i < c->num_inputs(); ++i) g.set_input(c, i, nullptr);
  }
  for (Node* c : calls) order.push_back(c);
  g.reorder(order);
  for (Node* c : calls) {
    c->outputs.clear();
    g.remove_node(c);
  }
  for (Node* n : keep)
    for (size_t i = 0; i < n->outputs.size(); ++i)
      if (n->outputs[i]) {
        n->outputs[i]->producer = n;
        n->outputs[i]->producer_output = static_cast<int>(i);
      }
  return true;
}

}  // namespace

void inline_functions(Model& m) {
  if (m.functions.empty()) return;
  // Bodies may call other functions: repeat until none is left (depth is capped at load).
  for (int round = 0; round < 64 && inline_graph(*m.graph, m); ++round) {
  }
}

}  // namespace kiln
