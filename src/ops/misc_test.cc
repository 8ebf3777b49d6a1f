// Unit tests of the misc family: strings, signal ops, random ops (shape/type only), TfIdf,
// training optimizers and the ai.onnx.ml ops.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/scalar_types.h"
#include "ops/op.h"
#include "support/error.h"

namespace kiln {
namespace {

struct M {
  Graph g;
  Node* n;
  const OpSchema* schema;

  M(const std::string& op, int inputs, int outputs = 1, int opset = 25, std::string domain = "") {
    n = g.add_node(op, domain);
    n->opset = opset;
    for (int i = 0; i < inputs; ++i) g.set_input(n, i, g.add_value("x" + std::to_string(i)));
    for (int i = 0; i < outputs; ++i) g.set_output(n, i, g.add_value("y" + std::to_string(i)));
    schema = OpRegistry::global().find(domain, op);
    EXPECT_NE(schema, nullptr) << op;
  }
  Attribute& add(const std::string& name, AttrKind k) {
    Attribute a;
    a.name = name;
    a.kind = k;
    n->attrs.push_back(a);
    return n->attrs.back();
  }
  M& i(const std::string& name, int64_t v) {
    add(name, AttrKind::kInt).i = v;
    return *this;
  }
  M& f(const std::string& name, float v) {
    add(name, AttrKind::kFloat).f = v;
    return *this;
  }
  M& s(const std::string& name, std::string v) {
    add(name, AttrKind::kString).s = v;
    return *this;
  }
  M& ints(const std::string& name, std::vector<int64_t> v) {
    add(name, AttrKind::kInts).ints = v;
    return *this;
  }
  M& floats(const std::string& name, std::vector<float> v) {
    add(name, AttrKind::kFloats).floats = v;
    return *this;
  }
  M& strs(const std::string& name, std::vector<std::string> v) {
    add(name, AttrKind::kStrings).strings = v;
    return *this;
  }
  M& tensor(const std::string& name, Tensor t) {
    add(name, AttrKind::kTensor).t = t;
    return *this;
  }

  std::vector<Tensor> run(std::vector<Tensor> in) {
    std::vector<RtValue> vals;
    for (auto& t : in) vals.push_back(t.defined() ? RtValue::of(t) : RtValue{});
    std::vector<const RtValue*> ptrs;
    for (auto& v : vals) ptrs.push_back(&v);
    std::vector<RtValue> outs;
    KernelContext ctx(*n, ptrs, outs, nullptr);
    schema->kernel(ctx);
    std::vector<Tensor> r;
    for (auto& o : outs) r.push_back(o.tensor);
    return r;
  }
  std::vector<std::optional<TypeInfo>> infer(std::vector<TypeInfo> types,
                                             std::vector<const Tensor*> consts = {}) {
    std::vector<InferContext::Input> in(types.size());
    for (size_t k = 0; k < types.size(); ++k) {
      in[k].type = &types[k];
      if (k < consts.size()) in[k].constant = consts[k];
    }
    InferContext ctx(*n, in, nullptr);
    schema->infer(ctx);
    return ctx.outputs();
  }
};

Tensor num(DataType dt, std::vector<int64_t> d, std::vector<double> v) {
  Tensor t(dt, std::move(d));
  EXPECT_EQ(t.numel(), static_cast<int64_t>(v.size()));
  for (size_t k = 0; k < v.size(); ++k) t.set_f64(static_cast<int64_t>(k), v[k]);
  return t;
}
Tensor f32(std::vector<int64_t> d, std::vector<double> v) { return num(DataType::kFloat, d, v); }
Tensor i64(std::vector<int64_t> d, std::vector<double> v) { return num(DataType::kInt64, d, v); }
Tensor str(std::vector<int64_t> d, std::vector<std::string> v) {
  Tensor t(DataType::kString, std::move(d));
  for (size_t k = 0; k < v.size(); ++k) t.strings()[k] = v[k];
  return t;
}
std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t k = 0; k < t.numel(); ++k) v.push_back(t.get_f64(k));
  return v;
}
std::vector<std::string> strings(const Tensor& t) {
  return std::vector<std::string>(t.strings(), t.strings() + t.numel());
}
void expect_near(const std::vector<double>& a, const std::vector<double>& b, double tol = 1e-5) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(a[k], b[k], tol) << "at " << k;
}

// ---------------------------------------------------------------------------------------------

TEST(MiscString, ConcatBroadcasts) {
  M m("StringConcat", 2);
  Tensor r = m.run({str({2}, {"a", "b"}), str({}, {"!"})})[0];
  EXPECT_EQ(strings(r), (std::vector<std::string>{"a!", "b!"}));
}

