#include "onnx/import.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/unknown_field_set.h>

#include <algorithm>
#include <climits>
#include <unordered_map>
#include <unordered_set>

#include "onnx/paged_input.h"
#include "onnx/proto.h"
#include "onnx/signature_check.h"
#include "onnx/tensor_proto.h"
#include "spec/normalize.h"
#include "support/error.h"
#include "support/limits.h"
#include "support/mapped_file.h"

namespace kiln {

namespace {

using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;

// Fields newer than libonnx's onnx.proto (1.12) arrive as unknown fields; read them by number.
template <typename Msg>
std::vector<Msg> unknown_messages(const google::protobuf::Message& m, int number) {
  std::vector<Msg> out;
  const UnknownFieldSet& set = m.GetReflection()->GetUnknownFields(m);
  for (int i = 0; i < set.field_count(); ++i) {
    const UnknownField& f = set.field(i);
    if (f.number() != number || f.type() != UnknownField::TYPE_LENGTH_DELIMITED) continue;
    Msg msg;
    KILN_CHECK(msg.ParseFromString(f.length_delimited()), ErrorKind::kBadModel,
               "field {} of {} does not parse", number, m.GetTypeName());
    out.push_back(std::move(msg));
  }
  return out;
}

std::string unknown_string(const google::protobuf::Message& m, int number) {
  const UnknownFieldSet& set = m.GetReflection()->GetUnknownFields(m);
  for (int i = 0; i < set.field_count(); ++i) {
    const UnknownField& f = set.field(i);
    if (f.number() == number && f.type() == UnknownField::TYPE_LENGTH_DELIMITED)
      return f.length_delimited();
  }
  return {};
}

std::vector<std::pair<std::string, std::string>> metadata_of(
    const google::protobuf::RepeatedPtrField<onnx::StringStringEntryProto>& props) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& kv : props) out.emplace_back(kv.key(), kv.value());
  return out;
}

std::vector<std::pair<std::string, std::string>> unknown_metadata(const google::protobuf::Message& m,
                                                                  int number) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& kv : unknown_messages<onnx::StringStringEntryProto>(m, number))
    out.emplace_back(kv.key(), kv.value());
  return out;
}

class Importer {
 public:
  explicit Importer(std::filesystem::path dir) { external_.model_dir = std::move(dir); }

  Model import(onnx::ModelProto& mp) {
    Model m;
    m.ir_version = mp.ir_version();
    ir_version_ = m.ir_version;
    KILN_CHECK(m.ir_version >= 1, ErrorKind::kBadModel, "model: ir_version {} is not valid",
               m.ir_version);
    m.producer_name = mp.producer_name();
    m.producer_version = mp.producer_version();
    m.domain = mp.domain();
    m.model_version = mp.model_version();
    m.doc_string = mp.doc_string();
    m.metadata = metadata_of(mp.metadata_props());
    m.opsets = opsets_of(mp.opset_import(), "model");
    KILN_CHECK(!m.opsets.empty(), ErrorKind::kBadModel, "model: no opset_import");
    // Kept as they are so that a save writes them back: training info and fields newer than kiln.
    onnx::ModelProto keep;
    *keep.mutable_training_info() = mp.training_info();
    keep.mutable_unknown_fields()->MergeFrom(mp.unknown_fields());
    m.preserved_fields = keep.SerializeAsString();

    for (auto& fp : *mp.mutable_functions()) m.functions.push_back(function(fp, m));
    KILN_CHECK(mp.has_graph(), ErrorKind::kBadModel, "model: no graph");
    KILN_CHECK(!mp.graph().name().empty(), ErrorKind::kBadModel, "model: the graph has no name");
    opsets_ = &m.opsets;
    m.graph = std::make_unique<Graph>();
    main_ = m.graph.get();
    graph(*mp.mutable_graph(), *m.graph, m.opsets);
    return m;
  }

 private:
  std::map<std::string, int64_t> opsets_of(
      const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& ids, const char* where) {
    std::map<std::string, int64_t> out;
    for (const auto& id : ids) {
      std::string d = id.domain() == "ai.onnx" ? "" : id.domain();
      KILN_CHECK(id.version() >= 1, ErrorKind::kBadModel, "{}: opset version {} for domain '{}'",
                 where, id.version(), d);
      KILN_CHECK(!out.contains(d), ErrorKind::kBadModel, "{}: domain '{}' imported twice", where,
                 d);
      out[d] = id.version();
    }
    return out;
  }

