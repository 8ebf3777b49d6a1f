// Unit tests of the misc family: strings, signal ops, random ops (shape/type only), TfIdf,
// training optimizers and the ai.onnx.ml ops.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/scalar_types.h"
#include "ops/op.h"
#include "ops/op_test_util.h"
#include "support/error.h"

namespace kiln {
namespace {

using op_test::OpNode;
using op_test::values;
using op_test::expect_near;

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
std::vector<std::string> strings(const Tensor& t) {
  return std::vector<std::string>(t.strings(), t.strings() + t.numel());
}

// ---------------------------------------------------------------------------------------------

TEST(MiscString, ConcatBroadcasts) {
  OpNode m("StringConcat", 2);
  Tensor r = m.run_all({str({2}, {"a", "b"}), str({}, {"!"})})[0];
  EXPECT_EQ(strings(r), (std::vector<std::string>{"a!", "b!"}));
}

TEST(MiscString, SplitLikePython) {
  OpNode ws("StringSplit", 1, 2);
  auto r = ws.run_all({str({2}, {"  a  b c ", ""})});
  EXPECT_EQ(r[0].dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(strings(r[0]), (std::vector<std::string>{"a", "b", "c", "", "", ""}));
  EXPECT_EQ(values(r[1]), (std::vector<double>{3, 0}));
  OpNode d("StringSplit", 1, 2);
  d.attr_s("delimiter", "--").attr_i("maxsplit", 1);
  r = d.run_all({str({1}, {"x--y--z"})});
  EXPECT_EQ(strings(r[0]), (std::vector<std::string>{"x", "y--z"}));
  OpNode ws1("StringSplit", 1, 2);
  ws1.attr_i("maxsplit", 1);
  r = ws1.run_all({str({1}, {" a b c "})});
  EXPECT_EQ(strings(r[0]), (std::vector<std::string>{"a", "b c "}));
}

TEST(MiscString, Normalizer) {
  OpNode m("StringNormalizer", 1);
  m.attr_s("case_change_action", "UPPER").attr_ss("stopwords", {"the"});
  Tensor r = m.run_all({str({1, 3}, {"The", "cat", "sat"})})[0];
  EXPECT_EQ(r.dims(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(strings(r), (std::vector<std::string>{"CAT", "SAT"}));
  OpNode all("StringNormalizer", 1);
  all.attr_i("is_case_sensitive", 1).attr_ss("stopwords", {"x"});
  r = all.run_all({str({2}, {"x", "x"})})[0];
  EXPECT_EQ(strings(r), (std::vector<std::string>{""}));
}

TEST(MiscString, RegexFullMatch) {
  OpNode m("RegexFullMatch", 1);
  m.attr_s("pattern", R"(\d+-[a-z]+)");
  Tensor r = m.run_all({str({3}, {"12-ab", "12-ab!", "x"})})[0];
  EXPECT_EQ(values(r), (std::vector<double>{1, 0, 0}));
  // long inputs: no stack overflow inside std::regex, and a clean error past the cap
  OpNode lng("RegexFullMatch", 1);
  lng.attr_s("pattern", "[a-z]+");
  EXPECT_EQ(values(lng.run_all({str({1}, {std::string(40000, 'a')})})[0]), std::vector<double>{1});
  EXPECT_THROW(lng.run_all({str({1}, {std::string(60000, 'a')})}), Error);
  OpNode bad("RegexFullMatch", 1);
  bad.attr_s("pattern", "(");
  EXPECT_THROW(bad.run_all({str({1}, {"a"})}), Error);
}

// ---------------------------------------------------------------------------------------------

TEST(MiscSignal, Windows) {
  OpNode hann("HannWindow", 1);
  expect_near(values(hann.run_all({i64({}, {4})})[0]), {0, 0.5, 1, 0.5});
  OpNode black("BlackmanWindow", 1);
  black.attr_i("periodic", 0).attr_i("output_datatype", 11);
  Tensor b = black.run_all({i64({}, {4})})[0];
  EXPECT_EQ(b.dtype(), DataType::kDouble);
  expect_near(values(b), {0, 0.63, 0.63, 0});
  Tensor size = i64({}, {7});
  auto t = hann.infer({TypeInfo::tensor(DataType::kInt64, Shape{})}, {&size});
  EXPECT_EQ(t[0]->to_string(), TypeInfo::tensor(DataType::kFloat, Shape{7}).to_string());
}

TEST(MiscSignal, DftForwardOnesidedInverse) {
  // x = [1..5] real, axis 1 of [1, 5, 1]
  Tensor x = f32({1, 5, 1}, {1, 2, 3, 4, 5});
  OpNode full("DFT", 1, 1, 19);
  Tensor y = full.run_all({x})[0];
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{1, 5, 2}));
  expect_near(values(y),
              {15, 0, -2.5, 3.4409548, -2.5, 0.81229924, -2.5, -0.81229924, -2.5, -3.4409548},
              1e-4);
  OpNode one("DFT", 1, 1, 19);
  one.attr_i("onesided", 1);
  Tensor h = one.run_all({x})[0];
  EXPECT_EQ(h.dims(), (std::vector<int64_t>{1, 3, 2}));
  OpNode inv("DFT", 1, 1, 19);
  inv.attr_i("inverse", 1);
  expect_near(values(inv.run_all({y})[0]), {1, 0, 2, 0, 3, 0, 4, 0, 5, 0}, 1e-4);
  // irfft of the rfft of [1,2,3,4] (opset 20, axis input, dft_length 4)
  OpNode rf("DFT", 3, 1, 20);
  rf.attr_i("onesided", 1);
  Tensor x4 = f32({1, 4, 1}, {1, 2, 3, 4});
  Tensor spec = rf.run_all({x4, Tensor(), i64({}, {1})})[0];
  OpNode irf("DFT", 3, 1, 20);
  irf.attr_i("onesided", 1).attr_i("inverse", 1);
  Tensor back = irf.run_all({spec, i64({}, {4}), i64({}, {-2})})[0];
  EXPECT_EQ(back.dims(), (std::vector<int64_t>{1, 4, 1}));
  expect_near(values(back), {1, 2, 3, 4}, 1e-4);
}

TEST(MiscSignal, FftMatchesDirectSum) {
  // length 16 (FFT path) against the direct sum; complex input
  std::vector<double> v;
  for (int k = 0; k < 32; ++k) v.push_back(std::sin(0.7 * k) + 0.1 * k);
  Tensor x = f32({1, 16, 2}, v);
  OpNode m("DFT", 1, 1, 19);
  const auto y = values(m.run_all({x})[0]);
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
  OpNode m("STFT", 4, 1, 17);
  m.n->inputs[2] = nullptr;
  Tensor y = m.run_all({sig, i64({}, {2}), Tensor(), i64({}, {4})})[0];
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{1, 3, 3, 2}));
  // frame 1 = [3,4,5,6]: bins 18, (-2+2i), -2
  const auto v = values(y);
  expect_near(std::vector<double>(v.begin() + 6, v.begin() + 12), {18, 0, -2, 2, -2, 0});
}

TEST(MiscSignal, MelWeightMatrixShape) {
  OpNode m("MelWeightMatrix", 5, 1, 17);
  Tensor w =
      m.run_all({i64({}, {8}), i64({}, {16}), i64({}, {8192}), f32({}, {0}), f32({}, {4096})})[0];
  EXPECT_EQ(w.dims(), (std::vector<int64_t>{9, 8}));
  EXPECT_EQ(w.get_f64(0), 1.0);
}

// ---------------------------------------------------------------------------------------------

TEST(MiscRandom, ShapesTypesAndSeeds) {
  OpNode n("RandomNormal", 0);
  n.attr_is("shape", {2, 3}).attr_i("dtype", 11).attr_f("seed", 3);
  Tensor a = n.run_all({})[0];
  EXPECT_EQ(a.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.dtype(), DataType::kDouble);
  EXPECT_EQ(values(a), values(n.run_all({})[0]));  // same seed, same draws
  EXPECT_FALSE(n.schema->deterministic);
  OpNode u("RandomUniformLike", 1);
  u.attr_f("low", 2).attr_f("high", 3);
  Tensor b = u.run_all({f32({4}, {0, 0, 0, 0})})[0];
  for (double v : values(b)) EXPECT_TRUE(v >= 2 && v <= 3);
  OpNode be("Bernoulli", 1);
  Tensor c = be.run_all({f32({3}, {0, 1, 0})})[0];
  EXPECT_EQ(values(c), (std::vector<double>{0, 1, 0}));
  OpNode mn("Multinomial", 1);
  mn.attr_i("sample_size", 5);
  Tensor d = mn.run_all({f32({2, 2}, {0, -1e9, -1e9, 0})})[0];
  EXPECT_EQ(d.dtype(), DataType::kInt32);
  EXPECT_EQ(values(d), (std::vector<double>{0, 0, 0, 0, 0, 1, 1, 1, 1, 1}));
}

// ---------------------------------------------------------------------------------------------

TEST(MiscText, TfIdfSkipGrams) {
  OpNode m("TfIdfVectorizer", 1);
  m.attr_i("min_gram_length", 1).attr_i("max_gram_length", 2).attr_i("max_skip_count", 5).attr_s("mode", "TF");
  m.attr_is("ngram_counts", {0, 4}).attr_is("ngram_indexes", {0, 1, 2, 3, 4, 5, 6});
  m.attr_is("pool_int64s", {2, 3, 5, 4, 5, 6, 7, 8, 6, 7});
  Tensor x = num(DataType::kInt32, {2, 6}, {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8});
  Tensor y = m.run_all({x})[0];
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 7}));
  EXPECT_EQ(values(y), (std::vector<double>{0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1}));
}

