// The reader half of graph_codec.h: untrusted bytes into a Model, every count, id, offset and
// length checked before it is used.
#include <cstring>

#include "artifact/format/byte_io.h"
#include "artifact/format/format.h"
#include "artifact/format/graph_codec.h"
#include "artifact/format/graph_tags.h"
#include "support/checked_math.h"
#include "support/error.h"
#include "support/limits.h"

namespace kiln::artifact {

namespace {

constexpr int kMaxTypeNesting = 16;  // seq(optional(seq(...)))

class ModelReader {
 public:
  ModelReader(std::span<const uint8_t> graph, std::span<const uint8_t> weights,
              std::shared_ptr<void> owner, DecodedModel& out)
      : r_(graph, "artifact graph section"), weights_(weights), owner_(std::move(owner)), out_(out) {}

  void model() {
    Model& m = out_.model;
    m.ir_version = r_.i64();
    opsets(m.opsets);
    m.producer_name = r_.str();
    m.producer_version = r_.str();
    m.domain = r_.str();
    m.model_version = r_.i64();
    m.doc_string = r_.str();
    pairs(m.metadata);
    m.graph = std::make_unique<Graph>();
    graph(*m.graph, 0);
    const uint64_t nf = r_.count(64, "functions");
    for (uint64_t i = 0; i < nf; ++i) {
      Function f;
      f.name = r_.str();
      f.domain = r_.str();
      f.overload = r_.str();
      f.doc_string = r_.str();
      strings(f.attribute_names);
      const uint64_t na = r_.count(28, "attribute defaults");
      for (uint64_t k = 0; k < na; ++k) f.attribute_defaults.push_back(attribute(0));
      opsets(f.opsets);
      pairs(f.metadata);
      std::vector<std::vector<Value*>> outer;
      std::swap(outer, scopes_);  // a function body sees no enclosing graph
      f.body = std::make_shared<Graph>();
      graph(*f.body, 0);
      std::swap(outer, scopes_);
      m.functions.push_back(std::move(f));
    }
    m.preserved_fields = r_.str();
    if (!r_.at_end()) r_.bad("bytes after the model");
  }

 private:
  void opsets(std::map<std::string, int64_t>& out) {
    const uint64_t n = r_.count(16, "opset imports");
    for (uint64_t i = 0; i < n; ++i) {
      std::string domain = r_.str();
      out[domain] = r_.i64();
    }
  }
  void pairs(std::vector<std::pair<std::string, std::string>>& out) {
    const uint64_t n = r_.count(16, "metadata entries");
    for (uint64_t i = 0; i < n; ++i) {
      std::string k = r_.str();
      out.emplace_back(std::move(k), r_.str());
    }
  }
  void strings(std::vector<std::string>& out) {
    const uint64_t n = r_.count(8, "strings");
    for (uint64_t i = 0; i < n; ++i) out.push_back(r_.str());
  }

  DataType dtype(bool allow_undefined) {
    const int32_t v = r_.i32();
    if (v == 0 ? !allow_undefined : !is_valid_dtype(v))
      r_.bad(fmt::format("element type {} is not one kiln knows", v));
    return static_cast<DataType>(v);
  }

  TypeInfo type(int depth = 0) {
    if (depth > kMaxTypeNesting) r_.bad("types nested too deep");
    TypeInfo t;
    const uint8_t kind = r_.u8();
    if (kind > static_cast<uint8_t>(TypeInfo::Kind::kMap)) r_.bad(fmt::format("type kind {}", kind));
    t.kind = static_cast<TypeInfo::Kind>(kind);
    t.elem = dtype(true);
    t.map_key = dtype(true);
    if (r_.u8()) {
      const uint64_t rank = r_.count(1, "dims");
      if (rank > static_cast<uint64_t>(limits::kMaxRank))
        r_.bad(fmt::format("rank {} above the cap {}", rank, limits::kMaxRank));
      Shape s;
      for (uint64_t i = 0; i < rank; ++i) {
        const uint8_t tag = r_.u8();
        if (tag == kDimKnown) s.push_back(Dim(r_.i64()));
        else if (tag == kDimSymbolic) s.push_back(Dim::symbol(r_.str()));
        else if (tag == kDimUnknown) s.push_back(Dim());
        else r_.bad(fmt::format("dim tag {}", tag));
      }
      t.shape = std::move(s);
    }
    if (r_.u8()) t.inner = std::make_shared<TypeInfo>(type(depth + 1));
    return t;
  }

  std::vector<int64_t> dims() {
    const uint64_t rank = r_.count(8, "dims");
    if (rank > static_cast<uint64_t>(limits::kMaxRank))
      r_.bad(fmt::format("rank {} above the cap {}", rank, limits::kMaxRank));
    std::vector<int64_t> d(rank);
    for (auto& x : d) x = r_.i64();
    return d;
  }