  TypeInfo type(const onnx::TypeProto& tp, const std::string& what, int depth = 0) {
    KILN_CHECK(depth < 16, ErrorKind::kBadModel, "{}: type nested too deep", what);
    TypeInfo t;
    auto tensor_like = [&](int32_t elem, bool has_shape, const onnx::TensorShapeProto& shape,
                           TypeInfo::Kind kind) {
      t.kind = kind;
      // A tensor type always names its element type (ONNX's checker asks for the field; kiln
      // does not guess one and infer onward from it).
      KILN_CHECK(elem != 0, ErrorKind::kBadModel, "{}: element type is undefined", what);
      KILN_CHECK(is_valid_dtype(elem), ErrorKind::kBadModel, "{}: unknown element type {}", what,
                 elem);
      t.elem = static_cast<DataType>(elem);
      if (has_shape) {
        KILN_CHECK(shape.dim_size() <= limits::kMaxRank, ErrorKind::kBadModel,
                   "{}: rank {} above the limit {}", what, shape.dim_size(), limits::kMaxRank);
        Shape s;
        for (const auto& d : shape.dim()) {
          if (d.has_dim_value()) {
            KILN_CHECK(d.dim_value() >= 0, ErrorKind::kBadModel, "{}: negative dim {}", what,
                       d.dim_value());
            s.emplace_back(d.dim_value());
          } else if (d.has_dim_param()) {
            s.push_back(Dim::symbol(d.dim_param()));
          } else {
            s.emplace_back();
          }
        }
        t.shape = std::move(s);
      }
    };
    switch (tp.value_case()) {
      case onnx::TypeProto::kTensorType:
        tensor_like(tp.tensor_type().elem_type(), tp.tensor_type().has_shape(),
                    tp.tensor_type().shape(), TypeInfo::Kind::kTensor);
        break;
      case onnx::TypeProto::kSparseTensorType:
        tensor_like(tp.sparse_tensor_type().elem_type(), tp.sparse_tensor_type().has_shape(),
                    tp.sparse_tensor_type().shape(), TypeInfo::Kind::kSparseTensor);
        break;
      case onnx::TypeProto::kSequenceType:
        t = TypeInfo::sequence(type(tp.sequence_type().elem_type(), what, depth + 1));
        break;
      case onnx::TypeProto::kOptionalType:
        t = TypeInfo::optional(type(tp.optional_type().elem_type(), what, depth + 1));
        break;
      case onnx::TypeProto::kMapType:
        t.kind = TypeInfo::Kind::kMap;
        KILN_CHECK(is_valid_dtype(tp.map_type().key_type()), ErrorKind::kBadModel,
                   "{}: unknown map key type {}", what, tp.map_type().key_type());
        t.map_key = static_cast<DataType>(tp.map_type().key_type());
        t.inner = std::make_shared<TypeInfo>(type(tp.map_type().value_type(), what, depth + 1));
        break;
      default: break;
    }
    return t;
  }

  // `io` names a main-graph input or output: ONNX requires those to declare a type, and a tensor
  // type its shape (dims may be unknown or symbolic); a subgraph's may leave them to inference.
  void declare(Value* v, const onnx::ValueInfoProto& vi, const char* io = nullptr) {
    if (io) {
      KILN_CHECK(vi.has_type() && vi.type().value_case() != onnx::TypeProto::VALUE_NOT_SET,
                 ErrorKind::kBadModel, "graph {} '{}' has no type", io, vi.name());
      const onnx::TypeProto& tp = vi.type();
      KILN_CHECK(!tp.has_tensor_type() || tp.tensor_type().has_shape(), ErrorKind::kBadModel,
                 "graph {} '{}' has no shape (the main graph's inputs and outputs need one; its "
                 "dims may be symbolic or unknown)", io, vi.name());
      KILN_CHECK(!tp.has_sequence_type() || tp.sequence_type().has_elem_type(),
                 ErrorKind::kBadModel, "graph {} '{}' is a sequence without an element type", io,
                 vi.name());
    }
    if (vi.has_type()) {
      v->type = type(vi.type(), "value '" + vi.name() + "'");
      v->has_declared_type = true;
    }
    if (!vi.doc_string().empty()) v->doc_string = vi.doc_string();
  }