TEST(MiscString, SplitLikePython) {
  M ws("StringSplit", 1, 2);
  auto r = ws.run({str({2}, {"  a  b c ", ""})});
  EXPECT_EQ(r[0].dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(strings(r[0]), (std::vector<std::string>{"a", "b", "c", "", "", ""}));
  EXPECT_EQ(values(r[1]), (std::vector<double>{3, 0}));
  M d("StringSplit", 1, 2);
  d.s("delimiter", "--").i("maxsplit", 1);
  r = d.run({str({1}, {"x--y--z"})});
  EXPECT_EQ(strings(r[0]), (std::vector<std::string>{"x", "y--z"}));
  M ws1("StringSplit", 1, 2);
  ws1.i("maxsplit", 1);
  r = ws1.run({str({1}, {" a b c "})});
  EXPECT_EQ(strings(r[0]), (std::vector<std::string>{"a", "b c "}));
}

TEST(MiscString, Normalizer) {
  M m("StringNormalizer", 1);
  m.s("case_change_action", "UPPER").strs("stopwords", {"the"});
  Tensor r = m.run({str({1, 3}, {"The", "cat", "sat"})})[0];
  EXPECT_EQ(r.dims(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(strings(r), (std::vector<std::string>{"CAT", "SAT"}));
  M all("StringNormalizer", 1);
  all.i("is_case_sensitive", 1).strs("stopwords", {"x"});
  r = all.run({str({2}, {"x", "x"})})[0];
  EXPECT_EQ(strings(r), (std::vector<std::string>{""}));
}

TEST(MiscString, RegexFullMatch) {
  M m("RegexFullMatch", 1);
  m.s("pattern", R"(\d+-[a-z]+)");
  Tensor r = m.run({str({3}, {"12-ab", "12-ab!", "x"})})[0];
  EXPECT_EQ(values(r), (std::vector<double>{1, 0, 0}));
  // long inputs: no stack overflow inside std::regex, and a clean error past the cap
  M lng("RegexFullMatch", 1);
  lng.s("pattern", "[a-z]+");
  EXPECT_EQ(values(lng.run({str({1}, {std::string(40000, 'a')})})[0]), std::vector<double>{1});
  EXPECT_THROW(lng.run({str({1}, {std::string(60000, 'a')})}), Error);
  M bad("RegexFullMatch", 1);
  bad.s("pattern", "(");
  EXPECT_THROW(bad.run({str({1}, {"a"})}), Error);
}

// ---------------------------------------------------------------------------------------------

TEST(MiscSignal, Windows) {
  M hann("HannWindow", 1);
  expect_near(values(hann.run({i64({}, {4})})[0]), {0, 0.5, 1, 0.5});
  M black("BlackmanWindow", 1);
  black.i("periodic", 0).i("output_datatype", 11);
  Tensor b = black.run({i64({}, {4})})[0];
  EXPECT_EQ(b.dtype(), DataType::kDouble);
  expect_near(values(b), {0, 0.63, 0.63, 0});
  Tensor size = i64({}, {7});
  auto t = hann.infer({TypeInfo::tensor(DataType::kInt64, Shape{})}, {&size});
  EXPECT_EQ(t[0]->to_string(), TypeInfo::tensor(DataType::kFloat, Shape{7}).to_string());
}

TEST(MiscSignal, DftForwardOnesidedInverse) {
  // x = [1..5] real, axis 1 of [1, 5, 1]
  Tensor x = f32({1, 5, 1}, {1, 2, 3, 4, 5});
  M full("DFT", 1, 1, 19);
  Tensor y = full.run({x})[0];
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{1, 5, 2}));
  expect_near(values(y),
              {15, 0, -2.5, 3.4409548, -2.5, 0.81229924, -2.5, -0.81229924, -2.5, -3.4409548},
              1e-4);
  M one("DFT", 1, 1, 19);
  one.i("onesided", 1);
  Tensor h = one.run({x})[0];
  EXPECT_EQ(h.dims(), (std::vector<int64_t>{1, 3, 2}));
  M inv("DFT", 1, 1, 19);
  inv.i("inverse", 1);
  expect_near(values(inv.run({y})[0]), {1, 0, 2, 0, 3, 0, 4, 0, 5, 0}, 1e-4);
  // irfft of the rfft of [1,2,3,4] (opset 20, axis input, dft_length 4)
  M rf("DFT", 3, 1, 20);
  rf.i("onesided", 1);
  Tensor x4 = f32({1, 4, 1}, {1, 2, 3, 4});
  Tensor spec = rf.run({x4, Tensor(), i64({}, {1})})[0];
  M irf("DFT", 3, 1, 20);
  irf.i("onesided", 1).i("inverse", 1);
  Tensor back = irf.run({spec, i64({}, {4}), i64({}, {-2})})[0];
  EXPECT_EQ(back.dims(), (std::vector<int64_t>{1, 4, 1}));
  expect_near(values(back), {1, 2, 3, 4}, 1e-4);
}

TEST(MiscSignal, FftMatchesDirectSum) {
  // length 16 (FFT path) against the direct sum; complex input
  std::vector<double> v;
  for (int k = 0; k < 32; ++k) v.push_back(std::sin(0.7 * k) + 0.1 * k);
  Tensor x = f32({1, 16, 2}, v);
  M m("DFT", 1, 1, 19);
  const auto y = values(m.run({x})[0]);
  for (int k = 0; k < 16; ++k) {
    double re = 0, im = 0;
    for (int t = 0; t < 16; ++t) {
      const double a = -2 * M_PI * k * t / 16;
      re += v[2 * t] * std::cos(a) - v[2 * t + 1] * std::sin(a);
      im += v[2 * t] * std::sin(a) + v[2 * t + 1] * std::cos(a);
    }
    EXPECT_NEAR(y[2 * k], re, 1e-4);
    EXPECT_NEAR(y[2 * k + 1], im, 1e-4);
  }
}

TEST(MiscSignal, StftMatchesFramewiseDft) {
  Tensor sig = f32({1, 8, 1}, {1, 2, 3, 4, 5, 6, 7, 8});
  M m("STFT", 4, 1, 17);
  m.n->inputs[2] = nullptr;
  Tensor y = m.run({sig, i64({}, {2}), Tensor(), i64({}, {4})})[0];
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{1, 3, 3, 2}));
  // frame 1 = [3,4,5,6]: bins 18, (-2+2i), -2
  const auto v = values(y);
  expect_near(std::vector<double>(v.begin() + 6, v.begin() + 12), {18, 0, -2, 2, -2, 0});
}