  Tensor tensor() {
    const DataType dt = dtype(false);
    std::vector<int64_t> d = dims();
    const auto numel = checked_product(d);
    if (!numel) r_.bad(fmt::format("tensor dims {} are negative or overflow", dims_to_string(d)));
    const uint8_t storage = r_.u8();
    if (storage == kTensorStrings) {
      if (dt != DataType::kString) r_.bad("inline strings for a tensor that holds numbers");
      // Each string takes at least its 8-byte length: a count the bytes left cannot hold is
      // refused before the array is allocated.
      if (static_cast<uint64_t>(*numel) > r_.remaining() / 8) r_.bad("string tensor runs past the end");
      Tensor t(dt, d);
      for (int64_t i = 0; i < *numel; ++i) t.strings()[i] = r_.str();
      return t;
    }
    if (dt == DataType::kString) r_.bad("a string tensor without its strings");
    const auto nbytes = checked_mul(*numel, static_cast<int64_t>(dtype_size(dt)));
    if (!nbytes) r_.bad("tensor byte size overflows");
    if (storage == kTensorEmpty) {
      if (*nbytes != 0) r_.bad("an empty tensor with elements");
      return Tensor(dt, d);
    }
    if (storage != kTensorInWeights) r_.bad(fmt::format("tensor storage tag {}", storage));
    const uint64_t offset = r_.u64();
    const uint64_t length = r_.u64();
    if (length != static_cast<uint64_t>(*nbytes))
      r_.bad(fmt::format("tensor of {} {} holds {} bytes, its dims need {}", dtype_name(dt),
                         dims_to_string(d), length, *nbytes));
    if (offset > weights_.size() || length > weights_.size() - offset)
      r_.bad(fmt::format("tensor bytes at weights offset {} (+{}) outside the weights section "
                         "({} bytes)", offset, length, weights_.size()));
    const uint8_t* p = weights_.data() + offset;
    Tensor t;
    if (reinterpret_cast<uintptr_t>(p) % kAlignment == 0) {
      // A view into the mapped file: the bytes are the artifact's, read-only in meaning.
      t = Tensor::view(dt, std::move(d), owner_, const_cast<uint8_t*>(p));
    } else {  // bytes held somewhere unaligned (a buffer in memory): copied into an aligned tensor
      t = Tensor(dt, std::move(d));
      std::memcpy(t.raw(), p, length);
    }
    out_.weights_by_offset.emplace(offset, t);
    return t;
  }

  SparseTensor sparse() {
    SparseTensor s;
    s.values = tensor();
    s.indices = tensor();
    s.dims = dims();
    return s;
  }

  Attribute attribute(int depth) {
    Attribute a;
    a.name = r_.str();
    const int32_t kind = r_.i32();
    if (kind < 0 || kind > static_cast<int32_t>(AttrKind::kTypeProtos))
      r_.bad(fmt::format("attribute '{}' of unknown kind {}", a.name, kind));
    a.kind = static_cast<AttrKind>(kind);
    a.ref_attr_name = r_.str();
    a.doc_string = r_.str();
    switch (a.kind) {
      case AttrKind::kUndefined: break;
      case AttrKind::kFloat: a.f = r_.f32(); break;
      case AttrKind::kInt: a.i = r_.i64(); break;
      case AttrKind::kString: a.s = r_.str(); break;
      case AttrKind::kTensor: a.t = tensor(); break;
      case AttrKind::kGraph: a.g = subgraph(depth); break;
      case AttrKind::kFloats: {
        const uint64_t n = r_.count(4, "floats");
        a.floats.resize(n);
        for (float& f : a.floats) f = r_.f32();
        break;
      }
      case AttrKind::kInts: {
        const uint64_t n = r_.count(8, "ints");
        a.ints.resize(n);
        for (int64_t& i : a.ints) i = r_.i64();
        break;
      }
      case AttrKind::kStrings: strings(a.strings); break;
      case AttrKind::kTensors: {
        const uint64_t n = r_.count(13, "tensors");
        for (uint64_t i = 0; i < n; ++i) a.tensors.push_back(tensor());
        break;
      }
      case AttrKind::kGraphs: {
        const uint64_t n = r_.count(1, "graphs");
        for (uint64_t i = 0; i < n; ++i) a.graphs.push_back(subgraph(depth));
        break;
      }
      case AttrKind::kSparseTensor: a.sparse = sparse(); break;
      case AttrKind::kSparseTensors: {
        const uint64_t n = r_.count(34, "sparse tensors");
        for (uint64_t i = 0; i < n; ++i) a.sparse_tensors.push_back(sparse());
        break;
      }
      case AttrKind::kTypeProto: a.tp = type(); break;
      case AttrKind::kTypeProtos: {
        const uint64_t n = r_.count(11, "types");
        for (uint64_t i = 0; i < n; ++i) a.tps.push_back(type());
        break;
      }
    }
    return a;
  }