  Attribute attribute(onnx::AttributeProto& ap, const std::string& where, Graph* owner,
                      const std::map<std::string, int64_t>& opsets) {
    Attribute a;
    a.name = ap.name();
    a.ref_attr_name = ap.ref_attr_name();
    a.doc_string = ap.doc_string();
    KILN_CHECK(!a.name.empty(), ErrorKind::kBadModel, "{}an attribute has no name", where);
    const std::string what = where + "attribute '" + a.name + "'";
    int32_t kind = ap.type();
    if (kind == 0) {  // files from before types were written: infer from the field set
      if (ap.has_f()) kind = 1;
      else if (ap.has_i()) kind = 2;
      else if (ap.has_s()) kind = 3;
      else if (ap.has_t()) kind = 4;
      else if (ap.has_g()) kind = 5;
      else if (ap.floats_size()) kind = 6;
      else if (ap.ints_size()) kind = 7;
      else if (ap.strings_size()) kind = 8;
      else if (ap.tensors_size()) kind = 9;
      else if (ap.graphs_size()) kind = 10;
    }
    KILN_CHECK(kind >= 1 && kind <= 14, ErrorKind::kBadModel, "{} has unknown type {}", what, kind);
    a.kind = static_cast<AttrKind>(kind);
    if (!a.ref_attr_name.empty()) return a;  // its value comes from the calling node
    switch (a.kind) {
      case AttrKind::kFloat: a.f = ap.f(); break;
      case AttrKind::kInt: a.i = ap.i(); break;
      case AttrKind::kString: a.s = ap.s(); break;
      case AttrKind::kTensor: a.t = tensor_from_proto(*ap.mutable_t(), &external_, what); break;
      case AttrKind::kGraph:
        KILN_CHECK(ap.has_g(), ErrorKind::kBadModel, "{} has no graph", what);
        a.g = subgraph(*ap.mutable_g(), owner, opsets, what);
        break;
      case AttrKind::kSparseTensor:
        a.sparse = sparse_from_proto(*ap.mutable_sparse_tensor(), &external_, what);
        break;
      case AttrKind::kTypeProto: a.tp = type(ap.tp(), what); break;
      case AttrKind::kFloats: a.floats.assign(ap.floats().begin(), ap.floats().end()); break;
      case AttrKind::kInts: a.ints.assign(ap.ints().begin(), ap.ints().end()); break;
      case AttrKind::kStrings: a.strings.assign(ap.strings().begin(), ap.strings().end()); break;
      case AttrKind::kTensors:
        for (auto& t : *ap.mutable_tensors())
          a.tensors.push_back(tensor_from_proto(t, &external_, what));
        break;
      case AttrKind::kGraphs:
        for (auto& g : *ap.mutable_graphs()) a.graphs.push_back(subgraph(g, owner, opsets, what));
        break;
      case AttrKind::kSparseTensors:
        for (auto& s : *ap.mutable_sparse_tensors())
          a.sparse_tensors.push_back(sparse_from_proto(s, &external_, what));
        break;
      case AttrKind::kTypeProtos:
        for (const auto& t : ap.type_protos()) a.tps.push_back(type(t, what));
        break;
      default: break;
    }
    return a;
  }

  std::shared_ptr<Graph> subgraph(onnx::GraphProto& gp, Graph* parent,
                                   const std::map<std::string, int64_t>& opsets,
                                   const std::string& what) {
    KILN_CHECK(parent->depth() + 1 < limits::kMaxGraphNesting, ErrorKind::kBadModel,
               "{}: subgraphs nested deeper than {}", what, limits::kMaxGraphNesting);
    KILN_CHECK(!gp.name().empty(), ErrorKind::kBadModel, "{}: the graph has no name", what);
    auto g = std::make_shared<Graph>(parent);
    graph(gp, *g, opsets);
    return g;
  }