TEST(MiscSignal, MelWeightMatrixShape) {
  M m("MelWeightMatrix", 5, 1, 17);
  Tensor w =
      m.run({i64({}, {8}), i64({}, {16}), i64({}, {8192}), f32({}, {0}), f32({}, {4096})})[0];
  EXPECT_EQ(w.dims(), (std::vector<int64_t>{9, 8}));
  EXPECT_EQ(w.get_f64(0), 1.0);
}

// ---------------------------------------------------------------------------------------------

TEST(MiscRandom, ShapesTypesAndSeeds) {
  M n("RandomNormal", 0);
  n.ints("shape", {2, 3}).i("dtype", 11).f("seed", 3);
  Tensor a = n.run({})[0];
  EXPECT_EQ(a.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.dtype(), DataType::kDouble);
  EXPECT_EQ(values(a), values(n.run({})[0]));  // same seed, same draws
  EXPECT_FALSE(n.schema->deterministic);
  M u("RandomUniformLike", 1);
  u.f("low", 2).f("high", 3);
  Tensor b = u.run({f32({4}, {0, 0, 0, 0})})[0];
  for (double v : values(b)) EXPECT_TRUE(v >= 2 && v <= 3);
  M be("Bernoulli", 1);
  Tensor c = be.run({f32({3}, {0, 1, 0})})[0];
  EXPECT_EQ(values(c), (std::vector<double>{0, 1, 0}));
  M mn("Multinomial", 1);
  mn.i("sample_size", 5);
  Tensor d = mn.run({f32({2, 2}, {0, -1e9, -1e9, 0})})[0];
  EXPECT_EQ(d.dtype(), DataType::kInt32);
  EXPECT_EQ(values(d), (std::vector<double>{0, 0, 0, 0, 0, 1, 1, 1, 1, 1}));
}

// ---------------------------------------------------------------------------------------------

TEST(MiscText, TfIdfSkipGrams) {
  M m("TfIdfVectorizer", 1);
  m.i("min_gram_length", 1).i("max_gram_length", 2).i("max_skip_count", 5).s("mode", "TF");
  m.ints("ngram_counts", {0, 4}).ints("ngram_indexes", {0, 1, 2, 3, 4, 5, 6});
  m.ints("pool_int64s", {2, 3, 5, 4, 5, 6, 7, 8, 6, 7});
  Tensor x = num(DataType::kInt32, {2, 6}, {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8});
  Tensor y = m.run({x})[0];
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 7}));
  EXPECT_EQ(values(y), (std::vector<double>{0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1}));
}

