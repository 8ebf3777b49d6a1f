#include "ops/infer.h"

#include <algorithm>
#include <unordered_map>

#include "ir/walk.h"
#include "ops/op.h"
#include "support/error.h"

namespace kiln {

namespace {

// Where an inferred dim and the file's declared dim disagree, the declared one fills only gaps.
TypeInfo merge_declared(TypeInfo inferred, const TypeInfo& declared) {
  if (inferred.kind == TypeInfo::Kind::kUnknown) return declared;
  if (declared.kind != inferred.kind) return inferred;
  if (inferred.elem == DataType::kUndefined) inferred.elem = declared.elem;
  if (!inferred.shape) return inferred.kind == TypeInfo::Kind::kTensor && declared.shape
                                 ? TypeInfo::tensor(inferred.elem, declared.shape)
                                 : inferred;
  if (declared.shape && declared.shape->size() == inferred.shape->size()) {
    for (size_t i = 0; i < inferred.shape->size(); ++i)
      if (!(*inferred.shape)[i].is_known() && !(*declared.shape)[i].is_unknown())
        (*inferred.shape)[i] = (*declared.shape)[i];
  }
  return inferred;
}

// A declared type (graph output, value_info, subgraph input) must agree with what inference found
// where both know it: the element type, the rank and each known dim (ONNX's checker refuses the
// same disagreements). Kinds must match where both are known (a sequence is no tensor), except
// that a sparse tensor may stand where a tensor is declared, as ONNX allows.
bool agrees(const TypeInfo& inferred, const TypeInfo& declared) {
  using K = TypeInfo::Kind;
  const bool sparse_for_dense = inferred.kind == K::kSparseTensor && declared.kind == K::kTensor;
  if (inferred.kind != declared.kind && inferred.kind != K::kUnknown &&
      declared.kind != K::kUnknown && !sparse_for_dense)
    return false;
  if (inferred.kind != TypeInfo::Kind::kTensor || declared.kind != TypeInfo::Kind::kTensor) return true;
  bool agree = inferred.elem == DataType::kUndefined || declared.elem == DataType::kUndefined ||
               inferred.elem == declared.elem;
  if (agree && inferred.shape && declared.shape) {
    agree = inferred.shape->size() == declared.shape->size();
    for (size_t i = 0; agree && i < inferred.shape->size(); ++i) {
      const Dim &a = (*inferred.shape)[i], &b = (*declared.shape)[i];
      agree = !a.is_known() || !b.is_known() || a.value() == b.value();
    }
  }
  return agree;
}

void check_declared(const Node& n, const Value& out, const TypeInfo& inferred) {
  KILN_CHECK(agrees(inferred, out.type), ErrorKind::kBadModel,
             "{}output '{}' is {}, the graph declares it {}", n.where(), out.name,
             inferred.to_string(), out.type.to_string());
}

class Inferrer {
 public:
  Inferrer(const Model& m, const InferOptions& opts, InferFacts* facts)
      : model_(m), opts_(opts), facts_(facts) {}

  void hand_over() {
    if (!facts_) return;
    facts_->constants = std::move(folded_);
    facts_->dims_values = std::move(dims_values_);
  }

  void graph(Graph& g) {
    for (Value* v : g.initializers)
      if (v->type.kind == TypeInfo::Kind::kUnknown || !v->type.shape)
        v->type = TypeInfo::tensor(v->data.dtype(), shape_of(v->data.dims()));
    for (const auto& n : g.nodes()) node(*n);
  }

 private:
  const Tensor* constant_of(const Value* v) const {
    // (An initializer whose bytes the fast engine let go of, engine/plain_weights.h, is known by
    // its type only: nothing reading it is evaluated here; the engine brings them back if needed.)
    if (v->is_constant() && !v->is_graph_input) return v->data.raw() || v->data.numel() == 0 ? &v->data : nullptr;
    auto it = folded_.find(v);
    return it == folded_.end() ? nullptr : &it->second;
  }

  void node(Node& n) {
    std::vector<InferContext::Input> inputs(n.inputs.size());
    bool all_constant = true;
    int64_t constant_elems = 0;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Value* v = n.inputs[i];
      if (!v) continue;
      inputs[i].type = &v->type;
      inputs[i].constant = constant_of(v);
      auto it = dims_values_.find(v);
      if (it != dims_values_.end()) inputs[i].dims_value = &it->second;
      if (!inputs[i].constant) all_constant = false;
      else constant_elems += inputs[i].constant->numel();
    }
    const OpSchema* schema = model_.find_function(n.domain, n.op_type)
                                 ? nullptr
                                 : OpRegistry::global().find(n.domain, n.op_type);
    if (!schema || !schema->infer) return;  // local functions and ops without inference: unknown