  void graph(onnx::GraphProto& gp, Graph& g, const std::map<std::string, int64_t>& opsets) {
    g.name = gp.name();
    g.doc_string = gp.doc_string();
    g.metadata = unknown_metadata(gp, 16);
    const std::string gname = g.parent() ? "subgraph '" + g.name + "'" : "graph";

    for (const auto& in : gp.input()) {
      KILN_CHECK(!in.name().empty(), ErrorKind::kBadModel, "{}: an input has no name", gname);
      KILN_CHECK(!g.find(in.name()), ErrorKind::kBadModel, "{}: input '{}' is listed twice", gname,
                 in.name());
      Value* v = g.add_value(in.name());
      v->is_graph_input = true;
      declare(v, in, &g == main_ ? "input" : nullptr);
      g.inputs.push_back(v);
    }
    for (auto& tp : *gp.mutable_initializer()) {
      const std::string what = "initializer '" + tp.name() + "'";
      KILN_CHECK(!tp.name().empty(), ErrorKind::kBadModel, "{}: an initializer has no name", gname);
      Value* v = g.find(tp.name());
      KILN_CHECK(!v || (v->is_graph_input && !v->is_constant()), ErrorKind::kBadModel,
                 "{} is defined twice", what);
      // Before IR 4 every initializer is a graph input too (the inputs declare their types).
      KILN_CHECK(v || ir_version_ >= 4, ErrorKind::kBadModel,
                 "{} is not a graph input (ir_version {} requires every initializer to be one)",
                 what, ir_version_);
      if (!v) v = g.add_value(tp.name());
      v->data = tensor_from_proto(tp, &external_, what);
      if (!v->has_declared_type) v->type = TypeInfo::tensor(v->data.dtype(), shape_of(v->data.dims()));
      else check_initializer_type(*v, what);
      g.initializers.push_back(v);
    }
    // Before IR 4 every initializer had to be listed as an input too: there they are constants,
    // not inputs a caller feeds (ONNX Runtime reads them so). The export lists them again.
    if (ir_version_ < 4) {
      std::erase_if(g.inputs, [](Value* v) {
        if (!v->is_constant()) return false;
        v->is_graph_input = false;
        return true;
      });
    }
    for (auto& sp : *gp.mutable_sparse_initializer()) {
      const std::string name = sp.values().name();
      const std::string what = "sparse initializer '" + name + "'";
      KILN_CHECK(!name.empty() && !g.find(name), ErrorKind::kBadModel,
                 "{} has no name or is defined twice", what);
      SparseTensor s = sparse_from_proto(sp, &external_, what);
      Value* v = g.add_value(name);
      v->data = s.to_dense();
      v->type = TypeInfo::tensor(v->data.dtype(), shape_of(v->data.dims()));
      g.initializers.push_back(v);
      g.sparse_initializers.push_back(name);
    }

    // Nodes in three steps: outputs first (so subgraphs may refer to any value of this graph),
    // then attributes (subgraphs), then inputs.
    std::vector<Node*> nodes;
    for (auto& np : *gp.mutable_node()) {
      Node* n = g.add_node(np.op_type(), np.domain() == "ai.onnx" ? "" : np.domain());
      n->name = np.name();
      n->doc_string = np.doc_string();
      n->overload = unknown_string(np, 8);
      n->metadata = unknown_metadata(np, 9);
      KILN_CHECK(!n->op_type.empty(), ErrorKind::kBadModel, "{}: node '{}' has no op_type", gname,
                 n->name);
      auto it = opsets.find(n->domain);
      KILN_CHECK(it != opsets.end(), ErrorKind::kBadModel,
                 "{}domain '{}' is not in the model's opset_import", n->where(), n->domain);
      n->opset = static_cast<int>(it->second);
      for (int i = 0; i < np.output_size(); ++i) {
        const std::string& name = np.output(i);
        if (name.empty()) {
          n->outputs.push_back(nullptr);
          continue;
        }
        KILN_CHECK(!g.find(name), ErrorKind::kBadModel,
                   "node '{}' ({}): output '{}' is already defined (duplicate assignment)",
                   n->name, n->op_type, name);
        // Single assignment holds across scopes: a subgraph may read an outer value, not
        // assign its name again.
        KILN_CHECK(!g.lookup(name), ErrorKind::kBadModel,
                   "node '{}' ({}): output '{}' is already defined in an enclosing graph",
                   n->name, n->op_type, name);
        g.set_output(n, i, g.add_value(name));
      }
      nodes.push_back(n);
    }
    for (size_t k = 0; k < nodes.size(); ++k) {
      Node* n = nodes[k];
      for (auto& ap : *gp.mutable_node(static_cast<int>(k))->mutable_attribute()) {
        KILN_CHECK(!n->attr(ap.name()), ErrorKind::kBadModel, "{}attribute '{}' is set twice",
                   n->where(), ap.name());
        n->attrs.push_back(attribute(ap, n->where(), &g, opsets));
      }
    }
    for (size_t k = 0; k < nodes.size(); ++k) {
      Node* n = nodes[k];
      const auto& np = gp.node(static_cast<int>(k));
      for (int i = 0; i < np.input_size(); ++i) {
        const std::string& name = np.input(i);
        Value* v = nullptr;
        if (!name.empty()) {
          v = g.lookup(name);
          KILN_CHECK(v, ErrorKind::kBadModel, "{}input '{}' is undefined", n->where(), name);
        }
        g.set_input(n, i, v);
      }
    }
    for (const auto& out : gp.output()) {
      Value* v = g.lookup(out.name());
      KILN_CHECK(v, ErrorKind::kBadModel, "{}: output '{}' is not produced by any node", gname,
                 out.name());
      if (v->owner == &g) declare(v, out, &g == main_ ? "output" : nullptr);
      g.outputs.push_back(v);
    }
    for (const auto& vi : gp.value_info()) {
      Value* v = g.find(vi.name());
      if (!v || v->is_graph_input) continue;  // type of a value that does not exist: dropped
      declare(v, vi);
      g.value_infos.push_back(v);
    }
    g.sort_topologically();
  }

