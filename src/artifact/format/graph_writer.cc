// The writer half of graph_codec.h.
#include <unordered_map>

#include "artifact/format/byte_io.h"
#include "artifact/format/format.h"
#include "artifact/format/graph_codec.h"
#include "artifact/format/graph_tags.h"
#include "support/error.h"

namespace kiln::artifact {

namespace {

class ModelWriter {
 public:
  explicit ModelWriter(EncodedModel& out) : out_(out) {}

  void model(const Model& m) {
    w_.i64(m.ir_version);
    w_.u64(m.opsets.size());
    for (const auto& [domain, version] : m.opsets) {
      w_.str(domain);
      w_.i64(version);
    }
    w_.str(m.producer_name);
    w_.str(m.producer_version);
    w_.str(m.domain);
    w_.i64(m.model_version);
    w_.str(m.doc_string);
    pairs(m.metadata);
    graph(*m.graph);
    w_.u64(m.functions.size());
    for (const Function& f : m.functions) {
      w_.str(f.name);
      w_.str(f.domain);
      w_.str(f.overload);
      w_.str(f.doc_string);
      strings(f.attribute_names);
      w_.u64(f.attribute_defaults.size());
      for (const Attribute& a : f.attribute_defaults) attribute(a);
      w_.u64(f.opsets.size());
      for (const auto& [domain, version] : f.opsets) {
        w_.str(domain);
        w_.i64(version);
      }
      pairs(f.metadata);
      std::vector<Scope> outer;
      std::swap(outer, scopes_);  // a function body sees no enclosing graph
      graph(*f.body);
      std::swap(outer, scopes_);
    }
    w_.str(m.preserved_fields);
    out_.graph = std::move(w_.bytes());
  }

 private:
  struct Scope {
    const Graph* graph;
    std::unordered_map<const Value*, uint32_t> ids;
  };

  void pairs(const std::vector<std::pair<std::string, std::string>>& kv) {
    w_.u64(kv.size());
    for (const auto& [k, v] : kv) {
      w_.str(k);
      w_.str(v);
    }
  }
  void strings(const std::vector<std::string>& v) {
    w_.u64(v.size());
    for (const auto& s : v) w_.str(s);
  }

  void type(const TypeInfo& t) {
    w_.u8(static_cast<uint8_t>(t.kind));
    w_.i32(static_cast<int32_t>(t.elem));
    w_.i32(static_cast<int32_t>(t.map_key));
    w_.u8(t.shape.has_value());
    if (t.shape) {
      w_.u64(t.shape->size());
      for (const Dim& d : *t.shape) {
        if (d.is_known()) {
          w_.u8(kDimKnown);
          w_.i64(d.value());
        } else if (d.is_symbolic()) {
          w_.u8(kDimSymbolic);
          w_.str(d.sym());
        } else {
          w_.u8(kDimUnknown);
        }
      }
    }
    w_.u8(t.inner != nullptr);
    if (t.inner) type(*t.inner);
  }

  uint64_t weight_offset(const Tensor& t) {
    auto it = out_.weight_offsets.find(t.raw());
    // A buffer shared by two tensors (a view of another) is stored once when it is the same bytes.
    if (it != out_.weight_offsets.end() && it->first == t.raw() && sizes_[t.raw()] == t.nbytes())
      return it->second;
    weights_.pad_to(kAlignment);
    const uint64_t offset = weights_.size();
    weights_.raw(t.raw(), t.nbytes());
    out_.weight_offsets[t.raw()] = offset;
    sizes_[t.raw()] = t.nbytes();
    return offset;
  }

  void tensor(const Tensor& t) {
    w_.i32(static_cast<int32_t>(t.dtype()));
    w_.u64(t.dims().size());
    for (int64_t d : t.dims()) w_.i64(d);
    if (t.dtype() == DataType::kString) {
      w_.u8(kTensorStrings);
      for (int64_t i = 0; i < t.numel(); ++i) w_.str(t.strings()[i]);
    } else if (t.nbytes() == 0) {
      w_.u8(kTensorEmpty);
    } else {
      w_.u8(kTensorInWeights);
      w_.u64(weight_offset(t));
      w_.u64(t.nbytes());
    }
  }

  void sparse(const SparseTensor& s) {
    tensor(s.values);
    tensor(s.indices);
    w_.u64(s.dims.size());
    for (int64_t d : s.dims) w_.i64(d);
  }

