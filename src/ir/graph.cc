#include "ir/graph.h"

#include <algorithm>
#include <array>
#include <queue>
#include <unordered_set>

#include "ir/walk.h"
#include "support/checked_math.h"
#include "support/error.h"

namespace kiln {

std::string_view attr_kind_name(AttrKind k) {
  static constexpr std::array<std::string_view, 15> names = {
      "undefined", "float", "int", "string", "tensor", "graph", "floats", "ints",
      "strings", "tensors", "graphs", "sparse_tensor", "sparse_tensors", "type_proto", "type_protos"};
  auto i = static_cast<size_t>(k);
  return i < names.size() ? names[i] : "invalid";
}

Tensor SparseTensor::to_dense() const {
  Tensor dense(values.dtype(), dims);
  const int64_t nnz = values.numel();
  const int rank = static_cast<int>(dims.size());
  const bool linear = indices.rank() == 1;
  KILN_CHECK(linear ? indices.numel() == nnz : (indices.rank() == 2 && indices.dim(0) == nnz &&
                                                indices.dim(1) == rank),
             ErrorKind::kBadModel, "sparse tensor: indices {} do not match {} values",
             dims_to_string(indices.dims()), nnz);
  const int64_t total = dense.numel();
  const size_t elem = dtype_size(values.dtype());
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t offset = 0;
    if (linear) {
      offset = indices.get_i64(k);
    } else {
      for (int d = 0; d < rank; ++d) {
        const int64_t ix = indices.get_i64(k * rank + d);
        KILN_CHECK(ix >= 0 && ix < dims[d], ErrorKind::kBadModel,
                   "sparse tensor: index {} out of range for dim {} of size {}", ix, d, dims[d]);
        offset = offset * dims[d] + ix;
      }
    }
    KILN_CHECK(offset >= 0 && offset < total, ErrorKind::kBadModel,
               "sparse tensor: index {} out of range (size {})", offset, total);
    if (values.dtype() == DataType::kString) {
      dense.strings()[offset] = values.strings()[k];
    } else {
      std::memcpy(static_cast<char*>(dense.raw()) + offset * elem,
                  static_cast<const char*>(values.raw()) + k * elem, elem);
    }
  }
  return dense;
}

const Attribute* Node::attr(std::string_view n) const {
  for (const auto& a : attrs)
    if (a.name == n) return &a;
  return nullptr;
}

Attribute* Node::attr(std::string_view n) {
  for (auto& a : attrs)
    if (a.name == n) return &a;
  return nullptr;
}

std::string Node::where() const {
  std::string op = domain.empty() ? op_type : domain + "." + op_type;
  if (name.empty()) {  // unnamed nodes are named by their first output
    for (const Value* v : outputs)
      if (v) return fmt::format("node producing '{}' ({}): ", v->name, op);
  }
  return fmt::format("node '{}' ({}): ", name, op);
}

int Graph::depth() const {
  int d = 0;
  for (const Graph* g = parent_; g; g = g->parent_) ++d;
  return d;
}

Value* Graph::find(const std::string& n) const {
  auto it = by_name_.find(n);
  return it == by_name_.end() ? nullptr : it->second;
}

Value* Graph::lookup(const std::string& n) const {
  for (const Graph* g = this; g; g = g->parent_)
    if (Value* v = g->find(n)) return v;
  return nullptr;
}

Value* Graph::add_value(const std::string& n) {
  KILN_CHECK(!by_name_.contains(n), ErrorKind::kBadModel,
             "value '{}' is defined twice in graph '{}'", n, name);
  auto v = std::make_unique<Value>();
  v->name = n;
  v->owner = this;
  Value* raw = v.get();
  values_.push_back(std::move(v));
  by_name_.emplace(n, raw);
  return raw;
}

std::string Graph::unique_name(const std::string& prefix) const {
  if (!lookup(prefix)) return prefix;
  for (int i = 1;; ++i) {
    std::string n = prefix + "_" + std::to_string(i);
    if (!lookup(n)) return n;
  }
}

Node* Graph::add_node(std::string op_type, std::string domain) {
  auto node = std::make_unique<Node>();
  node->op_type = std::move(op_type);
  node->domain = std::move(domain);
  node->owner = this;
  nodes_.push_back(std::move(node));
  return nodes_.back().get();
}