  Function function(onnx::FunctionProto& fp, const Model& m) {
    Function f;
    f.name = fp.name();
    f.domain = fp.domain();
    f.doc_string = fp.doc_string();
    f.overload = unknown_string(fp, 13);
    f.metadata = unknown_metadata(fp, 14);
    const std::string what = "function '" + f.name + "'";
    KILN_CHECK(!f.name.empty(), ErrorKind::kBadModel, "model: a function has no name");
    KILN_CHECK(!m.find_function(f.domain, f.name), ErrorKind::kBadModel, "{} is defined twice",
               what);
    f.opsets = opsets_of(fp.opset_import(), what.c_str());
    if (f.opsets.empty()) f.opsets = m.opsets;
    f.attribute_names.assign(fp.attribute().begin(), fp.attribute().end());
    f.body = std::make_shared<Graph>();
    f.body->name = f.name;
    for (auto& ap : unknown_messages<onnx::AttributeProto>(fp, 11))
      f.attribute_defaults.push_back(attribute(ap, what + ": ", f.body.get(), f.opsets));
    // The body as a graph whose inputs and outputs are the formal parameters.
    onnx::GraphProto gp;
    gp.set_name(f.name);
    for (const auto& in : fp.input()) gp.add_input()->set_name(in);
    for (const auto& out : fp.output()) gp.add_output()->set_name(out);
    *gp.mutable_node() = fp.node();
    for (auto& vi : unknown_messages<onnx::ValueInfoProto>(fp, 12)) *gp.add_value_info() = vi;
    with_context(what + ": ", [&] { graph(gp, *f.body, f.opsets); });
    return f;
  }

  // A graph input with an initializer: the data must be of the type the input declares.
  static void check_initializer_type(const Value& v, const std::string& what) {
    const TypeInfo& t = v.type;
    if (t.kind == TypeInfo::Kind::kUnknown) return;
    KILN_CHECK(t.kind == TypeInfo::Kind::kTensor && t.elem == v.data.dtype(), ErrorKind::kBadModel,
               "{} is {}, its graph input declares {}", what,
               TypeInfo::tensor(v.data.dtype(), shape_of(v.data.dims())).to_string(), t.to_string());
    if (!t.shape) return;
    bool fits = t.shape->size() == v.data.dims().size();
    for (size_t i = 0; fits && i < t.shape->size(); ++i)
      fits = !(*t.shape)[i].is_known() || (*t.shape)[i].value() == v.data.dims()[i];
    KILN_CHECK(fits, ErrorKind::kBadModel, "{} has dims {}, its graph input declares {}", what,
               dims_to_string(v.data.dims()), t.to_string());
  }

  ExternalData external_;
  const Graph* main_ = nullptr;  // the model's graph (not a subgraph or a function body)
  const std::map<std::string, int64_t>* opsets_ = nullptr;
  int64_t ir_version_ = 0;
};

// Function bodies may call other local functions; a cycle or a chain deeper than the cap is bad.
void check_function_calls(const Model& m) {
  std::map<const Function*, int> depth;  // -1 while being visited
  std::function<int(const Function*)> visit = [&](const Function* f) -> int {
    auto it = depth.find(f);
    if (it != depth.end()) {
      KILN_CHECK(it->second >= 0, ErrorKind::kBadModel, "function '{}' calls itself", f->name);
      return it->second;
    }
    depth[f] = -1;
    int d = 0;
    for (const auto& n : f->body->nodes())
      if (const Function* callee = m.find_function(n->domain, n->op_type))
        d = std::max(d, visit(callee) + 1);
    KILN_CHECK(d < limits::kMaxFunctionDepth, ErrorKind::kBadModel,
               "function '{}' calls functions {} deep", f->name, d);
    depth[f] = d;
    return d;
  };
  for (const auto& f : m.functions) visit(&f);
}

