#include "onnx/export.h"

#include <cstring>
#include <fstream>
#include <set>

#include "ir/walk.h"
#include "onnx/proto.h"
#include "onnx/tensor_proto.h"
#include "spec/normalize.h"
#include "support/error.h"
#include "support/mapped_file.h"

namespace kiln {

namespace {

void add_unknown_message(google::protobuf::Message& m, int number, const std::string& bytes) {
  m.GetReflection()->MutableUnknownFields(&m)->AddLengthDelimited(number, bytes);
}

void metadata_to_unknown(google::protobuf::Message& m, int number,
                         const std::vector<std::pair<std::string, std::string>>& md) {
  for (const auto& [k, v] : md) {
    onnx::StringStringEntryProto e;
    e.set_key(k);
    e.set_value(v);
    add_unknown_message(m, number, e.SerializeAsString());
  }
}

// Writes `n` bytes at the stream's position, seeking over the file pages that would be all zero so
// that they become holes of a sparse file: zero-initialized or pruned weights then cost no disk
// writes (on a disk that writes 50 MB/s, a 2 GB data file is 40 s). The caller sets the file's
// final size, since a skipped tail leaves the file short.
void write_skipping_zero_pages(std::ostream& out, const char* p, size_t n) {
  constexpr size_t kPage = 4096;
  static const char zeros[kPage] = {};
  const auto start = static_cast<size_t>(out.tellp());
  // Pieces end at file page boundaries; a run of pieces of one kind is one write or one seek.
  auto piece_end = [&](size_t at) { return std::min(n, (start + at) / kPage * kPage + kPage - start); };
  auto is_hole = [&](size_t at, size_t end) {
    return end - at == kPage && std::memcmp(p + at, zeros, kPage) == 0;
  };
  size_t at = 0;
  while (at < n) {
    size_t end = piece_end(at);
    const bool hole = is_hole(at, end);
    while (end < n && is_hole(end, piece_end(end)) == hole) end = piece_end(end);
    if (hole) out.seekp(static_cast<std::streamoff>(end - at), std::ios::cur);
    else out.write(p + at, static_cast<std::streamsize>(end - at));
    at = end;
  }
}

class Exporter {
 public:
  Exporter(const SaveOptions& opts, std::ofstream* data_file, std::string data_location)
      : opts_(opts), data_(data_file), location_(std::move(data_location)) {}

  void model(const Model& m, onnx::ModelProto& mp) {
    if (!m.preserved_fields.empty()) mp.ParseFromString(m.preserved_fields);
    mp.set_ir_version(m.ir_version);
    initializers_are_inputs_ = m.ir_version < 4;
    if (!m.producer_name.empty()) mp.set_producer_name(m.producer_name);
    if (!m.producer_version.empty()) mp.set_producer_version(m.producer_version);
    if (!m.domain.empty()) mp.set_domain(m.domain);
    if (m.model_version) mp.set_model_version(m.model_version);
    if (!m.doc_string.empty()) mp.set_doc_string(m.doc_string);
    for (const auto& [k, v] : m.metadata) {
      auto* e = mp.add_metadata_props();
      e->set_key(k);
      e->set_value(v);
    }
    for (const auto& [d, v] : m.opsets) {
      auto* o = mp.add_opset_import();
      o->set_domain(d);
      o->set_version(v);
    }
    for (const auto& f : m.functions) function(f, *mp.add_functions());
    graph(*m.graph, *mp.mutable_graph());
  }

 private:
  void type(const TypeInfo& t, onnx::TypeProto& tp) {
    auto shape = [&](onnx::TensorShapeProto* sp) {
      for (const Dim& d : *t.shape) {
        auto* dp = sp->add_dim();
        if (d.is_known()) dp->set_dim_value(d.value());
        else if (d.is_symbolic()) dp->set_dim_param(d.sym());
      }
    };
    switch (t.kind) {
      case TypeInfo::Kind::kTensor:
        tp.mutable_tensor_type()->set_elem_type(static_cast<int32_t>(t.elem));
        if (t.shape) shape(tp.mutable_tensor_type()->mutable_shape());
        break;
      case TypeInfo::Kind::kSparseTensor:
        tp.mutable_sparse_tensor_type()->set_elem_type(static_cast<int32_t>(t.elem));
        if (t.shape) shape(tp.mutable_sparse_tensor_type()->mutable_shape());
        break;
      case TypeInfo::Kind::kSequence:
        if (t.inner) type(*t.inner, *tp.mutable_sequence_type()->mutable_elem_type());
        else tp.mutable_sequence_type();
        break;
      case TypeInfo::Kind::kOptional:
        if (t.inner) type(*t.inner, *tp.mutable_optional_type()->mutable_elem_type());
        else tp.mutable_optional_type();
        break;
      case TypeInfo::Kind::kMap:
        tp.mutable_map_type()->set_key_type(static_cast<int32_t>(t.map_key));
        if (t.inner) type(*t.inner, *tp.mutable_map_type()->mutable_value_type());
        break;
      default: break;
    }
  }

