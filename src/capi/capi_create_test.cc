// The C API: versions, options, creating sessions (good, missing, hostile files) and describing
// their inputs and outputs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "capi/capi_test_util.h"
#include "kiln/kiln.h"

namespace kiln::capi_test {
namespace {

namespace fs = std::filesystem;

std::string last() { return kiln_last_error(); }

kiln_session* from_bytes(const std::string& bytes, const kiln_options* opts = nullptr) {
  kiln_session* s = nullptr;
  EXPECT_EQ(kiln_session_create_from_memory(bytes.data(), bytes.size(), opts, &s), KILN_OK) << last();
  return s;
}

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("kiln_capi_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

TEST(CapiLibrary, VersionsAndNames) {
  EXPECT_EQ(kiln_api_version(), KILN_API_VERSION);
  EXPECT_STREQ(kiln_version(), "0.1.0");
  EXPECT_STREQ(kiln_status_name(KILN_ERROR_BAD_MODEL), "KILN_ERROR_BAD_MODEL");
  EXPECT_STREQ(kiln_status_name(static_cast<kiln_status>(99)), "KILN_ERROR_UNKNOWN");
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_FLOAT32), 4u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_INT4), 1u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_STRING), 0u);
  EXPECT_EQ(kiln_dtype_size(static_cast<kiln_dtype>(-3)), 0u);
  EXPECT_STREQ(kiln_dtype_name(KILN_DTYPE_INT64), "int64");
  EXPECT_STREQ(kiln_dtype_name(static_cast<kiln_dtype>(1000)), "undefined");
}

