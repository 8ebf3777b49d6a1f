#include "ir/graph_copy.h"

#include "support/error.h"

namespace kiln {

namespace {

class Copier {
 public:
  Copier(const Graph& body, const OuterConstant& constant_of)
      : constant_of_(constant_of), root_(std::make_unique<Graph>()) {}

  SubgraphCopy run(const Graph& body) {
    copy_graph(body, *root_);
    return {std::move(root_), std::move(outer_inputs_), std::move(origin_)};
  }

 private:
  // A new value of dst with v's name, type and data.
  Value* clone_value(const Value& v, Graph& dst) {
    Value* nv = dst.add_value(v.name);
    nv->type = v.type;
    nv->data = v.data;
    nv->is_graph_input = v.is_graph_input;
    nv->has_declared_type = v.has_declared_type;
    nv->doc_string = v.doc_string;
    values_[&v] = nv;
    return nv;
  }

  // The copy of v, made on first use for a value of an enclosing graph.
  Value* resolve(const Value* v) {
    if (!v) return nullptr;
    auto it = values_.find(v);
    if (it != values_.end()) return it->second;
    if (auto g = copies_.find(v->owner); g != copies_.end()) {
      // A constant a pass found (data without a producer or an initializer entry) is made where
      // it is read first; anything else must be made before it is read.
      KILN_CHECK(v->is_constant(), ErrorKind::kBadModel,
                 "value '{}' is read in graph '{}' before it is made", v->name, v->owner->name);
      return clone_value(*v, *g->second);
    }
    // An outer name may be taken by a value of the body (scopes may shadow in kiln's IR).
    const std::string name = root_->find(v->name) ? root_->unique_name(v->name) : v->name;
    Value* nv = root_->add_value(name);
    values_[v] = nv;
    nv->doc_string = v->doc_string;
    const Tensor* c = constant_of_ ? constant_of_(v) : (v->is_constant() ? &v->data : nullptr);
    if (c) {
      nv->data = *c;
      nv->type = TypeInfo::tensor(c->dtype(), shape_of(c->dims()));
      root_->initializers.push_back(nv);
    } else {
      nv->type = v->type;
      nv->is_graph_input = true;
      nv->has_declared_type = true;
      root_->inputs.push_back(nv);
      outer_inputs_.push_back(v);
    }
    return nv;
  }

  void copy_graph(const Graph& src, Graph& dst) {
    copies_[&src] = &dst;
    dst.name = src.name;
    dst.doc_string = src.doc_string;
    dst.metadata = src.metadata;
    dst.sparse_initializers = src.sparse_initializers;
    for (const Value* v : src.inputs) dst.inputs.push_back(clone_value(*v, dst));
    for (const Value* v : src.initializers) {
      auto it = values_.find(v);  // an initializer may also be a graph input
      dst.initializers.push_back(it != values_.end() ? it->second : clone_value(*v, dst));
    }
    for (const auto& n : src.nodes()) copy_node(*n, dst);
    for (const Value* v : src.outputs) dst.outputs.push_back(resolve(v));
    for (const Value* v : src.value_infos) {
      auto it = values_.find(v);
      if (it != values_.end() && it->second->owner == &dst) dst.value_infos.push_back(it->second);
    }
  }

  void copy_node(const Node& n, Graph& dst) {
    Node* c = dst.add_node(n.op_type, n.domain);
    origin_[c] = &n;
    c->name = n.name;
    c->overload = n.overload;
    c->doc_string = n.doc_string;
    c->metadata = n.metadata;
    c->opset = n.opset;
    for (int i = 0; i < n.num_inputs(); ++i) dst.set_input(c, i, resolve(n.inputs[i]));
    c->attrs = n.attrs;
    for (Attribute& a : c->attrs) {
      if (a.g) a.g = copy_nested(*a.g, dst);
      for (auto& g : a.graphs)
        if (g) g = copy_nested(*g, dst);
    }
    for (int i = 0; i < n.num_outputs(); ++i) {
      const Value* v = n.outputs[i];
      dst.set_output(c, i, v ? clone_value(*v, dst) : nullptr);
    }
  }

  std::shared_ptr<Graph> copy_nested(const Graph& src, Graph& parent) {
    auto g = std::make_shared<Graph>(&parent);
    copy_graph(src, *g);
    return g;
  }

  const OuterConstant& constant_of_;
  std::unique_ptr<Graph> root_;
  std::unordered_map<const Graph*, Graph*> copies_;  // the graphs copied so far
  std::unordered_map<const Value*, Value*> values_;
  std::vector<const Value*> outer_inputs_;
  std::unordered_map<const Node*, const Node*> origin_;
};

}  // namespace

SubgraphCopy copy_subgraph(const Graph& body, const OuterConstant& constant_of) {
  return Copier(body, constant_of).run(body);
}

}  // namespace kiln