TEST(MiscText, ImageDecoderIsUnsupported) {
  M m("ImageDecoder", 1);
  try {
    m.run({num(DataType::kUInt8, {3}, {1, 2, 3})});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
  }
  auto t = m.infer({TypeInfo::tensor(DataType::kUInt8, Shape{3})});
  EXPECT_EQ(t[0]->to_string(),
            TypeInfo::tensor(DataType::kUInt8, Shape{Dim(), Dim(), 3}).to_string());
}

// ---------------------------------------------------------------------------------------------

TEST(MiscTraining, MomentumAndAdagrad) {
  const char* dom = "ai.onnx.preview.training";
  M m("Momentum", 5, 2, 1, dom);
  m.f("alpha", 0.5f).f("beta", 0.25f).s("mode", "standard").f("norm_coefficient", 0);
  auto r =
      m.run({f32({}, {0.1}), i64({}, {1}), f32({2}, {1, 2}), f32({2}, {4, 8}), f32({2}, {2, 2})});
  // V = 0.5*2 + 0.25*G ; X = X - 0.1*V
  expect_near(values(r[1]), {2, 3});
  expect_near(values(r[0]), {0.8, 1.7});
  M a("Adagrad", 5, 2, 1, dom);
  a.f("epsilon", 0);
  r = a.run({f32({}, {1}), i64({}, {0}), f32({1}, {1}), f32({1}, {3}), f32({1}, {7})});
  expect_near(values(r[1]), {16});
  expect_near(values(r[0]), {1 - 3.0 / 4.0});
}

// ---------------------------------------------------------------------------------------------

TEST(MiscMl, ArrayFeatureExtractorAndBinarizer) {
  M a("ArrayFeatureExtractor", 2, 1, 1, "ai.onnx.ml");
  Tensor r = a.run({f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({2}, {2, 0})})[0];
  EXPECT_EQ(values(r), (std::vector<double>{3, 1, 6, 4}));
  EXPECT_THROW(a.run({f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({1}, {3})}), Error);
  M b("Binarizer", 1, 1, 1, "ai.onnx.ml");
  b.f("threshold", 1);
  EXPECT_EQ(values(b.run({f32({3}, {0.5, 1, 1.5})})[0]), (std::vector<double>{0, 0, 1}));
}

TEST(MiscMl, LabelEncoder) {
  M m("LabelEncoder", 1, 1, 4, "ai.onnx.ml");
  m.strs("keys_strings", {"a", "b"}).ints("values_int64s", {7, 8});
  EXPECT_EQ(values(m.run({str({3}, {"b", "z", "a"})})[0]), (std::vector<double>{8, -1, 7}));
  M f("LabelEncoder", 1, 1, 4, "ai.onnx.ml");
  f.floats("keys_floats", {1.5f, NAN})
      .strs("values_strings", {"x", "nan"})
      .s("default_string", "?");
  EXPECT_EQ(strings(f.run({f32({3}, {NAN, 1.5, 2})})[0]),
            (std::vector<std::string>{"nan", "x", "?"}));
  M t("LabelEncoder", 1, 1, 4, "ai.onnx.ml");
  t.strs("keys_strings", {"a"}).tensor("values_tensor", num(DataType::kInt16, {1}, {5}));
  t.tensor("default_tensor", num(DataType::kInt16, {1}, {42}));
  Tensor r = t.run({str({2}, {"a", "q"})})[0];
  EXPECT_EQ(r.dtype(), DataType::kInt16);
  EXPECT_EQ(values(r), (std::vector<double>{5, 42}));
}

TEST(MiscMl, TreeEnsembleSingleTree) {
  M m("TreeEnsemble", 1, 1, 5, "ai.onnx.ml");
  m.i("aggregate_function", 1).i("n_targets", 2).i("post_transform", 0);
  m.ints("leaf_targetids", {0, 1, 0, 1})
      .tensor("leaf_weights", num(DataType::kDouble, {4}, {5.23, 12.12, -12.23, 7.21}));
  m.ints("nodes_falseleafs", {0, 1, 1}).ints("nodes_falsenodeids", {2, 2, 3});
  m.ints("nodes_featureids", {0, 0, 0})
      .tensor("nodes_modes", num(DataType::kUInt8, {3}, {0, 0, 0}));
  m.tensor("nodes_splits", num(DataType::kDouble, {3}, {3.14, 1.2, 4.2}));
  m.ints("nodes_trueleafs", {0, 1, 1}).ints("nodes_truenodeids", {1, 0, 1}).ints("tree_roots", {0});
  Tensor x = num(DataType::kDouble, {3, 2}, {1.2, 3.4, -0.12, 1.66, 4.14, 1.77});
  Tensor y = m.run({x})[0];
  expect_near(values(y), {5.23, 0, 5.23, 0, 0, 12.12});
}

}  // namespace
}  // namespace kiln