void Graph::set_input(Node* node, int i, Value* v) {
  if (static_cast<int>(node->inputs.size()) <= i) node->inputs.resize(i + 1, nullptr);
  if (Value* old = node->inputs[i]) {
    std::erase_if(old->uses, [&](const Use& u) { return u.node == node && u.input_index == i; });
  }
  node->inputs[i] = v;
  if (v) v->uses.push_back({node, i});
}

void Graph::set_output(Node* node, int i, Value* v) {
  if (static_cast<int>(node->outputs.size()) <= i) node->outputs.resize(i + 1, nullptr);
  node->outputs[i] = v;
  if (v) {
    v->producer = node;
    v->producer_output = i;
  }
}

void Graph::remove_node(Node* node) {
  for (int i = 0; i < node->num_inputs(); ++i) set_input(node, i, nullptr);
  for (Value* out : node->outputs)
    if (out && out->producer == node) out->producer = nullptr;
  std::erase_if(nodes_, [&](const std::unique_ptr<Node>& n) { return n.get() == node; });
}

void Graph::rebuild_uses() {
  for (auto& v : values_) v->uses.clear();
  // Uses of outer values by subgraph nodes are recorded on those values too, so clear them first.
  std::vector<Graph*> all = {this};
  for (size_t k = 0; k < all.size(); ++k) {
    for (Graph* sub : all[k]->subgraphs()) {
      for (auto& v : sub->values_) v->uses.clear();
      all.push_back(sub);
    }
  }
  for (Graph* g : all)
    for (auto& n : g->nodes_)
      for (int i = 0; i < n->num_inputs(); ++i)
        if (n->inputs[i]) n->inputs[i]->uses.push_back({n.get(), i});
}

void Graph::reorder(std::vector<Node*> order) {
  KILN_ASSERT(order.size() == nodes_.size(), "reorder: not a permutation");
  std::unordered_map<Node*, std::unique_ptr<Node>> owned;
  for (auto& n : nodes_) owned.emplace(n.get(), std::move(n));
  nodes_.clear();
  for (Node* n : order) {
    auto it = owned.find(n);
    KILN_ASSERT(it != owned.end() && it->second, "reorder: not a permutation");
    nodes_.push_back(std::move(it->second));
  }
}

namespace {

// Values of graph `g` read by the subgraphs of node n (at any depth).
std::vector<const Value*> outer_reads(const Node& n, const Graph& g) {
  std::vector<const Value*> out;
  auto note = [&](const Value* v) {
    if (v && v->owner == &g) out.push_back(v);
  };
  for_each_subgraph(n, [&](const Graph& body) {
    for_each_nested_graph(body, [&](const Graph& sg) {
      for (const auto& sn : sg.nodes())
        for (const Value* v : sn->inputs) note(v);
      for (const Value* v : sg.outputs) note(v);
    });
  });
  return out;
}

}  // namespace

// Kahn's algorithm with the lowest current position first, so a valid order is kept as it is.
void Graph::sort_topologically() {
  std::unordered_map<const Node*, size_t> index;
  for (size_t i = 0; i < nodes_.size(); ++i) index[nodes_[i].get()] = i;
  std::vector<std::vector<size_t>> users(nodes_.size());
  std::vector<int> pending(nodes_.size(), 0);
  auto depend = [&](size_t user, const Value* v) {
    if (!v || v->owner != this || !v->producer) return;
    auto it = index.find(v->producer);
    if (it == index.end()) return;
    users[it->second].push_back(user);
    ++pending[user];
  };
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for (const Value* v : nodes_[i]->inputs) depend(i, v);
    for (const Value* v : outer_reads(*nodes_[i], *this)) depend(i, v);
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<Node*> order;
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    order.push_back(nodes_[i].get());
    for (size_t u : users[i])
      if (--pending[u] == 0) ready.push(u);
  }
  if (order.size() != nodes_.size()) {
    for (size_t i = 0; i < nodes_.size(); ++i)
      if (pending[i] > 0) fail(ErrorKind::kBadModel, "{}is part of a cycle", nodes_[i]->where());
  }
  reorder(std::move(order));
}

std::vector<Graph*> Graph::subgraphs() const {
  std::vector<Graph*> out;
  for (const auto& n : nodes_) for_each_subgraph(*n, [&](Graph& g) { out.push_back(&g); });
  return out;
}

const Function* Model::find_function(const std::string& domain, const std::string& name) const {
  for (const auto& f : functions)
    if (f.domain == domain && f.name == name) return &f;
  return nullptr;
}

}  // namespace kiln