  void value_info(const Value& v, onnx::ValueInfoProto& vi) {
    vi.set_name(v.name);
    if (v.type.kind != TypeInfo::Kind::kUnknown) type(v.type, *vi.mutable_type());
    if (!v.doc_string.empty()) vi.set_doc_string(v.doc_string);
  }

  void tensor(const Tensor& t, const std::string& name, onnx::TensorProto& tp) {
    const bool external = data_ && t.dtype() != DataType::kString &&
                          static_cast<int64_t>(t.nbytes()) >= opts_.external_threshold &&
                          dtype_file_bits(t.dtype()) >= 8;
    if (!external) {
      tensor_to_proto(t, tp);
      tp.set_name(name);
      return;
    }
    tp.set_name(name);
    tp.set_data_type(static_cast<int32_t>(t.dtype()));
    for (int64_t d : t.dims()) tp.add_dims(d);
    int64_t offset = data_->tellp();
    const int64_t pad = (64 - offset % 64) % 64;  // aligned, so the loader can view in place
    for (int64_t i = 0; i < pad; ++i) data_->put('\0');
    offset += pad;
    write_skipping_zero_pages(*data_, static_cast<const char*>(t.raw()), t.nbytes());
    KILN_CHECK(data_->good(), ErrorKind::kBadInput, "cannot write external data '{}'", location_);
    tp.set_data_location(onnx::TensorProto::EXTERNAL);
    auto kv = [&](const char* k, const std::string& v) {
      auto* e = tp.add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    kv("location", location_);
    kv("offset", std::to_string(offset));
    kv("length", std::to_string(t.nbytes()));
  }

  void attribute(const Attribute& a, onnx::AttributeProto& ap) {
    ap.set_name(a.name);
    ap.set_type(static_cast<onnx::AttributeProto::AttributeType>(a.kind));
    if (!a.doc_string.empty()) ap.set_doc_string(a.doc_string);
    if (!a.ref_attr_name.empty()) {
      ap.set_ref_attr_name(a.ref_attr_name);
      return;
    }
    switch (a.kind) {
      case AttrKind::kFloat: ap.set_f(a.f); break;
      case AttrKind::kInt: ap.set_i(a.i); break;
      case AttrKind::kString: ap.set_s(a.s); break;
      case AttrKind::kTensor: tensor(a.t, "", *ap.mutable_t()); break;
      case AttrKind::kGraph: graph(*a.g, *ap.mutable_g()); break;
      case AttrKind::kSparseTensor: sparse_to_proto(a.sparse, *ap.mutable_sparse_tensor()); break;
      case AttrKind::kTypeProto: type(a.tp, *ap.mutable_tp()); break;
      case AttrKind::kFloats: for (float f : a.floats) ap.add_floats(f); break;
      case AttrKind::kInts: for (int64_t i : a.ints) ap.add_ints(i); break;
      case AttrKind::kStrings: for (const auto& s : a.strings) ap.add_strings(s); break;
      case AttrKind::kTensors: for (const auto& t : a.tensors) tensor(t, "", *ap.add_tensors()); break;
      case AttrKind::kGraphs: for (const auto& g : a.graphs) graph(*g, *ap.add_graphs()); break;
      case AttrKind::kSparseTensors:
        for (const auto& s : a.sparse_tensors) sparse_to_proto(s, *ap.add_sparse_tensors());
        break;
      case AttrKind::kTypeProtos: for (const auto& t : a.tps) type(t, *ap.add_type_protos()); break;
      default: break;
    }
  }

  void node(const Node& n, onnx::NodeProto& np, std::set<const Value*>& used_constants) {
    np.set_op_type(n.op_type);
    if (!n.name.empty()) np.set_name(n.name);
    if (!n.domain.empty()) np.set_domain(n.domain);
    if (!n.doc_string.empty()) np.set_doc_string(n.doc_string);
    const Denormalized d = denormalize(n);
    for (const Value* v : d.inputs) {
      np.add_input(v ? v->name : "");
      if (v && v->is_constant()) used_constants.insert(v);
    }
    for (const Value* v : n.outputs) np.add_output(v ? v->name : "");
    for (const auto& a : n.attrs)
      if (a.name != d.replaced_attr) attribute(a, *np.add_attribute());
    for (const auto& a : d.extra_attrs) attribute(a, *np.add_attribute());
    if (!n.overload.empty()) {
      np.GetReflection()->MutableUnknownFields(&np)->AddLengthDelimited(8, n.overload);
    }
    metadata_to_unknown(np, 9, n.metadata);
  }

  // Constant values a graph's nodes (or its subgraphs' nodes) read that belong to graph g.
  void collect_outer_constants(const Graph& sub, const Graph& g, std::set<const Value*>& out) {
    for_each_nested_node(sub, [&](const Node& n) {
      for (const Value* v : denormalize(n).inputs)
        if (v && v->owner == &g && v->is_constant()) out.insert(v);
    });
  }

  void graph(const Graph& g, onnx::GraphProto& gp) {
    gp.set_name(g.name.empty() ? "graph" : g.name);  // ONNX (and kiln's loader) want a name
    if (!g.doc_string.empty()) gp.set_doc_string(g.doc_string);
    metadata_to_unknown(gp, 16, g.metadata);
    for (const Value* v : g.inputs) value_info(*v, *gp.add_input());
    std::set<const Value*> used;
    for (const auto& n : g.nodes()) {
      node(*n, *gp.add_node(), used);
      for_each_subgraph(*n, [&](const Graph& sg) { collect_outer_constants(sg, g, used); });
    }
    for (const Value* v : g.outputs) {
      value_info(*v, *gp.add_output());
      if (v->is_constant()) used.insert(v);
    }
    // Initializers: the file's ones in order, then constants kiln made (normalized attributes
    // that stayed inputs, folded values) that something still reads.
    std::set<const Value*> written;
    std::vector<const Value*> written_order;
    std::set<std::string> sparse(g.sparse_initializers.begin(), g.sparse_initializers.end());
    auto write_init = [&](const Value* v) {
      if (!written.insert(v).second) return;
      written_order.push_back(v);
      if (sparse.contains(v->name)) {
        sparse_to_proto(to_sparse(v->data), *gp.add_sparse_initializer());
        gp.mutable_sparse_initializer()->rbegin()->mutable_values()->set_name(v->name);
        return;
      }
      tensor(v->data, v->name, *gp.add_initializer());
    };
    for (const Value* v : g.initializers)
      if (v->is_constant() && (used.contains(v) || v->is_graph_input || keep_unused_)) write_init(v);
    std::vector<const Value*> extra(used.begin(), used.end());
    std::sort(extra.begin(), extra.end(),
              [](const Value* a, const Value* b) { return a->name < b->name; });
    for (const Value* v : extra)
      if (v->owner == &g) write_init(v);
    // Before IR 4 every initializer is also listed as a graph input (import took them out).
    if (initializers_are_inputs_)
      for (const Value* v : written_order)
        if (!v->is_graph_input) value_info(*v, *gp.add_input());
    std::set<const Value*> declared;
    for (const Value* v : g.value_infos) {
      if (v->producer && declared.insert(v).second) value_info(*v, *gp.add_value_info());
    }
    if (opts_.write_inferred_types) {
      for (const auto& n : g.nodes())
        for (const Value* v : n->outputs)
          if (v && v->type.kind != TypeInfo::Kind::kUnknown && declared.insert(v).second &&
              std::find(g.outputs.begin(), g.outputs.end(), v) == g.outputs.end())
            value_info(*v, *gp.add_value_info());
    }
  }

  static SparseTensor to_sparse(const Tensor& dense) {
    SparseTensor s;
    s.dims = dense.dims();
    std::vector<int64_t> idx;
    const size_t elem = dtype_size(dense.dtype());
    const auto* bytes = static_cast<const uint8_t*>(dense.raw());
    for (int64_t i = 0; i < dense.numel(); ++i) {
      bool zero = true;
      for (size_t b = 0; b < elem; ++b) zero &= bytes[i * elem + b] == 0;
      if (!zero) idx.push_back(i);
    }
    s.indices = Tensor::from_int64s(idx);
    s.values = Tensor(dense.dtype(), {int64_t(idx.size())});
    for (size_t k = 0; k < idx.size(); ++k)
      std::memcpy(static_cast<uint8_t*>(s.values.raw()) + k * elem, bytes + idx[k] * elem, elem);
    return s;
  }

  void function(const Function& f, onnx::FunctionProto& fp) {
    fp.set_name(f.name);
    fp.set_domain(f.domain);
    if (!f.doc_string.empty()) fp.set_doc_string(f.doc_string);
    for (const Value* v : f.body->inputs) fp.add_input(v->name);
    for (const Value* v : f.body->outputs) fp.add_output(v->name);
    for (const auto& a : f.attribute_names) fp.add_attribute(a);
    for (const auto& [d, v] : f.opsets) {
      auto* o = fp.add_opset_import();
      o->set_domain(d);
      o->set_version(v);
    }
    std::set<const Value*> used;
    for (const auto& n : f.body->nodes()) node(*n, *fp.add_node(), used);
    KILN_CHECK(used.empty() || std::all_of(used.begin(), used.end(),
                                           [](const Value* v) { return v->producer; }),
               ErrorKind::kUnsupported, "function '{}': constants in a function body", f.name);
    for (const auto& a : f.attribute_defaults) {
      onnx::AttributeProto ap;
      attribute(a, ap);
      add_unknown_message(fp, 11, ap.SerializeAsString());
    }
    if (!f.overload.empty())
      fp.GetReflection()->MutableUnknownFields(&fp)->AddLengthDelimited(13, f.overload);
    metadata_to_unknown(fp, 14, f.metadata);
  }

  const SaveOptions& opts_;
  std::ofstream* data_;
  std::string location_;
  bool initializers_are_inputs_ = false;
  bool keep_unused_ = true;  // a save does not drop what the file had; dead-code passes do
};

// Initializers and tensor attributes (Constant nodes' values): what the exporter may move out.
int64_t constant_bytes(const Graph& g) {
  int64_t total = 0;
  for (const Value* v : g.initializers) total += static_cast<int64_t>(v->data.nbytes());
  for (const auto& n : g.nodes())
    for (const Attribute& a : n->attrs) {
      if (a.kind == AttrKind::kTensor) total += static_cast<int64_t>(a.t.nbytes());
      for (const Tensor& t : a.tensors) total += static_cast<int64_t>(t.nbytes());
    }
  for (const Graph* sg : g.subgraphs()) total += constant_bytes(*sg);
  return total;
}

}  // namespace

std::string serialize_model(const Model& m) {
  onnx::ModelProto mp;
  SaveOptions opts;
  Exporter(opts, nullptr, "").model(m, mp);
  return mp.SerializeAsString();
}

bool needs_external_data(const Model& m) {
  // protobuf cannot serialize a message of 2 GB or more; the rest of the model gets 64 MB.
  return constant_bytes(*m.graph) > (int64_t(1) << 31) - (int64_t(64) << 20);
}

SavedModel save_model(const Model& m, const std::filesystem::path& path, const SaveOptions& opts_in) {
  SaveOptions opts = opts_in;
  SavedModel saved;
  if (!opts.external_data && needs_external_data(m)) {
    opts.external_data = true;
    saved.external_data_forced = true;
  }
  onnx::ModelProto mp;
  if (opts.external_data) {
    const std::string location = path.filename().string() + ".data";
    const auto data_path = path.parent_path() / location;
    const auto tmp = data_path.string() + ".kiln-tmp";
    std::ofstream data(tmp, std::ios::binary | std::ios::trunc);
    KILN_CHECK(data.good(), ErrorKind::kBadInput, "cannot write '{}'", tmp);
    Exporter(opts, &data, location).model(m, mp);
    const auto size = static_cast<uintmax_t>(data.tellp());
    data.close();
    KILN_CHECK(data.good(), ErrorKind::kBadInput, "cannot write '{}' (disk full?)", tmp);
    std::error_code ec;
    if (std::filesystem::file_size(tmp, ec) < size) std::filesystem::resize_file(tmp, size, ec);
    KILN_CHECK(!ec, ErrorKind::kBadInput, "cannot write '{}': {}", tmp, ec.message());
    std::filesystem::rename(tmp, data_path);
    saved.data_path = data_path;
  } else {
    Exporter(opts, nullptr, "").model(m, mp);
  }
  std::string bytes;
  KILN_CHECK(mp.SerializeToString(&bytes), ErrorKind::kBadInput,
             "model too large to serialize; use external data");
  write_file_atomically(path, bytes);
  return saved;
}

}  // namespace kiln