TEST(CapiLibrary, NullHandlesAreInvalidArguments) {
  size_t n = 0;
  const kiln_tensor_info* info = nullptr;
  EXPECT_EQ(kiln_session_input_count(nullptr, &n), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last(), "kiln_session_input_count: session is NULL");
  EXPECT_EQ(kiln_session_output_info(nullptr, 0, &info), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_session_create(nullptr, nullptr, nullptr), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last(), "kiln_session_create: out is NULL");
  kiln_session* s = reinterpret_cast<kiln_session*>(1);
  EXPECT_EQ(kiln_session_create(nullptr, nullptr, &s), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(s, nullptr);  // out is cleared first
  EXPECT_EQ(kiln_session_create_from_memory(nullptr, 10, nullptr, &s), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_options_set_threads(nullptr, 1), KILN_ERROR_INVALID_ARGUMENT);
  const char* name = nullptr;
  EXPECT_EQ(kiln_tensor_info_name(nullptr, &name), KILN_ERROR_INVALID_ARGUMENT);
  int64_t rank = 0;
  EXPECT_EQ(kiln_session_output_dims(nullptr, nullptr, 0, 0, nullptr, 0, &rank), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_session_run(nullptr, nullptr, 0, nullptr, 0), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_session_run_alloc(nullptr, nullptr, 0, nullptr, 0), KILN_ERROR_INVALID_ARGUMENT);
  kiln_session_destroy(nullptr);
  kiln_options_destroy(nullptr);
  kiln_tensor_release(nullptr);
  kiln_tensor t{};
  kiln_tensor_release(&t);  // no owner: nothing to do
  // A success clears the message.
  kiln_options* o = nullptr;
  ASSERT_EQ(kiln_options_create(&o), KILN_OK);
  EXPECT_EQ(last(), "");
  kiln_options_destroy(o);
}

TEST(CapiOptions, ValuesOutOfRangeAreRefused) {
  kiln_options* o = nullptr;
  ASSERT_EQ(kiln_options_create(&o), KILN_OK);
  EXPECT_EQ(kiln_options_set_threads(o, -1), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last(), "kiln_options_set_threads: threads -1, expected 0..1024");
  EXPECT_EQ(kiln_options_set_optimize_level(o, 4), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_options_set_precision(o, static_cast<kiln_precision>(7)), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_options_set_allocation_cap(o, 0), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_options_set_dim(o, "", 2), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_options_set_dim(o, "batch", 0), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_options_set_dim(o, nullptr, 2), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_options_set_threads(o, 2), KILN_OK);
  EXPECT_EQ(kiln_options_set_optimize_level(o, 0), KILN_OK);
  EXPECT_EQ(kiln_options_set_precision(o, KILN_PRECISION_BF16), KILN_OK);
  EXPECT_EQ(kiln_options_set_allow_newer_opset(o, 1), KILN_OK);
  kiln_options_destroy(o);
}

TEST(CapiOptions, FixedDimsAreKnownDims) {
  kiln_options* o = nullptr;
  ASSERT_EQ(kiln_options_create(&o), KILN_OK);
  ASSERT_EQ(kiln_options_set_dim(o, "batch", 5), KILN_OK);
  ASSERT_EQ(kiln_options_set_dim(o, "batch", 2), KILN_OK);  // replaces
  kiln_session* s = from_bytes(add_model(), o);
  ASSERT_NE(s, nullptr);
  const kiln_tensor_info* info = nullptr;
  ASSERT_EQ(kiln_session_input_info(s, 1, &info), KILN_OK);
  int64_t dims[2] = {0, 0};
  ASSERT_EQ(kiln_tensor_info_dims(info, dims, 2), KILN_OK);
  EXPECT_EQ(dims[0], 2);
  EXPECT_EQ(dims[1], 4);
  kiln_session_destroy(s);
  // A name no input has is refused at creation, naming the symbols there are.
  ASSERT_EQ(kiln_options_set_dim(o, "btach", 2), KILN_OK);
  const std::string bytes = add_model();
  s = reinterpret_cast<kiln_session*>(1);
  EXPECT_EQ(kiln_session_create_from_memory(bytes.data(), bytes.size(), o, &s), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(s, nullptr);
  EXPECT_NE(last().find("kiln_session_create_from_memory: 'btach' (kiln_options_set_dim) is not a symbolic dim of an input (theirs: batch)"), std::string::npos) << last();
  kiln_options_destroy(o);
}

TEST(CapiSession, DescribesInputsAndOutputs) {
  kiln_session* s = from_bytes(add_model());
  ASSERT_NE(s, nullptr);
  size_t n_in = 0, n_out = 0;
  ASSERT_EQ(kiln_session_input_count(s, &n_in), KILN_OK);
  ASSERT_EQ(kiln_session_output_count(s, &n_out), KILN_OK);
  EXPECT_EQ(n_in, 2u);
  EXPECT_EQ(n_out, 1u);
  const kiln_tensor_info* info = nullptr;
  ASSERT_EQ(kiln_session_input_info(s, 0, &info), KILN_OK);
  const char* name = nullptr;
  kiln_dtype dt = KILN_DTYPE_UNDEFINED;
  int64_t rank = 0;
  ASSERT_EQ(kiln_tensor_info_name(info, &name), KILN_OK);
  EXPECT_STREQ(name, "in0");
  ASSERT_EQ(kiln_tensor_info_dtype(info, &dt), KILN_OK);
  EXPECT_EQ(dt, KILN_DTYPE_FLOAT32);
  ASSERT_EQ(kiln_tensor_info_rank(info, &rank), KILN_OK);
  EXPECT_EQ(rank, 2);
  int64_t dims[2] = {0, 0};
  EXPECT_EQ(kiln_tensor_info_dims(info, dims, 1), KILN_ERROR_BUFFER_TOO_SMALL);
  EXPECT_EQ(last(), "kiln_tensor_info_dims: 'in0' has rank 2, the dims array holds 1");
  ASSERT_EQ(kiln_tensor_info_dims(info, dims, 2), KILN_OK);
  EXPECT_EQ(dims[0], -1);
  EXPECT_EQ(dims[1], 4);
  ASSERT_EQ(kiln_tensor_info_dim_name(info, 0, &name), KILN_OK);
  EXPECT_STREQ(name, "batch");
  ASSERT_EQ(kiln_tensor_info_dim_name(info, 1, &name), KILN_OK);
  EXPECT_STREQ(name, "");
  EXPECT_EQ(kiln_tensor_info_dim_name(info, 2, &name), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_session_input_info(s, 2, &info), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last(), "kiln_session_input_info: input 2 of a model with 2 inputs");
  ASSERT_EQ(kiln_session_output_info(s, 0, &info), KILN_OK);
  ASSERT_EQ(kiln_tensor_info_name(info, &name), KILN_OK);
  EXPECT_STREQ(name, "out");
  ASSERT_EQ(kiln_tensor_info_dim_name(info, 0, &name), KILN_OK);
  EXPECT_STREQ(name, "batch");
  kiln_session_destroy(s);
}

TEST(CapiSession, FromAFile) {
  const fs::path dir = temp_dir("file");
  write(dir / "add.onnx", add_model());
  kiln_session* s = nullptr;
  ASSERT_EQ(kiln_session_create((dir / "add.onnx").c_str(), nullptr, &s), KILN_OK) << last();
  size_t n = 0;
  EXPECT_EQ(kiln_session_input_count(s, &n), KILN_OK);
  EXPECT_EQ(n, 2u);
  kiln_session_destroy(s);
  fs::remove_all(dir);
}

TEST(CapiSession, FilesThatCannotBeReadAreIoErrors) {
  const fs::path dir = temp_dir("io");
  kiln_session* s = nullptr;
  const std::string missing = (dir / "missing.onnx").string();
  EXPECT_EQ(kiln_session_create(missing.c_str(), nullptr, &s), KILN_ERROR_IO);
  EXPECT_EQ(last(), "kiln_session_create: '" + missing + "': no such file");
  EXPECT_EQ(kiln_session_create(dir.c_str(), nullptr, &s), KILN_ERROR_IO);
  EXPECT_NE(last().find("is a folder"), std::string::npos) << last();
  EXPECT_EQ(s, nullptr);
  fs::remove_all(dir);
}

// Hostile files, as tests/hostile's corpus has them: each a status and one line, never a crash.
TEST(CapiSession, HostileModelsAreBadModels) {
  const fs::path dir = temp_dir("hostile");
  kiln_session* s = nullptr;
  // Not a protobuf at all.
  const std::string garbage = "\xff\xff\xff\xff garbage";
  EXPECT_EQ(kiln_session_create_from_memory(garbage.data(), garbage.size(), nullptr, &s), KILN_ERROR_BAD_MODEL);
  EXPECT_EQ(last().find('\n'), std::string::npos);
  // A model cut short.
  const std::string whole = add_model();
  EXPECT_EQ(kiln_session_create_from_memory(whole.data(), whole.size() / 2, nullptr, &s), KILN_ERROR_BAD_MODEL);
  EXPECT_EQ(kiln_session_create_from_memory(nullptr, 0, nullptr, &s), KILN_ERROR_BAD_MODEL);
  // External data reaching out of the model's folder.
  onnx::ModelProto mp = one_node_model("Add", 1, 1, {{4}}, 1, {{4}});
  mp.mutable_graph()->mutable_node(0)->add_input("w");
  auto* w = mp.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(1);
  w->add_dims(4);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = w->add_external_data();
  loc->set_key("location");
  const std::string outside = "outside_" + std::to_string(getpid()) + ".bin";
  loc->set_value("../" + outside);
  write(dir / "escape.onnx", mp.SerializeAsString());
  write(dir.parent_path() / outside, std::string(16, '\0'));
  EXPECT_EQ(kiln_session_create((dir / "escape.onnx").c_str(), nullptr, &s), KILN_ERROR_BAD_MODEL);
  EXPECT_NE(last().find(outside), std::string::npos) << last();
  // An initializer whose dims promise more than any machine has.
  onnx::ModelProto big = one_node_model("Add", 1, 1, {{4}}, 1, {{4}});
  big.mutable_graph()->mutable_node(0)->add_input("w");
  auto* b = big.mutable_graph()->add_initializer();
  b->set_name("w");
  b->set_data_type(1);
  for (int k = 0; k < 4; ++k) b->add_dims(int64_t(1) << 40);
  const std::string big_bytes = big.SerializeAsString();
  EXPECT_EQ(kiln_session_create_from_memory(big_bytes.data(), big_bytes.size(), nullptr, &s), KILN_ERROR_BAD_MODEL);
  EXPECT_EQ(s, nullptr);
  fs::remove(dir.parent_path() / outside);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln::capi_test