  std::shared_ptr<Graph> subgraph(int depth) {
    if (!r_.u8()) return nullptr;
    if (depth + 1 > limits::kMaxGraphNesting)
      r_.bad(fmt::format("subgraphs nested deeper than {}", limits::kMaxGraphNesting));
    auto g = std::make_shared<Graph>(current_);
    graph(*g, depth + 1);
    return g;
  }

  Value* local(uint32_t id) {
    const auto& vs = scopes_.back();
    if (id >= vs.size()) r_.bad(fmt::format("value id {} (the graph has {} values)", id, vs.size()));
    return vs[id];
  }

  Value* ref() {
    const uint32_t up = r_.u32();
    const uint32_t id = r_.u32();
    if (up == kNoValue && id == kNoValue) return nullptr;
    if (up >= scopes_.size()) r_.bad(fmt::format("value reference {} graphs up", up));
    const auto& vs = scopes_[scopes_.size() - 1 - up];
    if (id >= vs.size()) r_.bad(fmt::format("value id {} (that graph has {} values)", id, vs.size()));
    return vs[id];
  }

  void graph(Graph& g, int depth) {
    Graph* saved = current_;
    current_ = &g;
    g.name = r_.str();
    g.doc_string = r_.str();
    pairs(g.metadata);
    const uint64_t nv = r_.count(23, "values");
    std::vector<Value*> values;
    values.reserve(nv);
    for (uint64_t i = 0; i < nv; ++i) {
      Value* v = g.add_value(r_.str());  // a name defined twice fails there (kBadModel)
      v->type = type();
      const uint8_t flags = r_.u8();
      v->is_graph_input = flags & kValueGraphInput;
      v->has_declared_type = flags & kValueDeclared;
      v->doc_string = r_.str();
      if (flags & kValueConstant) v->data = tensor();
      values.push_back(v);
    }
    scopes_.push_back(std::move(values));
    const uint64_t ni = r_.count(4, "graph inputs");
    for (uint64_t i = 0; i < ni; ++i) {
      Value* v = local(r_.u32());
      if (!v->is_graph_input) r_.bad(fmt::format("graph input '{}' not marked as one", v->name));
      g.inputs.push_back(v);
    }
    const uint64_t nz = r_.count(4, "initializers");
    for (uint64_t i = 0; i < nz; ++i) {
      Value* v = local(r_.u32());
      if (!v->is_constant()) r_.bad(fmt::format("initializer '{}' without data", v->name));
      g.initializers.push_back(v);
    }
    strings(g.sparse_initializers);
    const uint64_t nvi = r_.count(8, "value infos");
    for (uint64_t i = 0; i < nvi; ++i) {
      Value* v = ref();
      if (!v) r_.bad("an empty value info");
      g.value_infos.push_back(v);
    }
    const uint64_t nn = r_.count(60, "nodes");
    for (uint64_t i = 0; i < nn; ++i) node(g, depth);
    const uint64_t no = r_.count(8, "graph outputs");
    for (uint64_t i = 0; i < no; ++i) {
      Value* v = ref();
      if (!v) r_.bad("an empty graph output");
      g.outputs.push_back(v);
    }
    scopes_.pop_back();
    current_ = saved;
  }

  void node(Graph& g, int depth) {
    std::string name = r_.str();
    std::string op_type = r_.str();
    std::string domain = r_.str();
    Node* n = g.add_node(std::move(op_type), std::move(domain));
    n->name = std::move(name);
    n->overload = r_.str();
    n->doc_string = r_.str();
    n->opset = r_.i32();
    const uint64_t ni = r_.count(8, "node inputs");
    for (uint64_t i = 0; i < ni; ++i) g.set_input(n, static_cast<int>(i), ref());
    n->inputs.resize(ni, nullptr);
    const uint64_t no = r_.count(4, "node outputs");
    for (uint64_t i = 0; i < no; ++i) {
      const uint32_t id = r_.u32();
      Value* v = id == kNoValue ? nullptr : local(id);
      if (v && (v->producer || v->is_graph_input || v->is_constant()))
        r_.bad(fmt::format("node '{}' ({}) output '{}' is already defined", n->name, n->op_type,
                           v->name));
      g.set_output(n, static_cast<int>(i), v);
    }
    n->outputs.resize(no, nullptr);
    const uint64_t na = r_.count(28, "attributes");
    for (uint64_t i = 0; i < na; ++i) n->attrs.push_back(attribute(depth));
    pairs(n->metadata);
  }

  ByteReader r_;
  std::span<const uint8_t> weights_;
  std::shared_ptr<void> owner_;
  DecodedModel& out_;
  std::vector<std::vector<Value*>> scopes_;
  Graph* current_ = nullptr;
};

}  // namespace

DecodedModel decode_model(std::span<const uint8_t> graph, std::span<const uint8_t> weights,
                          std::shared_ptr<void> owner) {
  DecodedModel out;
  ModelReader r(graph, weights, std::move(owner), out);
  r.model();
  return out;
}

}  // namespace kiln::artifact