// The input as a ModelProto, with protobuf's nesting limit at kiln's; kBadModel otherwise.
onnx::ModelProto parse_model_proto(google::protobuf::io::CodedInputStream& in, size_t size) {
  KILN_CHECK(size < size_t(INT_MAX), ErrorKind::kBadModel,
             "model file is {} bytes: above 2 GB, weights must be in external data", size);
  onnx::ModelProto mp;
  in.SetRecursionLimit(limits::kMaxGraphNesting * 4);
  KILN_CHECK(mp.ParseFromCodedStream(&in) && in.ConsumedEntireMessage(), ErrorKind::kBadModel,
             "not a valid ONNX model (protobuf parse failed: truncated, corrupt or nested too "
             "deep)");
  return mp;
}

onnx::ModelProto parse_model_proto(std::string_view bytes) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(std::min(bytes.size(), size_t(INT_MAX))));
  return parse_model_proto(in, bytes.size());
}

Model import_model_proto(onnx::ModelProto& mp, const std::filesystem::path& dir) {
  Importer importer(dir);
  Model m = importer.import(mp);
  check_function_calls(m);
  check_signatures(m);  // on the nodes as the file wrote them
  normalize_opsets(m);
  return m;
}

}  // namespace

Model load_model_from_bytes(std::string_view bytes, const std::filesystem::path& dir) {
  onnx::ModelProto mp = parse_model_proto(bytes);
  return import_model_proto(mp, dir);
}

namespace {

void external_locations(const onnx::TensorProto& t, std::vector<std::string>& out) {
  if (t.data_location() != onnx::TensorProto::EXTERNAL) return;
  for (const auto& kv : t.external_data())
    if (kv.key() == "location") out.push_back(kv.value());
}

void external_locations(const onnx::GraphProto& g, std::vector<std::string>& out);

void external_locations(const onnx::NodeProto& n, std::vector<std::string>& out) {
  for (const auto& a : n.attribute()) {
    if (a.has_t()) external_locations(a.t(), out);
    for (const auto& t : a.tensors()) external_locations(t, out);
    if (a.has_sparse_tensor()) {
      external_locations(a.sparse_tensor().values(), out);
      external_locations(a.sparse_tensor().indices(), out);
    }
    if (a.has_g()) external_locations(a.g(), out);
    for (const auto& g : a.graphs()) external_locations(g, out);
  }
}

void external_locations(const onnx::GraphProto& g, std::vector<std::string>& out) {
  for (const auto& t : g.initializer()) external_locations(t, out);
  for (const auto& s : g.sparse_initializer()) {
    external_locations(s.values(), out);
    external_locations(s.indices(), out);
  }
  for (const auto& n : g.node()) external_locations(n, out);
}

}  // namespace

std::vector<std::filesystem::path> external_data_files(std::string_view bytes, const std::filesystem::path& dir) {
  const onnx::ModelProto mp = parse_model_proto(bytes);
  std::vector<std::string> names;
  external_locations(mp.graph(), names);
  for (const auto& f : mp.functions())
    for (const auto& n : f.node()) external_locations(n, names);
  std::vector<std::filesystem::path> files;
  for (const std::string& name : names) {
    try {
      std::filesystem::path p = safe_external_path(dir, name);
      std::error_code ec;
      if (std::filesystem::is_regular_file(p, ec)) files.push_back(std::move(p));
    } catch (const Error&) {
      // Leaves the folder or is malformed: the loader says so when the model is loaded.
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

Model load_model(const std::filesystem::path& path) {
  auto file = MappedFile::open(path);
  const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  return with_context("'" + path.filename().string() + "': ", [&] {
    // Read through PagedInput: the file's pages leave as the parse copies them out.
    onnx::ModelProto mp;
    {
      PagedInput paged(*file);
      google::protobuf::io::CodedInputStream in(&paged);
      mp = parse_model_proto(in, static_cast<size_t>(file->size()));
    }
    file.reset();
    return import_model_proto(mp, dir);
  });
}

}  // namespace kiln
