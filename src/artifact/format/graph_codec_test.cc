// The artifact's IR serialization: every part of a model survives the round trip (symbolic dims,
// If/Loop subgraphs reading outer values, every attribute kind, functions), and bytes that are not
// what the writer wrote (truncated, corrupted, hand-crafted) fail with a kiln::Error, never a crash.
#include "artifact/format/graph_codec.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "artifact/format/format.h"
#include "ir/walk.h"
#include "support/error.h"

namespace kiln::artifact {
namespace {

Tensor floats(std::vector<int64_t> dims, float start) {
  Tensor t(DataType::kFloat, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + static_cast<float>(i);
  return t;
}

Value* input(Graph& g, const std::string& name, TypeInfo type) {
  Value* v = g.add_value(name);
  v->type = std::move(type);
  v->is_graph_input = true;
  v->has_declared_type = true;
  g.inputs.push_back(v);
  return v;
}

Value* node(Graph& g, const std::string& op, std::vector<Value*> ins, const std::string& out,
            std::vector<Attribute> attrs = {}) {
  Node* n = g.add_node(op);
  n->name = op + "_" + out;
  n->opset = 17;
  n->attrs = std::move(attrs);
  for (size_t i = 0; i < ins.size(); ++i) g.set_input(n, static_cast<int>(i), ins[i]);
  Value* v = g.add_value(out);
  v->type = TypeInfo::tensor(DataType::kFloat, Shape{Dim::symbol("batch"), 3});
  g.set_output(n, 0, v);
  return v;
}

// One attribute of every kind, on a node of a custom domain.
std::vector<Attribute> every_attribute_kind(Graph* parent) {
  std::vector<Attribute> a;
  auto add = [&](const char* name, AttrKind k) -> Attribute& {
    a.push_back(Attribute{.name = name, .kind = k});
    return a.back();
  };
  add("f", AttrKind::kFloat).f = 2.5f;
  add("i", AttrKind::kInt).i = -7;
  add("s", AttrKind::kString).s = std::string("bytes\0with nul", 14);
  add("t", AttrKind::kTensor).t = floats({2, 2}, 1);
  auto body = std::make_shared<Graph>(parent);
  body->name = "attr_graph";
  Value* bx = input(*body, "bx", TypeInfo::tensor(DataType::kFloat, Shape{}));
  body->outputs.push_back(node(*body, "Neg", {bx}, "by"));
  add("g", AttrKind::kGraph).g = body;
  add("fs", AttrKind::kFloats).floats = {1.f, -0.f, 3.25f};
  add("is", AttrKind::kInts).ints = {1, -2, INT64_MAX};
  add("ss", AttrKind::kStrings).strings = {"a", "", "ccc"};
  add("ts", AttrKind::kTensors).tensors = {floats({1}, 5), Tensor::from_int64s(std::vector<int64_t>{4, 5})};
  add("gs", AttrKind::kGraphs).graphs = {body};
  SparseTensor sp{.values = floats({2}, 9), .indices = Tensor::from_int64s(std::vector<int64_t>{0, 3}),
                  .dims = {4}};
  add("sp", AttrKind::kSparseTensor).sparse = sp;
  add("sps", AttrKind::kSparseTensors).sparse_tensors = {sp, sp};
  add("tp", AttrKind::kTypeProto).tp =
      TypeInfo::sequence(TypeInfo::tensor(DataType::kInt8, Shape{Dim::symbol("n*2"), Dim()}));
  add("tps", AttrKind::kTypeProtos).tps = {TypeInfo::optional(TypeInfo::tensor(DataType::kBool)),
                                           TypeInfo::tensor(DataType::kFloat16, Shape{})};
  Attribute& ref = add("r", AttrKind::kInt);
  ref.ref_attr_name = "outer_attr";
  ref.doc_string = "from the caller";
  return a;
}

// main(x: float[batch,3], cond: bool[]) with initializers w (float), k (int64), names (string);
// an If whose branches read x and w from the outer scope, a Loop whose body reads w, a node with
// every attribute kind, an omitted optional input, and a model-local function.
Model sample_model() {
  Model m;
  m.ir_version = 9;
  m.opsets = {{"", 17}, {"test.domain", 1}};
  m.producer_name = "kiln test";
  m.producer_version = "1";
  m.domain = "ai.kiln";
  m.model_version = 3;
  m.doc_string = "a model";
  m.metadata = {{"key", "value"}};
  m.preserved_fields = std::string("\x08\x01\x00", 3);
  m.graph = std::make_unique<Graph>();
  Graph& g = *m.graph;
  g.name = "main";
  Value* x = input(g, "x", TypeInfo::tensor(DataType::kFloat, Shape{Dim::symbol("batch"), 3}));
  Value* cond = input(g, "cond", TypeInfo::tensor(DataType::kBool, Shape{}));
  Value* w = g.add_value("w");
  w->data = floats({3}, 0.5f);
  w->type = TypeInfo::tensor(DataType::kFloat, Shape{3});
  g.initializers.push_back(w);
  Value* k = g.add_value("k");
  k->data = Tensor::from_int64s(std::vector<int64_t>{2});
  k->type = TypeInfo::tensor(DataType::kInt64, Shape{1});
  g.initializers.push_back(k);
  Value* names = g.add_value("names");
  names->data = Tensor(DataType::kString, {2});
  names->data.strings()[0] = "alpha";
  names->data.strings()[1] = std::string(1000, 'z');
  names->type = TypeInfo::tensor(DataType::kString, Shape{2});
  g.initializers.push_back(names);

  Value* added = node(g, "Add", {x, w}, "added");
  Node* if_node = g.add_node("If");
  if_node->name = "if";
  if_node->opset = 17;
  g.set_input(if_node, 0, cond);
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto b = std::make_shared<Graph>(&g);
    b->name = branch;
    b->outputs.push_back(node(*b, branch[0] == 't' ? "Mul" : "Sub", {added, w}, std::string(branch) + "_y"));
    Attribute a{.name = branch, .kind = AttrKind::kGraph};
    a.g = b;
    if_node->attrs.push_back(a);
  }
  Value* if_out = g.add_value("if_out");
  if_out->type = TypeInfo::tensor(DataType::kFloat, Shape{Dim::symbol("batch"), 3});
  g.set_output(if_node, 0, if_out);

  Node* loop = g.add_node("Loop");
  loop->name = "loop";
  loop->opset = 17;
  g.set_input(loop, 0, k);
  g.set_input(loop, 1, nullptr);  // omitted optional input
  g.set_input(loop, 2, if_out);
  auto body = std::make_shared<Graph>(&g);
  body->name = "body";
  input(*body, "iter", TypeInfo::tensor(DataType::kInt64, Shape{}));
  Value* bcond = input(*body, "bcond", TypeInfo::tensor(DataType::kBool, Shape{}));
  Value* carried = input(*body, "carried", TypeInfo::tensor(DataType::kFloat, Shape{Dim::symbol("batch"), 3}));
  body->outputs.push_back(bcond);  // an input passed straight through
  body->outputs.push_back(node(*body, "Add", {carried, w}, "carried_next"));
  loop->attrs.push_back(Attribute{.name = "body", .kind = AttrKind::kGraph, .g = body});
  Value* loop_out = g.add_value("loop_out");
  g.set_output(loop, 0, loop_out);

  Node* custom = g.add_node("Custom", "test.domain");
  custom->name = "custom";
  custom->opset = 1;
  custom->overload = "v2";
  custom->doc_string = "every attribute kind";
  custom->metadata = {{"m", "n"}};
  custom->attrs = every_attribute_kind(&g);
  g.set_input(custom, 0, loop_out);
  Value* custom_out = g.add_value("custom_out");
  g.set_output(custom, 0, custom_out);
  g.set_output(custom, 1, nullptr);  // omitted optional output
  g.value_infos.push_back(added);
  g.sparse_initializers = {"w"};
  g.outputs = {custom_out, if_out};

  Function f;
  f.name = "fn";
  f.domain = "test.domain";
  f.attribute_names = {"alpha"};
  f.attribute_defaults = {Attribute{.name = "beta", .kind = AttrKind::kFloat, .f = 1.5f}};
  f.opsets = {{"", 17}};
  f.body = std::make_shared<Graph>();
  Value* fx = input(*f.body, "fx", TypeInfo{});
  f.body->outputs.push_back(node(*f.body, "Relu", {fx}, "fy"));
  m.functions.push_back(std::move(f));
  return m;
}

// Everything a model holds, as text: two models print the same exactly when they are the same.
std::string dump_type(const TypeInfo& t) {
  std::string s = t.to_string() + fmt::format("/k{}e{}m{}", static_cast<int>(t.kind),
                                               static_cast<int>(t.elem), static_cast<int>(t.map_key));
  if (t.inner) s += "(" + dump_type(*t.inner) + ")";
  return s;
}
std::string dump_tensor(const Tensor& t) {
  if (!t.defined()) return "undef";
  std::string s = fmt::format("{}{}:", dtype_name(t.dtype()), dims_to_string(t.dims()));
  if (t.dtype() == DataType::kString)
    for (int64_t i = 0; i < t.numel(); ++i) s += t.strings()[i] + "|";
  else
    s.append(static_cast<const char*>(t.raw()), t.nbytes());
  return s;
}
std::string dump_graph(const Graph& g, int depth);
std::string dump_attr(const Attribute& a, int depth) {
  std::string s = fmt::format("{} k{} ref={} doc={} f={} i={} s={} t={} tp={}", a.name,
                              static_cast<int>(a.kind), a.ref_attr_name, a.doc_string, a.f, a.i, a.s,
                              dump_tensor(a.t), dump_type(a.tp));
  if (a.g) s += "{" + dump_graph(*a.g, depth + 1) + "}";
  for (float f : a.floats) s += fmt::format(",{}", f);
  for (int64_t i : a.ints) s += fmt::format(",{}", i);
  for (const auto& x : a.strings) s += "," + x;
  for (const auto& t : a.tensors) s += "," + dump_tensor(t);
  for (const auto& g : a.graphs) s += "{" + dump_graph(*g, depth + 1) + "}";
  auto sparse = [&](const SparseTensor& sp) {
    s += dump_tensor(sp.values) + dump_tensor(sp.indices) + dims_to_string(sp.dims);
  };
  if (a.kind == AttrKind::kSparseTensor) sparse(a.sparse);
  for (const auto& sp : a.sparse_tensors) sparse(sp);
  for (const auto& t : a.tps) s += "," + dump_type(t);
  return s;
}
std::string dump_value(const Value* v) {
  if (!v) return "<none>";
  return fmt::format("{}@{}:{} in={} decl={} data={} prod={}", v->name, v->owner ? v->owner->name : "?",
                     dump_type(v->type), v->is_graph_input, v->has_declared_type,
                     dump_tensor(v->data), v->producer ? v->producer->name : "-");
}
std::string dump_graph(const Graph& g, int depth) {
  std::string s = fmt::format("graph {} d{} doc={}\n", g.name, depth, g.doc_string);
  for (const auto& [k, v] : g.metadata) s += k + "=" + v + "\n";
  for (const Value* v : g.inputs) s += "in " + dump_value(v) + "\n";
  for (const Value* v : g.initializers) s += "init " + dump_value(v) + "\n";
  for (const auto& n : g.sparse_initializers) s += "sparse " + n + "\n";
  for (const Value* v : g.value_infos) s += "vi " + dump_value(v) + "\n";
  for (const auto& n : g.nodes()) {
    s += fmt::format("node {} {} {} {} {} {} owner={}\n", n->name, n->op_type, n->domain, n->overload,
                     n->doc_string, n->opset, n->owner ? n->owner->name : "?");
    for (const Value* v : n->inputs) s += "  < " + dump_value(v) + "\n";
    for (const Value* v : n->outputs) s += "  > " + dump_value(v) + "\n";
    for (const auto& a : n->attrs) s += "  @ " + dump_attr(a, depth) + "\n";
    for (const auto& [k, v] : n->metadata) s += "  m " + k + "=" + v + "\n";
  }
  for (const Value* v : g.outputs) s += "out " + dump_value(v) + "\n";
  return s;
}
std::string dump_model(const Model& m) {
  std::string s = fmt::format("ir{} {} {} {} v{} {} pf={}\n", m.ir_version, m.producer_name,
                              m.producer_version, m.domain, m.model_version, m.doc_string,
                              m.preserved_fields);
  for (const auto& [d, v] : m.opsets) s += fmt::format("opset {}={}\n", d, v);
  for (const auto& [k, v] : m.metadata) s += k + "=" + v + "\n";
  s += dump_graph(*m.graph, 0);
  for (const Function& f : m.functions) {
    s += fmt::format("fn {} {} {} {}\n", f.name, f.domain, f.overload, f.doc_string);
    for (const auto& n : f.attribute_names) s += "attr " + n + "\n";
    for (const auto& a : f.attribute_defaults) s += "default " + dump_attr(a, 0) + "\n";
    for (const auto& [d, v] : f.opsets) s += fmt::format("opset {}={}\n", d, v);
    s += dump_graph(*f.body, 0);
  }
  return s;
}

std::string container_of(const Model& m) {
  EncodedModel e = encode_model(m);
  return write_container({{SectionKind::kManifest, "{}"},
                          {SectionKind::kGraph, e.graph},
                          {SectionKind::kWeights, e.weights, false}});
}

DecodedModel read_back(const std::string& file) {
  const auto* p = reinterpret_cast<const uint8_t*>(file.data());
  Container c = read_container({p, file.size()}, nullptr, "test.kiln");
  return decode_model(c.section(SectionKind::kGraph), c.section(SectionKind::kWeights), nullptr);
}

TEST(ArtifactGraphCodec, RoundTripKeepsEverything) {
  const Model m = sample_model();
  const std::string file = container_of(m);
  DecodedModel d = read_back(file);
  EXPECT_EQ(dump_model(d.model), dump_model(m));
  // Outer-scope reads are wired to the main graph's values, not to copies.
  const Graph& g = *d.model.graph;
  const Node& if_node = *g.nodes()[1];
  const Node& then_mul = *if_node.attr("then_branch")->g->nodes()[0];
  EXPECT_EQ(then_mul.inputs[0], g.find("added"));
  EXPECT_EQ(then_mul.inputs[1], g.find("w"));
  EXPECT_EQ(if_node.attr("then_branch")->g->parent(), &g);
  EXPECT_EQ(g.find("w")->uses.size(), 4u);  // Add, the two branches, the loop body
  // A symbolic dim stays a symbol.
  EXPECT_TRUE(g.inputs[0]->type.shape->at(0).is_symbolic());
  EXPECT_EQ(g.inputs[0]->type.shape->at(0).sym(), "batch");
}

TEST(ArtifactGraphCodec, WeightsAreAlignedViewsOfTheFile) {
  const Model m = sample_model();
  const std::string file = container_of(m);
  std::shared_ptr<void> aligned(std::aligned_alloc(64, (file.size() + 63) / 64 * 64), std::free);
  std::memcpy(aligned.get(), file.data(), file.size());
  const auto* p = static_cast<const uint8_t*>(aligned.get());
  Container c = read_container({p, file.size()}, aligned, "test.kiln");
  DecodedModel d = decode_model(c.section(SectionKind::kGraph), c.section(SectionKind::kWeights), aligned);
  const Tensor& w = d.model.graph->find("w")->data;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w.raw()) % 64, 0u);
  EXPECT_GE(static_cast<const uint8_t*>(w.raw()), p);
  EXPECT_LT(static_cast<const uint8_t*>(w.raw()), p + file.size());  // a view, not a copy
  EXPECT_EQ(w.data<float>()[2], 2.5f);
  EXPECT_FALSE(d.weights_by_offset.empty());
}

