#include "serve/batcher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "onnx/text_format.h"
#include "ops/check.h"
#include "ops/infer.h"

namespace kiln::serve {
namespace {

// y = Relu(x) on float[batch,4], compiled for the fast engine.
std::unique_ptr<engine::CompiledModel> relu_rows() {
  Model m = parse_model_text(R"(<ir_version: 8, opset_import: ["" : 17]>
agraph (float[batch,4] x) => (float[batch,4] y) {
  y = Relu(x)
})");
  check_model(m);
  infer_shapes(m);
  return std::make_unique<engine::CompiledModel>(std::move(m));
}

Tensor row(float v) {
  Tensor x(DataType::kFloat, {1, 4});
  for (int i = 0; i < 4; ++i) x.data<float>()[i] = v * static_cast<float>(i - 1);
  return x;
}

TEST(ServeBatcher, CutsAtThePreferredSizesWithTheirPlansMadeAtLoad) {
  ModelBatcher b(relu_rows(), {.max_batch = 8, .delay_us = 200'000, .preferred = {8, 2, 4, 1, 64}}, nullptr, {});
  EXPECT_EQ(b.plans(), 4);  // batches of 1, 2, 4 and 8 (64 is past --max-batch), made before the first request
  // Seven one-row requests queued at once: 4, then 2, then 1 (no plan for 7, 3 ...).
  std::vector<std::future<BatchResult>> done;
  for (int i = 0; i < 7; ++i) done.push_back(b.submit({row(static_cast<float>(i))}));
  std::vector<int> sizes;
  for (int i = 0; i < 7; ++i) {
    BatchResult r = done[i].get();
    ASSERT_FALSE(r.error);
    sizes.push_back(r.batch_size);
    const Tensor& y = r.outputs.at(0).tensor;
    ASSERT_EQ(y.dims(), (std::vector<int64_t>{1, 4}));
    EXPECT_EQ(y.data<float>()[2], static_cast<float>(i)) << "request " << i << " got another's row";
  }
  EXPECT_EQ(sizes, (std::vector<int>{4, 4, 4, 4, 2, 2, 1}));
  EXPECT_EQ(b.plans(), 4);
  EXPECT_EQ(b.batched_runs(), 2);
}

// The batcher looks at the queue while requests still arrive: three queued (a preferred size, 2,
// inside them) must not run as 2 while a batch of 4 or 8 can still fill up (a loaded machine's
// make test ran {2, 2, 4, 4, 4, 4, 1} here when the wait stopped at the preferred cut).
TEST(ServeBatcher, WaitsForMoreWhileAPreferredCutIsNotTheFullBatch) {
  ModelBatcher b(relu_rows(), {.max_batch = 8, .delay_us = 300'000, .preferred = {2, 4, 8}}, nullptr, {});
  std::vector<std::future<BatchResult>> done;
  for (int i = 0; i < 3; ++i) done.push_back(b.submit({row(static_cast<float>(i))}));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // the batcher sees the three
  for (int i = 3; i < 7; ++i) done.push_back(b.submit({row(static_cast<float>(i))}));
  std::vector<int> sizes;
  for (auto& f : done) {
    BatchResult r = f.get();
    ASSERT_FALSE(r.error);
    sizes.push_back(r.batch_size);
  }
  EXPECT_EQ(sizes, (std::vector<int>{4, 4, 4, 4, 2, 2, 1}));
}

TEST(ServeBatcher, JoinsAndSplitsStringTensors) {
  Model m = parse_model_text(R"(<ir_version: 8, opset_import: ["" : 17]>
agraph (string[batch] x) => (string[batch] y) {
  y = Identity(x)
})");
  check_model(m);
  infer_shapes(m);
  ModelBatcher b(std::make_unique<engine::CompiledModel>(std::move(m)), {.max_batch = 4, .delay_us = 200'000},
                 nullptr, {});
  const std::vector<std::vector<std::string>> sent = {{"kiln"}, {"", "two rows"}, {"a third, longer than SSO's buffer"}};
  std::vector<std::future<BatchResult>> done;
  for (const auto& rows : sent) {
    Tensor x(DataType::kString, {static_cast<int64_t>(rows.size())});
    for (size_t i = 0; i < rows.size(); ++i) x.strings()[i] = rows[i];
    done.push_back(b.submit({x}));
  }
  for (size_t r = 0; r < sent.size(); ++r) {
    BatchResult got = done[r].get();
    ASSERT_FALSE(got.error);
    EXPECT_EQ(got.batch_size, 4);  // all three, 4 rows
    const Tensor& y = got.outputs.at(0).tensor;
    EXPECT_EQ(std::vector<std::string>(y.strings(), y.strings() + y.numel()), sent[r]);
  }
}

TEST(ServeBatcher, AModelThatDoesNotBatchMakesNoPlansAtLoad) {
  ModelBatcher b(relu_rows(), {.max_batch = 1}, nullptr, {});
  EXPECT_FALSE(b.batches());
  EXPECT_EQ(b.plans(), 0);
  BatchResult r = b.submit({row(1.f)}).get();
  ASSERT_FALSE(r.error);
  EXPECT_EQ(r.batch_size, 1);
  EXPECT_EQ(b.plans(), 1);
}

}  // namespace
}  // namespace kiln::serve
