#include "onnx/import.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "onnx/export.h"
#include "onnx/proto.h"
#include "onnx/tensor_proto.h"
#include "support/error.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
const fs::path kBackend = fs::path(KILN_SOURCE_DIR) / "tests/onnx-backend";

TEST(Import, LoadsABackendCase) {
  Model m = load_model(kBackend / "node/test_add/model.onnx");
  ASSERT_EQ(m.graph->inputs.size(), 2u);
  EXPECT_EQ(m.graph->nodes().size(), 1u);
  EXPECT_EQ(m.graph->nodes()[0]->op_type, "Add");
  ASSERT_TRUE(m.graph->inputs[0]->type.shape);
  EXPECT_EQ(shape_to_string(*m.graph->inputs[0]->type.shape), "[3,4,5]");
}

// An opset-11 model: Squeeze with an axes attribute, plus an initializer for external data tests.
std::string squeeze11_model(int64_t weights) {
  onnx::ModelProto mp;
  mp.set_ir_version(7);
  auto* op = mp.add_opset_import();
  op->set_version(11);
  auto* g = mp.mutable_graph();
  g->set_name("g");
  auto* x = g->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(1);
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(weights);
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(1);
  w->add_dims(1);
  w->add_dims(weights);
  for (int64_t i = 0; i < weights; ++i) w->add_float_data(static_cast<float>(i));
  auto* add = g->add_node();
  add->set_op_type("Add");
  add->add_input("x");
  add->add_input("w");
  add->add_output("s");
  auto* sq = g->add_node();
  sq->set_op_type("Squeeze");
  sq->add_input("s");
  sq->add_output("y");
  auto* axes = sq->add_attribute();
  axes->set_name("axes");
  axes->set_type(onnx::AttributeProto::INTS);
  axes->add_ints(0);
  auto* y = g->add_output();  // the main graph's outputs declare a type and a shape (as ONNX asks)
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  y->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(weights);
  return mp.SerializeAsString();
}

TEST(Import, NormalizesOldSqueezeAndWritesItBack) {
  Model m = load_model_from_bytes(squeeze11_model(8), ".");
  const Node& sq = *m.graph->nodes()[1];
  ASSERT_EQ(sq.op_type, "Squeeze");
  EXPECT_EQ(sq.attr("axes"), nullptr);  // moved to input 1
  ASSERT_TRUE(sq.has_input(1));
  EXPECT_EQ(sq.inputs[1]->data.to_int64s(), std::vector<int64_t>{0});
  onnx::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(serialize_model(m)));
  const auto& np = back.graph().node(1);
  EXPECT_EQ(np.input_size(), 1);  // opset 11 form again
  ASSERT_EQ(np.attribute_size(), 1);
  EXPECT_EQ(np.attribute(0).name(), "axes");
  EXPECT_EQ(back.graph().initializer_size(), 1);  // the normalized constant is not written
}

TEST(Import, RoundTripKeepsGraph) {
  for (const char* c : {"node/test_if", "node/test_loop11", "node/test_scan9_sum", "light/light_resnet50"}) {
    const fs::path path = kBackend / c / "model.onnx";
    if (!fs::exists(path)) continue;
    Model a = load_model(path);
    Model b = load_model_from_bytes(serialize_model(a), path.parent_path());
    ASSERT_EQ(a.graph->nodes().size(), b.graph->nodes().size()) << c;
    for (size_t i = 0; i < a.graph->nodes().size(); ++i) {
      EXPECT_EQ(a.graph->nodes()[i]->op_type, b.graph->nodes()[i]->op_type) << c;
      EXPECT_EQ(a.graph->nodes()[i]->attrs.size(), b.graph->nodes()[i]->attrs.size()) << c;
    }
    EXPECT_EQ(a.graph->initializers.size(), b.graph->initializers.size()) << c;
    EXPECT_EQ(a.opsets, b.opsets) << c;
  }
}

TEST(Import, ExternalDataRoundTrip) {
  const fs::path dir = fs::temp_directory_path() / "kiln_import_test_ext";
  fs::remove_all(dir);
  fs::create_directories(dir);
  Model m = load_model_from_bytes(squeeze11_model(4096), dir);
  SaveOptions opts;
  opts.external_data = true;
  save_model(m, dir / "m.onnx", opts);
  ASSERT_TRUE(fs::exists(dir / "m.onnx.data"));
  EXPECT_GE(fs::file_size(dir / "m.onnx.data"), 4096u * 4);
  EXPECT_LT(fs::file_size(dir / "m.onnx"), 1024u);
  Model back = load_model(dir / "m.onnx");
  ASSERT_EQ(back.graph->initializers.size(), 1u);
  const Tensor& x = m.graph->initializers[0]->data;
  const Tensor& y = back.graph->initializers[0]->data;
  ASSERT_EQ(x.nbytes(), y.nbytes());
  EXPECT_EQ(0, std::memcmp(x.raw(), y.raw(), x.nbytes()));
  fs::remove_all(dir);
}

// Zero pages of external data are holes of a sparse file (export.cc); a zero tail still counts in
// the file's size, and the data reads back the same.
TEST(Import, ExternalDataZeroPagesRoundTrip) {
  const fs::path dir = fs::temp_directory_path() / "kiln_import_test_ext_zeros";
  fs::remove_all(dir);
  fs::create_directories(dir);
  constexpr int64_t kWeights = 4096 * 4;  // 16 pages of 4 KiB
  Model m = load_model_from_bytes(squeeze11_model(kWeights), dir);
  Tensor w(DataType::kFloat, {1, kWeights});
  std::memset(w.raw(), 0, w.nbytes());
  for (int64_t i = 5000; i < 6000; ++i) w.data<float>()[i] = static_cast<float>(i);
  m.graph->initializers[0]->data = w;
  SaveOptions opts;
  opts.external_data = true;
  const SavedModel saved = save_model(m, dir / "m.onnx", opts);
  EXPECT_EQ(saved.data_path, dir / "m.onnx.data");
  EXPECT_FALSE(saved.external_data_forced);
  EXPECT_EQ(fs::file_size(dir / "m.onnx.data"), static_cast<uintmax_t>(w.nbytes()));
  Model back = load_model(dir / "m.onnx");
  const Tensor& y = back.graph->initializers[0]->data;
  ASSERT_EQ(w.nbytes(), y.nbytes());
  EXPECT_EQ(0, std::memcmp(w.raw(), y.raw(), w.nbytes()));
  fs::remove_all(dir);
}

TEST(Import, RejectsGarbage) {
  try {
    load_model_from_bytes("\x0a\xff\xff\xff\xff\x0f garbage", ".");
    FAIL() << "garbage loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadModel);
  }
}

TEST(TensorProto, SubByteRoundTrip) {
  Tensor t(DataType::kInt4, {5});
  const int8_t v[5] = {-8, -1, 0, 3, 7};
  for (int i = 0; i < 5; ++i) t.data<int8_t>()[i] = v[i];
  onnx::TensorProto p;
  tensor_to_proto(t, p);
  EXPECT_EQ(p.raw_data().size(), 3u);
  Tensor back = tensor_from_proto(p, nullptr, "t");
  for (int i = 0; i < 5; ++i) EXPECT_EQ(back.data<int8_t>()[i], v[i]);
}

}  // namespace
}  // namespace kiln