// Every prefix of a valid file is refused with an Error (the header states the file's size).
TEST(ArtifactGraphCodec, TruncatedFilesAreRefused) {
  const std::string file = container_of(sample_model());
  for (size_t len = 0; len < file.size(); len += (len < 200 ? 1 : 97)) {
    const std::string cut = file.substr(0, len);
    EXPECT_THROW(read_back(cut), Error) << "length " << len;
  }
}

// Random bytes changed in the graph section, with the checksum made right again (as a hand-crafted
// file would have it): the reader either reads a model or raises an Error; it never crashes or
// reads outside the buffer (run under ASan by make test-asan).
TEST(ArtifactGraphCodec, CorruptedGraphSectionsFailCleanly) {
  const Model m = sample_model();
  EncodedModel e = encode_model(m);
  std::mt19937 rng(7);
  int refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string graph = e.graph;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits; ++k) {
      const size_t at = rng() % graph.size();
      graph[at] = static_cast<char>(rng() % 3 == 0 ? 0xff : rng());
    }
    const std::string file = write_container({{SectionKind::kManifest, "{}"},
                                              {SectionKind::kGraph, graph},
                                              {SectionKind::kWeights, e.weights, false}});
    try {
      read_back(file);
    } catch (const Error& err) {
      ++refused;
      EXPECT_NE(err.kind(), ErrorKind::kInternal) << err.what();
      EXPECT_EQ(std::string(err.what()).find('\n'), std::string::npos);
    }
  }
  EXPECT_GT(refused, 1000);
}

TEST(ArtifactContainer, CorruptionAndForeignVersionsAreNamed) {
  std::string file = container_of(sample_model());
  // A flipped byte of the graph section: the checksum says so.
  std::string flipped = file;
  flipped[200] ^= 0x40;
  try {
    read_back(flipped);
    FAIL() << "a corrupted section was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("corrupted"), std::string::npos) << e.what();
  }
  // Another format version: unsupported, with what to do.
  std::string newer = file;
  const uint32_t v = kFormatVersion + 1;
  std::memcpy(newer.data() + 8, &v, sizeof v);
  try {
    read_back(newer);
    FAIL() << "another format version was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("recompile"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_back("not an artifact at all"), Error);
  EXPECT_FALSE(looks_like_artifact({reinterpret_cast<const uint8_t*>("\x08\x07"), 2}));
}

}  // namespace
}  // namespace kiln::artifact
