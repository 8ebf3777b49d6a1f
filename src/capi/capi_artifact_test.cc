// The C API on compiled artifacts: a session from a .kiln file or from memory runs as the .onnx
// does; --strict-shapes is kept; kiln_options_set_dim is refused (the shapes were declared at
// compile); a damaged artifact is KILN_ERROR_BAD_MODEL and one this machine cannot run
// KILN_ERROR_UNSUPPORTED, each with one line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "artifact/compile.h"
#include "capi/capi_test_util.h"
#include "kiln/kiln.h"

namespace kiln::capi_test {
namespace {

namespace fs = std::filesystem;

std::string last() { return kiln_last_error(); }

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("kiln_capi_artifact_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

// add_model() (out = in0 + in1, float[batch,4]) compiled for `target` with batch=2 declared.
std::string compiled_add(const fs::path& dir, const std::string& target = "native", bool strict = true) {
  write(dir / "add.onnx", add_model());
  return artifact::compile({.model = (dir / "add.onnx").string(), .target = target, .shapes = {"batch=2"},
                            .strict_shapes = strict, .measure_runs = 0})
      .bytes;
}

kiln_status run_add(kiln_session* s, int64_t batch, float* y) {
  std::vector<float> a(batch * 4), b(batch * 4);
  for (int i = 0; i < batch * 4; ++i) a[i] = static_cast<float>(i), b[i] = 10.0f * i;
  const int64_t dims[2] = {batch, 4};
  kiln_tensor in[2] = {{KILN_DTYPE_FLOAT32, 2, dims, a.data(), a.size() * 4, nullptr},
                       {KILN_DTYPE_FLOAT32, 2, dims, b.data(), b.size() * 4, nullptr}};
  kiln_tensor out{KILN_DTYPE_FLOAT32, 2, dims, y, static_cast<size_t>(batch) * 16, nullptr};
  return kiln_session_run(s, in, 2, &out, 1);
}

TEST(CapiArtifact, AFileAndABufferRunAsTheOnnxDoes) {
  const fs::path dir = temp_dir("run");
  const std::string bytes = compiled_add(dir);
  write(dir / "add.kiln", bytes);
  for (int from_memory = 0; from_memory < 2; ++from_memory) {
    kiln_session* s = nullptr;
    if (from_memory) {
      std::string copy = bytes;  // freed before the session runs: the session keeps its own
      ASSERT_EQ(kiln_session_create_from_memory(copy.data(), copy.size(), nullptr, &s), KILN_OK) << last();
    } else {
      ASSERT_EQ(kiln_session_create((dir / "add.kiln").c_str(), nullptr, &s), KILN_OK) << last();
    }
    size_t n = 0;
    ASSERT_EQ(kiln_session_input_count(s, &n), KILN_OK);
    EXPECT_EQ(n, 2u);
    const kiln_tensor_info* info = nullptr;
    ASSERT_EQ(kiln_session_input_info(s, 0, &info), KILN_OK);
    const char* dim_name = nullptr;
    ASSERT_EQ(kiln_tensor_info_dim_name(info, 0, &dim_name), KILN_OK);
    EXPECT_STREQ(dim_name, "batch");
    float y[8] = {};
    ASSERT_EQ(run_add(s, 2, y), KILN_OK) << last();
    for (int i = 0; i < 8; ++i) EXPECT_EQ(y[i], 11.0f * i);
    // batch 3 is outside the declared batch=2 (--strict-shapes).
    float z[12] = {};
    EXPECT_EQ(run_add(s, 3, z), KILN_ERROR_BAD_INPUT);
    EXPECT_NE(last().find("batch=3 is outside"), std::string::npos) << last();
    kiln_session_destroy(s);
  }
  fs::remove_all(dir);
}

TEST(CapiArtifact, ShapesAreTheCompilesAndDamageOrAnotherArchIsRefused) {
  const fs::path dir = temp_dir("refuse");
  const std::string bytes = compiled_add(dir, "native", false);
  kiln_session* s = nullptr;
  kiln_options* o = nullptr;
  ASSERT_EQ(kiln_options_create(&o), KILN_OK);
  ASSERT_EQ(kiln_options_set_dim(o, "batch", 2), KILN_OK);
  EXPECT_EQ(kiln_session_create_from_memory(bytes.data(), bytes.size(), o, &s), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("--shapes"), std::string::npos) << last();
  kiln_options_destroy(o);

  std::string damaged = bytes;
  damaged[damaged.size() / 2] ^= 0x5a;
  EXPECT_EQ(kiln_session_create_from_memory(damaged.data(), damaged.size(), nullptr, &s), KILN_ERROR_BAD_MODEL);
  EXPECT_EQ(last().find('\n'), std::string::npos) << last();
  const std::string cut = bytes.substr(0, bytes.size() / 3);
  EXPECT_EQ(kiln_session_create_from_memory(cut.data(), cut.size(), nullptr, &s), KILN_ERROR_BAD_MODEL);

  const std::string other = compiled_add(dir, "aarch64-linux");
  write(dir / "arm.kiln", other);
  EXPECT_EQ(kiln_session_create((dir / "arm.kiln").c_str(), nullptr, &s), KILN_ERROR_UNSUPPORTED);
  EXPECT_NE(last().find("recompile"), std::string::npos) << last();
  EXPECT_EQ(s, nullptr);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln::capi_test