  void attribute(const Attribute& a) {
    w_.str(a.name);
    w_.i32(static_cast<int32_t>(a.kind));
    w_.str(a.ref_attr_name);
    w_.str(a.doc_string);
    switch (a.kind) {
      case AttrKind::kUndefined: break;
      case AttrKind::kFloat: w_.f32(a.f); break;
      case AttrKind::kInt: w_.i64(a.i); break;
      case AttrKind::kString: w_.str(a.s); break;
      case AttrKind::kTensor: tensor(a.t); break;
      case AttrKind::kGraph: subgraph(a.g); break;
      case AttrKind::kFloats:
        w_.u64(a.floats.size());
        for (float f : a.floats) w_.f32(f);
        break;
      case AttrKind::kInts:
        w_.u64(a.ints.size());
        for (int64_t i : a.ints) w_.i64(i);
        break;
      case AttrKind::kStrings: strings(a.strings); break;
      case AttrKind::kTensors:
        w_.u64(a.tensors.size());
        for (const Tensor& t : a.tensors) tensor(t);
        break;
      case AttrKind::kGraphs:
        w_.u64(a.graphs.size());
        for (const auto& g : a.graphs) subgraph(g);
        break;
      case AttrKind::kSparseTensor: sparse(a.sparse); break;
      case AttrKind::kSparseTensors:
        w_.u64(a.sparse_tensors.size());
        for (const SparseTensor& s : a.sparse_tensors) sparse(s);
        break;
      case AttrKind::kTypeProto: type(a.tp); break;
      case AttrKind::kTypeProtos:
        w_.u64(a.tps.size());
        for (const TypeInfo& t : a.tps) type(t);
        break;
    }
  }

  void subgraph(const std::shared_ptr<Graph>& g) {
    w_.u8(g != nullptr);
    if (g) graph(*g);
  }

  // A value reference: how many scopes up its graph is, and its id there.
  void ref(const Value* v) {
    if (!v) {
      w_.u32(kNoValue);
      w_.u32(kNoValue);
      return;
    }
    for (size_t up = 0; up < scopes_.size(); ++up) {
      const Scope& s = scopes_[scopes_.size() - 1 - up];
      if (auto it = s.ids.find(v); it != s.ids.end()) {
        w_.u32(static_cast<uint32_t>(up));
        w_.u32(it->second);
        return;
      }
    }
    KILN_ASSERT(false, "a value '" + v->name + "' outside every enclosing graph");
  }

  void graph(const Graph& g) {
    scopes_.push_back({&g, {}});
    // The values this graph owns, in a fixed order: what it declares, then what its nodes make.
    std::vector<const Value*> values;
    auto add = [&](const Value* v) {
      if (v && v->owner == &g && scopes_.back().ids.emplace(v, values.size()).second)
        values.push_back(v);
    };
    for (const Value* v : g.inputs) add(v);
    for (const Value* v : g.initializers) add(v);
    for (const auto& n : g.nodes())
      for (const Value* v : n->outputs) add(v);
    for (const auto& n : g.nodes())
      for (const Value* v : n->inputs) add(v);
    for (const Value* v : g.value_infos) add(v);
    for (const Value* v : g.outputs) add(v);

    w_.str(g.name);
    w_.str(g.doc_string);
    pairs(g.metadata);
    w_.u64(values.size());
    for (const Value* v : values) {
      w_.str(v->name);
      type(v->type);
      w_.u8((v->is_graph_input ? kValueGraphInput : 0) | (v->has_declared_type ? kValueDeclared : 0) |
            (v->is_constant() ? kValueConstant : 0));
      w_.str(v->doc_string);
      if (v->is_constant()) tensor(v->data);
    }
    auto local_ids = [&](const std::vector<Value*>& vs) {
      w_.u64(vs.size());
      for (const Value* v : vs) w_.u32(scopes_.back().ids.at(v));
    };
    local_ids(g.inputs);
    local_ids(g.initializers);
    strings(g.sparse_initializers);
    w_.u64(g.value_infos.size());
    for (const Value* v : g.value_infos) ref(v);
    w_.u64(g.nodes().size());
    for (const auto& n : g.nodes()) {
      w_.str(n->name);
      w_.str(n->op_type);
      w_.str(n->domain);
      w_.str(n->overload);
      w_.str(n->doc_string);
      w_.i32(n->opset);
      w_.u64(n->inputs.size());
      for (const Value* v : n->inputs) ref(v);
      w_.u64(n->outputs.size());
      for (const Value* v : n->outputs) w_.u32(v ? scopes_.back().ids.at(v) : kNoValue);
      w_.u64(n->attrs.size());
      for (const Attribute& a : n->attrs) attribute(a);
      pairs(n->metadata);
    }
    w_.u64(g.outputs.size());
    for (const Value* v : g.outputs) ref(v);
    scopes_.pop_back();
  }

  EncodedModel& out_;
  ByteWriter w_;
  ByteWriter weights_;
  std::unordered_map<const void*, size_t> sizes_;
  std::vector<Scope> scopes_;

 public:
  void finish() {
    weights_.pad_to(kAlignment);
    for (size_t i = 0; i < kAlignment; ++i) weights_.u8(0);  // kernels may read a vector past the end
    out_.weights = std::move(weights_.bytes());
  }
};

}  // namespace

EncodedModel encode_model(const Model& m) {
  KILN_ASSERT(m.graph != nullptr, "encode_model: a model without a graph");
  EncodedModel out;
  ModelWriter w(out);
  w.model(m);
  w.finish();
  return out;
}

}  // namespace kiln::artifact
