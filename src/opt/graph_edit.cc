#include "opt/graph_edit.h"

#include <algorithm>
#include <sstream>

#include "support/error.h"

namespace kiln::opt {

bool is_graph_output(const Graph& g, const Value* v) {
  return std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end();
}

int model_opset(const Model& m, const std::string& domain) {
  auto it = m.opsets.find(domain);
  return it == m.opsets.end() ? 0 : static_cast<int>(it->second);
}

std::unordered_set<const Value*> returned_values(const Model& m) {
  std::unordered_set<const Value*> out;
  std::vector<const Graph*> todo = {m.graph.get()};
  while (!todo.empty()) {
    const Graph* g = todo.back();
    todo.pop_back();
    out.insert(g->outputs.begin(), g->outputs.end());
    for (const Graph* sg : g->subgraphs()) todo.push_back(sg);
  }
  return out;
}

std::vector<Graph*> graphs_inner_first(Model& m) {
  std::vector<Graph*> order = {m.graph.get()};
  for (size_t i = 0; i < order.size(); ++i)
    for (Graph* sg : order[i]->subgraphs()) order.push_back(sg);
  std::reverse(order.begin(), order.end());
  return order;
}

Value* other_input(const Node& n, const Value* v) {
  if (n.num_inputs() != 2) return nullptr;
  return n.inputs[0] == v ? n.inputs[1] : n.inputs[1] == v ? n.inputs[0] : nullptr;
}

Node* single_consumer(const Graph& g, const Value* v) {
  if (v->uses.size() != 1 || is_graph_output(g, v)) return nullptr;
  Node* n = v->uses[0].node;
  return n->owner == &g ? n : nullptr;
}

bool replace_value(Graph& g, Value* old, Value* repl, std::string* why) {
  if (old == repl) return true;
  if (is_graph_output(g, old)) {
    Node* p = repl->producer;
    const char* reason = nullptr;
    if (!p || p->owner != &g) reason = "is a graph input, an initializer or an outer value";
    else if (is_graph_output(g, repl)) reason = "is also a graph output";
    if (reason) {
      if (why) *why = fmt::format("'{}' is a graph output and its replacement '{}' {}", old->name,
                                  repl->name, reason);
      return false;
    }
    // The producer of repl now makes `old` (which keeps the output's name) and what read repl
    // reads old, except the node that made old, which the caller removes.
    const Node* old_producer = old->producer;
    g.set_output(p, repl->producer_output, old);
    repl->producer = nullptr;
    const auto uses = repl->uses;
    for (const Use& u : uses)
      if (u.node != old_producer) u.node->owner->set_input(u.node, u.input_index, old);
    return true;
  }
  const auto uses = old->uses;
  for (const Use& u : uses) u.node->owner->set_input(u.node, u.input_index, repl);
  return true;
}

const Tensor* constant_of(const Value* v, const InferFacts& facts) {
  if (!v) return nullptr;
  if (v->is_constant() && !v->is_graph_input) return &v->data;
  auto it = facts.constants.find(v);
  return it == facts.constants.end() ? nullptr : &it->second;
}

std::optional<std::vector<double>> constant_values(const Value* v, const InferFacts& facts) {
  const Tensor* t = constant_of(v, facts);
  if (!t || t->dtype() == DataType::kString) return std::nullopt;
  std::vector<double> out(t->numel());
  for (int64_t i = 0; i < t->numel(); ++i) out[i] = t->get_f64(i);
  return out;
}

Value* add_initializer(Graph& g, const std::string& base_name, Tensor t) {
  Value* v = g.add_value(g.unique_name(base_name));
  v->type = TypeInfo::tensor(t.dtype(), shape_of(t.dims()));
  v->data = std::move(t);
  g.initializers.push_back(v);
  return v;
}

Node* add_node(Graph& g, const std::string& op_type, const std::string& name,
               const std::vector<Value*>& inputs, int num_outputs, int opset,
               const std::string& domain) {
  Node* n = g.add_node(op_type, domain);
  n->name = name;
  n->opset = opset;
  for (size_t i = 0; i < inputs.size(); ++i) g.set_input(n, static_cast<int>(i), inputs[i]);
  for (int i = 0; i < num_outputs; ++i)
    g.set_output(n, i, g.add_value(g.unique_name(name.empty() ? op_type : name)));
  return n;
}

void erase_node(Graph& g, Node* n) {
  for (const Value* v : n->outputs)
    KILN_ASSERT(!v || v->producer != n || v->uses.empty(), "erase_node: an output is still read");
  g.remove_node(n);
}

namespace {

Attribute& attr_slot(Node& n, const std::string& name, AttrKind kind) {
  Attribute* a = n.attr(name);
  if (!a) {
    n.attrs.emplace_back();
    a = &n.attrs.back();
    a->name = name;
  }
  a->kind = kind;
  return *a;
}

}  // namespace

void set_attr_int(Node& n, const std::string& name, int64_t v) {
  attr_slot(n, name, AttrKind::kInt).i = v;
}
void set_attr_float(Node& n, const std::string& name, float v) {
  attr_slot(n, name, AttrKind::kFloat).f = v;
}
void set_attr_string(Node& n, const std::string& name, std::string v) {
  attr_slot(n, name, AttrKind::kString).s = std::move(v);
}
void set_attr_ints(Node& n, const std::string& name, std::vector<int64_t> v) {
  attr_slot(n, name, AttrKind::kInts).ints = std::move(v);
}

std::string attr_string(const Attribute& a) {
  std::ostringstream os;
  os << a.name << ':' << static_cast<int>(a.kind) << ':' << a.ref_attr_name << ':';
  auto tensor = [&](const Tensor& t) {
    if (!t.defined()) return;
    os << static_cast<int>(t.dtype()) << dims_to_string(t.dims());
    if (t.dtype() == DataType::kString) {
      for (int64_t i = 0; i < t.numel(); ++i) os << t.strings()[i].size() << '"' << t.strings()[i];
    } else {
      os.write(static_cast<const char*>(t.raw()), static_cast<std::streamsize>(t.nbytes()));
    }
  };
  switch (a.kind) {
    case AttrKind::kFloat: os << fmt::format("{}", a.f); break;
    case AttrKind::kInt: os << a.i; break;
    case AttrKind::kString: os << a.s.size() << '"' << a.s; break;
    case AttrKind::kTensor: tensor(a.t); break;
    case AttrKind::kFloats: for (float f : a.floats) os << fmt::format("{},", f); break;
    case AttrKind::kInts: for (int64_t i : a.ints) os << i << ','; break;
    case AttrKind::kStrings: for (const auto& x : a.strings) os << x.size() << '"' << x; break;
    case AttrKind::kTensors: for (const auto& t : a.tensors) tensor(t); break;
    case AttrKind::kTypeProto: os << a.tp.to_string(); break;
    case AttrKind::kTypeProtos: for (const auto& t : a.tps) os << t.to_string() << ','; break;
    default: os << &a; break;  // graphs and sparse tensors: never equal to another node's
  }
  return os.str();
}

bool same_attrs(const Node& a, const Node& b) {
  if (a.attrs.size() != b.attrs.size()) return false;
  std::vector<std::string> x, y;
  for (const auto& at : a.attrs) x.push_back(attr_string(at));
  for (const auto& at : b.attrs) y.push_back(attr_string(at));
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  return x == y;
}

std::optional<std::vector<int64_t>> static_dims(const Value* v) {
  if (!v || !v->type.is_tensor() || !v->type.shape) return std::nullopt;
  std::vector<int64_t> dims;
  for (const Dim& d : *v->type.shape) {
    if (!d.is_known()) return std::nullopt;
    dims.push_back(d.value());
  }
  return dims;
}

}  // namespace kiln::opt