    InferContext ctx(n, std::move(inputs), [this](const Graph& sg, const std::vector<TypeInfo>& in) {
      return subgraph(const_cast<Graph&>(sg), in);
    });
    if (facts_)
      ctx.set_warn([this](const Node& at, std::string msg) {
        facts_->warnings.emplace_back(&at, std::move(msg));
      });
    try {
      schema->infer(ctx);
    } catch (const Error& e) {
      const std::string msg = e.what();
      if (msg.rfind(n.where(), 0) == 0) throw;
      throw Error(e.kind(), n.where() + msg);
    }
    for (int i = 0; i < n.num_outputs(); ++i) {
      Value* out = n.outputs[i];
      if (!out) continue;
      const auto& t = ctx.outputs()[i];
      TypeInfo inferred = t ? *t : TypeInfo{};
      if (out->has_declared_type) check_declared(n, *out, inferred);
      out->type = out->has_declared_type ? merge_declared(std::move(inferred), out->type)
                                         : std::move(inferred);
      if (ctx.output_values()[i]) {
        dims_values_[out] = *ctx.output_values()[i];
        materialize(out, *ctx.output_values()[i]);
      }
    }
    if (!all_constant) return;
    if (!schema->kernel) not_folded(n, "no kernel");
    else if (!schema->deterministic) not_folded(n, "random op");
    else if (has_subgraph(n)) not_folded(n, "has a subgraph");
    else if (constant_elems > opts_.fold_limit)
      not_folded(n, fmt::format("inputs have {} elements, above the limit {}", constant_elems,
                                opts_.fold_limit));
    else if (std::string why = opts_.keep_unevaluated ? opts_.keep_unevaluated(n) : ""; !why.empty())
      not_folded(n, std::move(why));
    else fold(n, *schema);
  }

  void not_folded(const Node& n, std::string why) {
    if (facts_) facts_->not_folded.emplace_back(&n, std::move(why));
  }

  // A propagated value whose dims are all known is a constant (Shape of a static tensor ...):
  // record it so that the nodes after it fold too.
  void materialize(const Value* out, const std::vector<Dim>& dims) {
    const TypeInfo& t = out->type;
    if (!t.is_tensor() || !t.shape || t.shape->size() > 1 || !is_integer(t.elem)) return;
    const int64_t n = t.shape->empty() ? 1 : ((*t.shape)[0].is_known() ? (*t.shape)[0].value() : -1);
    if (n != static_cast<int64_t>(dims.size())) return;
    for (const Dim& d : dims)
      if (!d.is_known()) return;
    Tensor c(t.elem, t.shape->empty() ? std::vector<int64_t>{} : std::vector<int64_t>{n});
    for (int64_t k = 0; k < n; ++k) c.set_f64(k, static_cast<double>(dims[k].value()));
    folded_[out] = std::move(c);
  }

  // Runs the kernel on constant inputs; a failure just leaves the outputs unknown-valued.
  void fold(Node& n, const OpSchema& schema) {
    std::vector<RtValue> in_values(n.inputs.size());
    std::vector<const RtValue*> in_ptrs(n.inputs.size(), nullptr);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (!n.inputs[i]) continue;
      in_values[i] = RtValue::of(*constant_of(n.inputs[i]));
      in_ptrs[i] = &in_values[i];
    }
    std::vector<RtValue> outs;
    try {
      KernelContext kctx(n, in_ptrs, outs, nullptr);
      schema.kernel(kctx);
    } catch (const Error& e) {
      // e.g. an index out of range: reported when the model runs
      return not_folded(n, fmt::format("the kernel failed: {}", e.what()));
    }
    for (int i = 0; i < n.num_outputs() && i < static_cast<int>(outs.size()); ++i) {
      Value* out = n.outputs[i];
      if (!out || !outs[i].is_tensor()) continue;
      if (outs[i].tensor.numel() > opts_.fold_limit) {
        not_folded(n, fmt::format("output '{}' has {} elements, above the limit {}", out->name,
                                  outs[i].tensor.numel(), opts_.fold_limit));
        continue;
      }
      const Tensor& t = outs[i].tensor;
      // The concrete result is the truth: it fixes dtype and every dim.
      out->type = TypeInfo::tensor(t.dtype(), shape_of(t.dims()));
      folded_[out] = t;
    }
  }

  std::vector<TypeInfo> subgraph(Graph& g, const std::vector<TypeInfo>& in) {
    KILN_CHECK(g.inputs.size() == in.size(), ErrorKind::kBadModel,
               "subgraph '{}' has {} inputs, the node gives it {}", g.name, g.inputs.size(),
               in.size());
    for (size_t i = 0; i < g.inputs.size() && i < in.size(); ++i) {
      Value* v = g.inputs[i];
      KILN_CHECK(!v->has_declared_type || agrees(in[i], v->type), ErrorKind::kBadModel,
                 "subgraph '{}': input '{}' is given {}, the subgraph declares it {}", g.name,
                 v->name, in[i].to_string(), v->type.to_string());
      v->type = v->has_declared_type ? merge_declared(in[i], v->type) : in[i];
    }
    graph(g);
    std::vector<TypeInfo> out;
    for (const Value* v : g.outputs) out.push_back(v->type);
    return out;
  }

  const Model& model_;
  const InferOptions& opts_;
  InferFacts* facts_;
  std::unordered_map<const Value*, Tensor> folded_;
  std::unordered_map<const Value*, std::vector<Dim>> dims_values_;
};

}  // namespace

void infer_shapes(Model& m, const InferOptions& opts, InferFacts* facts) {
  Inferrer inf(m, opts, facts);
  inf.graph(*m.graph);
  inf.hand_over();
}

}  // namespace kiln
