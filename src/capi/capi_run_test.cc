// The C API's runs: into caller buffers and into kiln's, output dims before a run, every refusal
// of inputs and outputs that do not fit, threads.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "capi/capi_test_util.h"
#include "kiln/kiln.h"

namespace kiln::capi_test {
namespace {

std::string last() { return kiln_last_error(); }

struct AddSession {
  kiln_session* s = nullptr;
  explicit AddSession(const std::string& bytes = add_model(), const kiln_options* o = nullptr) {
    EXPECT_EQ(kiln_session_create_from_memory(bytes.data(), bytes.size(), o, &s), KILN_OK) << last();
  }
  ~AddSession() { kiln_session_destroy(s); }
};

// Two float[3,4] inputs: a[i] = i, b[i] = 10 * i.
struct AddInputs {
  int64_t dims[2] = {3, 4};
  float a[12], b[12];
  kiln_tensor t[2];
  AddInputs() {
    for (int i = 0; i < 12; ++i) a[i] = static_cast<float>(i), b[i] = 10.0f * i;
    t[0] = kiln_tensor{KILN_DTYPE_FLOAT32, 2, dims, a, sizeof a};
    t[1] = kiln_tensor{KILN_DTYPE_FLOAT32, 2, dims, b, sizeof b};
  }
};

TEST(CapiRun, IntoCallerBuffers) {
  AddSession add;
  AddInputs in;
  int64_t dims[4] = {0, 0, 0, 0};
  int64_t rank = 0;
  ASSERT_EQ(kiln_session_output_dims(add.s, in.t, 2, 0, dims, 4, &rank), KILN_OK) << last();
  ASSERT_EQ(rank, 2);
  EXPECT_EQ(dims[0], 3);
  EXPECT_EQ(dims[1], 4);
  float y[12] = {};
  kiln_tensor out{KILN_DTYPE_FLOAT32, 2, dims, y, sizeof y};
  ASSERT_EQ(kiln_session_run(add.s, in.t, 2, &out, 1), KILN_OK) << last();
  for (int i = 0; i < 12; ++i) EXPECT_EQ(y[i], 11.0f * i);
  // Without dims (unchecked), into a larger buffer, the same values; the inputs are not written.
  float big[20] = {};
  kiln_tensor loose{KILN_DTYPE_FLOAT32, 0, nullptr, big, sizeof big};
  ASSERT_EQ(kiln_session_run(add.s, in.t, 2, &loose, 1), KILN_OK) << last();
  for (int i = 0; i < 12; ++i) EXPECT_EQ(big[i], 11.0f * i);
  EXPECT_EQ(big[12], 0.0f);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(in.a[i], static_cast<float>(i));
  // An output with no data is not written.
  kiln_tensor skipped{KILN_DTYPE_FLOAT32, 0, nullptr, nullptr, 0};
  EXPECT_EQ(kiln_session_run(add.s, in.t, 2, &skipped, 1), KILN_OK) << last();
  // Into an input's own buffer.
  kiln_tensor in_place{KILN_DTYPE_FLOAT32, 2, in.dims, in.a, sizeof in.a};
  ASSERT_EQ(kiln_session_run(add.s, in.t, 2, &in_place, 1), KILN_OK) << last();
  for (int i = 0; i < 12; ++i) EXPECT_EQ(in.a[i], 11.0f * i);
}

TEST(CapiRun, IntoKilnsBuffers) {
  AddSession add;
  AddInputs in;
  kiln_tensor out{};
  ASSERT_EQ(kiln_session_run_alloc(add.s, in.t, 2, &out, 1), KILN_OK) << last();
  EXPECT_EQ(out.dtype, KILN_DTYPE_FLOAT32);
  ASSERT_EQ(out.rank, 2u);
  EXPECT_EQ(out.dims[0], 3);
  EXPECT_EQ(out.dims[1], 4);
  EXPECT_EQ(out.byte_size, 48u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(out.data) % 64, 0u);
  ASSERT_NE(out.owner, nullptr);
  kiln_session_destroy(add.s);  // outputs outlive their session
  add.s = nullptr;
  const float* y = static_cast<const float*>(out.data);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(y[i], 11.0f * i);
  kiln_tensor_release(&out);
  EXPECT_EQ(out.data, nullptr);
  EXPECT_EQ(out.owner, nullptr);
  kiln_tensor_release(&out);  // twice: nothing left to free
}

TEST(CapiRun, UnalignedInputsAreCopied) {
  AddSession add;
  AddInputs in;
  alignas(8) char raw[sizeof(float) * 12 + 1];
  std::memcpy(raw + 1, in.a, sizeof in.a);
  in.t[0].data = raw + 1;
  float y[12] = {};
  kiln_tensor out{KILN_DTYPE_FLOAT32, 2, in.dims, y, sizeof y};
  ASSERT_EQ(kiln_session_run(add.s, in.t, 2, &out, 1), KILN_OK) << last();
  for (int i = 0; i < 12; ++i) EXPECT_EQ(y[i], 11.0f * i);
}

TEST(CapiRun, InputsThatDoNotFitAreRefused) {
  AddSession add;
  float y[12];
  kiln_tensor out{KILN_DTYPE_FLOAT32, 0, nullptr, y, sizeof y};
  auto run_with = [&](auto&& edit) {
    AddInputs in;
    edit(in);
    return kiln_session_run(add.s, in.t, 2, &out, 1);
  };
  EXPECT_EQ(run_with([](AddInputs& in) { in.t[1].dtype = KILN_DTYPE_INT64; }), KILN_ERROR_BAD_INPUT);
  EXPECT_EQ(last(), "kiln_session_run: input 1 'in1': element type int64, the model takes float");
  EXPECT_EQ(run_with([](AddInputs& in) { in.t[0].dtype = static_cast<kiln_dtype>(77); }), KILN_ERROR_BAD_INPUT);
  EXPECT_EQ(run_with([](AddInputs& in) { in.t[0].rank = 3; }), KILN_ERROR_BAD_INPUT);
  EXPECT_EQ(last(), "kiln_session_run: input 0 'in0': rank 3, the model takes rank 2 [batch,4]");
  EXPECT_EQ(run_with([](AddInputs& in) { in.dims[1] = 5; }), KILN_ERROR_BAD_INPUT);
  EXPECT_EQ(last(), "kiln_session_run: input 0 'in0': dims [3,5], the model takes [batch,4] (dim 1)");
  EXPECT_EQ(run_with([](AddInputs& in) { in.dims[0] = -2; }), KILN_ERROR_BAD_INPUT);
  EXPECT_EQ(run_with([](AddInputs& in) { in.t[0].byte_size = 40; }), KILN_ERROR_BAD_INPUT);
  EXPECT_EQ(last(), "kiln_session_run: input 0 'in0': 40 bytes given, float[3,4] takes 48");
  EXPECT_EQ(run_with([](AddInputs& in) { in.t[1].data = nullptr; }), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(run_with([](AddInputs& in) { in.t[1].dims = nullptr; }), KILN_ERROR_INVALID_ARGUMENT);
  // One symbol, two sizes.
  int64_t other[2] = {2, 4};
  EXPECT_EQ(run_with([&](AddInputs& in) {
              in.t[1].dims = other;
              in.t[1].byte_size = 32;
            }),
            KILN_ERROR_BAD_INPUT);
  EXPECT_EQ(last(), "kiln_session_run: input 1 'in1': dim 0 (batch) is 2, input 0 gave batch = 3");
  AddInputs in;
  EXPECT_EQ(kiln_session_run(add.s, in.t, 1, &out, 1), KILN_ERROR_BAD_INPUT);
  EXPECT_EQ(last(), "kiln_session_run: 1 inputs given, the model takes 2");
  EXPECT_EQ(kiln_session_run(add.s, nullptr, 2, &out, 1), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_session_run(add.s, in.t, 2, &out, 2), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last(), "kiln_session_run: output_count 2, the model has 1 outputs");
  // After all that, the session still runs.
  EXPECT_EQ(kiln_session_run(add.s, in.t, 2, &out, 1), KILN_OK) << last();
}

TEST(CapiRun, OutputBuffersThatDoNotFitAreRefused) {
  AddSession add;
  AddInputs in;
  float y[12];
  int64_t wrong[2] = {4, 3};
  kiln_tensor small{KILN_DTYPE_FLOAT32, 0, nullptr, y, 47};
  EXPECT_EQ(kiln_session_run(add.s, in.t, 2, &small, 1), KILN_ERROR_BUFFER_TOO_SMALL);
  EXPECT_EQ(last(), "kiln_session_run: output 0 'out': float[3,4] takes 48 bytes, the buffer has 47");
  kiln_tensor int_out{KILN_DTYPE_INT32, 0, nullptr, y, sizeof y};
  EXPECT_EQ(kiln_session_run(add.s, in.t, 2, &int_out, 1), KILN_ERROR_BAD_INPUT);
  EXPECT_EQ(last(), "kiln_session_run: output 0 'out': the buffer's element type is int32, the output is float");
  kiln_tensor wrong_dims{KILN_DTYPE_FLOAT32, 2, wrong, y, sizeof y};
  EXPECT_EQ(kiln_session_run(add.s, in.t, 2, &wrong_dims, 1), KILN_ERROR_BAD_INPUT);
  EXPECT_EQ(last(), "kiln_session_run: output 0 'out': the buffer's dims are [4,3], the output's [3,4]");
  int64_t dims[1];
  int64_t rank = 0;
  EXPECT_EQ(kiln_session_output_dims(add.s, in.t, 2, 0, dims, 1, &rank), KILN_ERROR_BUFFER_TOO_SMALL);
  EXPECT_EQ(rank, 2);
  EXPECT_EQ(kiln_session_output_dims(add.s, in.t, 2, 1, dims, 1, &rank), KILN_ERROR_INVALID_ARGUMENT);
}

// NonZero: the output's second dim is only known from the data.
TEST(CapiRun, DimsTheDataDecidesAreKnownAfterTheRun) {
  const std::string bytes = one_node_model("NonZero", 1, 1, {{4}}, 7, {{1}, {0, "nnz"}}).SerializeAsString();
  AddSession nz(bytes);
  int64_t dims[1] = {4};
  float x[4] = {0.0f, 2.0f, 0.0f, 5.0f};
  kiln_tensor in{KILN_DTYPE_FLOAT32, 1, dims, x, sizeof x};
  int64_t out_dims[2] = {0, 0};
  int64_t rank = 0;
  ASSERT_EQ(kiln_session_output_dims(nz.s, &in, 1, 0, out_dims, 2, &rank), KILN_OK) << last();
  ASSERT_EQ(rank, 2);
  EXPECT_EQ(out_dims[1], -1);
  int64_t y[1] = {-7};
  kiln_tensor small{KILN_DTYPE_INT64, 0, nullptr, y, sizeof y};
  EXPECT_EQ(kiln_session_run(nz.s, &in, 1, &small, 1), KILN_ERROR_BUFFER_TOO_SMALL);
  EXPECT_EQ(last(), "kiln_session_run: output 0 'out': int64[1,2] takes 16 bytes, the buffer has 8");
  EXPECT_EQ(y[0], -7);  // not written
  kiln_tensor out{};
  ASSERT_EQ(kiln_session_run_alloc(nz.s, &in, 1, &out, 1), KILN_OK) << last();
  ASSERT_EQ(out.rank, 2u);
  EXPECT_EQ(out.dims[0], 1);
  EXPECT_EQ(out.dims[1], 2);
  EXPECT_EQ(static_cast<const int64_t*>(out.data)[0], 1);
  EXPECT_EQ(static_cast<const int64_t*>(out.data)[1], 3);
  kiln_tensor_release(&out);
}

TEST(CapiRun, BoolAndSubByteValuesAreChecked) {
  const std::string bytes = one_node_model("Not", 1, 9, {{3}}, 9, {{3}}).SerializeAsString();
  AddSession neg(bytes);
  int64_t dims[1] = {3};
  uint8_t x[3] = {1, 0, 2};
  uint8_t y[3] = {9, 9, 9};
  kiln_tensor in{KILN_DTYPE_BOOL, 1, dims, x, 3};
  kiln_tensor out{KILN_DTYPE_BOOL, 1, dims, y, 3};
  EXPECT_EQ(kiln_session_run(neg.s, &in, 1, &out, 1), KILN_ERROR_BAD_INPUT);
  EXPECT_EQ(last(), "kiln_session_run: input 0 'in0': element 2 is 2, bool holds 0..1 (one per byte)");
  x[2] = 1;
  ASSERT_EQ(kiln_session_run(neg.s, &in, 1, &out, 1), KILN_OK) << last();
  EXPECT_EQ(y[0], 0);
  EXPECT_EQ(y[1], 1);
  EXPECT_EQ(y[2], 0);
}

TEST(CapiRun, TheAllocationCapIsARuntimeError) {
  kiln_options* o = nullptr;
  ASSERT_EQ(kiln_options_create(&o), KILN_OK);
  ASSERT_EQ(kiln_options_set_allocation_cap(o, 1024), KILN_OK);
  AddSession add(add_model(), o);
  kiln_options_destroy(o);
  std::vector<float> a(4 * 1000, 1.0f);
  int64_t dims[2] = {1000, 4};
  kiln_tensor in[2] = {{KILN_DTYPE_FLOAT32, 2, dims, a.data(), a.size() * 4},
                       {KILN_DTYPE_FLOAT32, 2, dims, a.data(), a.size() * 4}};
  kiln_tensor out{};
  EXPECT_EQ(kiln_session_run_alloc(add.s, in, 2, &out, 1), KILN_ERROR_RUNTIME);
  EXPECT_EQ(out.owner, nullptr);  // nothing filled on failure
  EXPECT_NE(last().find("cap"), std::string::npos) << last();
}

TEST(CapiThreads, LastErrorIsPerThread) {
  AddSession add;
  size_t n = 0;
  ASSERT_EQ(kiln_session_input_count(nullptr, &n), KILN_ERROR_INVALID_ARGUMENT);
  std::string other;
  std::thread t([&] {
    kiln_session_input_count(add.s, &n);
    other = kiln_last_error();
  });
  t.join();
  EXPECT_EQ(other, "");
  EXPECT_EQ(last(), "kiln_session_input_count: session is NULL");
}

TEST(CapiThreads, RunsOfOneSessionFromManyThreads) {
  AddSession add;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&, k] {
      for (int r = 0; r < 50; ++r) {
        const int64_t batch = 1 + (k + r) % 3;  // plans for three shapes, made and reused concurrently
        int64_t dims[2] = {batch, 4};
        std::vector<float> a(batch * 4, static_cast<float>(k)), b(batch * 4, static_cast<float>(r)), y(batch * 4);
        kiln_tensor in[2] = {{KILN_DTYPE_FLOAT32, 2, dims, a.data(), a.size() * 4},
                             {KILN_DTYPE_FLOAT32, 2, dims, b.data(), b.size() * 4}};
        kiln_tensor out{KILN_DTYPE_FLOAT32, 2, dims, y.data(), y.size() * 4};
        if (kiln_session_run(add.s, in, 2, &out, 1) != KILN_OK) ++wrong;
        for (float v : y)
          if (v != static_cast<float>(k + r)) ++wrong;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace kiln::capi_test