TEST(MiscText, ImageDecoderIsUnsupported) {
  OpNode m("ImageDecoder", 1);
  try {
    m.run_all({num(DataType::kUInt8, {3}, {1, 2, 3})});
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
  OpNode m("Momentum", 5, 2, 1, dom);
  m.attr_f("alpha", 0.5f).attr_f("beta", 0.25f).attr_s("mode", "standard").attr_f("norm_coefficient", 0);
  auto r =
      m.run_all({f32({}, {0.1}), i64({}, {1}), f32({2}, {1, 2}), f32({2}, {4, 8}), f32({2}, {2, 2})});
  // V = 0.5*2 + 0.25*G ; X = X - 0.1*V
  expect_near(values(r[1]), {2, 3});
  expect_near(values(r[0]), {0.8, 1.7});
  OpNode a("Adagrad", 5, 2, 1, dom);
  a.attr_f("epsilon", 0);
  r = a.run_all({f32({}, {1}), i64({}, {0}), f32({1}, {1}), f32({1}, {3}), f32({1}, {7})});
  expect_near(values(r[1]), {16});
  expect_near(values(r[0]), {1 - 3.0 / 4.0});
}

// ---------------------------------------------------------------------------------------------

TEST(MiscMl, ArrayFeatureExtractorAndBinarizer) {
  OpNode a("ArrayFeatureExtractor", 2, 1, 1, "ai.onnx.ml");
  Tensor r = a.run_all({f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({2}, {2, 0})})[0];
  EXPECT_EQ(values(r), (std::vector<double>{3, 1, 6, 4}));
  EXPECT_THROW(a.run_all({f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({1}, {3})}), Error);
  OpNode b("Binarizer", 1, 1, 1, "ai.onnx.ml");
  b.attr_f("threshold", 1);
  EXPECT_EQ(values(b.run_all({f32({3}, {0.5, 1, 1.5})})[0]), (std::vector<double>{0, 0, 1}));
}

TEST(MiscMl, LabelEncoder) {
  OpNode m("LabelEncoder", 1, 1, 4, "ai.onnx.ml");
  m.attr_ss("keys_strings", {"a", "b"}).attr_is("values_int64s", {7, 8});
  EXPECT_EQ(values(m.run_all({str({3}, {"b", "z", "a"})})[0]), (std::vector<double>{8, -1, 7}));
  OpNode f("LabelEncoder", 1, 1, 4, "ai.onnx.ml");
  f.attr_fs("keys_floats", {1.5f, NAN})
      .attr_ss("values_strings", {"x", "nan"})
      .attr_s("default_string", "?");
  EXPECT_EQ(strings(f.run_all({f32({3}, {NAN, 1.5, 2})})[0]),
            (std::vector<std::string>{"nan", "x", "?"}));
  OpNode t("LabelEncoder", 1, 1, 4, "ai.onnx.ml");
  t.attr_ss("keys_strings", {"a"}).attr_t("values_tensor", num(DataType::kInt16, {1}, {5}));
  t.attr_t("default_tensor", num(DataType::kInt16, {1}, {42}));
  Tensor r = t.run_all({str({2}, {"a", "q"})})[0];
  EXPECT_EQ(r.dtype(), DataType::kInt16);
  EXPECT_EQ(values(r), (std::vector<double>{5, 42}));
}

TEST(MiscMl, TreeEnsembleSingleTree) {
  OpNode m("TreeEnsemble", 1, 1, 5, "ai.onnx.ml");
  m.attr_i("aggregate_function", 1).attr_i("n_targets", 2).attr_i("post_transform", 0);
  m.attr_is("leaf_targetids", {0, 1, 0, 1})
      .attr_t("leaf_weights", num(DataType::kDouble, {4}, {5.23, 12.12, -12.23, 7.21}));
  m.attr_is("nodes_falseleafs", {0, 1, 1}).attr_is("nodes_falsenodeids", {2, 2, 3});
  m.attr_is("nodes_featureids", {0, 0, 0})
      .attr_t("nodes_modes", num(DataType::kUInt8, {3}, {0, 0, 0}));
  m.attr_t("nodes_splits", num(DataType::kDouble, {3}, {3.14, 1.2, 4.2}));
  m.attr_is("nodes_trueleafs", {0, 1, 1}).attr_is("nodes_truenodeids", {1, 0, 1}).attr_is("tree_roots", {0});
  Tensor x = num(DataType::kDouble, {3, 2}, {1.2, 3.4, -0.12, 1.66, 4.14, 1.77});
  Tensor y = m.run_all({x})[0];
  expect_near(values(y), {5.23, 0, 5.23, 0, 0, 12.12});
}

}  // namespace
}  // namespace kiln
