#include "serve/model_repository.h"

#include <gtest/gtest.h>

#include "onnx/text_format.h"
#include "ops/check.h"
#include "ops/infer.h"

namespace kiln::serve {
namespace {

// y = Relu(x) on [1, 4]; `loads` counts the sessions made.
std::function<Model()> relu(int* loads) {
  return [loads] {
    ++*loads;
    Model m = parse_model_text(R"(<ir_version: 8, opset_import: ["" : 17]>
agraph (float[1,4] x) => (float[1,4] y) {
  y = Relu(x)
})");
    check_model(m);
    infer_shapes(m);
    return m;
  };
}

std::vector<float> run(ModelBatcher& b, float v) {
  Tensor x(DataType::kFloat, {1, 4});
  for (int i = 0; i < 4; ++i) x.data<float>()[i] = v * static_cast<float>(i - 1);
  BatchResult r = b.submit({x}).get();
  if (r.error) std::rethrow_exception(r.error);
  const Tensor& y = r.outputs.at(0).tensor;
  return {y.data<float>(), y.data<float>() + y.numel()};
}

TEST(ServeModelRepository, UnloadsTheLeastRecentlyUsedPastTheLimit) {
  Metrics metrics;
  ModelRepository repo(BatchOptions{}, &metrics, 2);
  int loads = 0;
  auto a1 = repo.get("a", 1, relu(&loads));
  repo.get("a", 2, relu(&loads));
  ASSERT_NE(a1, nullptr);
  EXPECT_EQ(loads, 2);
  EXPECT_EQ(repo.get("a", 1, relu(&loads)), a1);  // a hit: a:1 is now more recent than a:2
  EXPECT_EQ(loads, 2);
  repo.get("b", 1, relu(&loads));  // a third: a:2, the least recently used, goes
  EXPECT_EQ(loads, 3);
  EXPECT_EQ(repo.loaded_versions("a"), std::vector<int64_t>{1});
  EXPECT_NE(repo.find("b", 1), nullptr);
  EXPECT_EQ(repo.find("a", 2), nullptr);
  EXPECT_FALSE(repo.unloaded("a"));  // evicted, not unloaded: its next request loads it again
  EXPECT_EQ(metrics.value("kiln_inference_model_evictions_total", {{"model", "a"}, {"version", "2"}}), 1);
  const std::string text = metrics.render();
  EXPECT_NE(text.find("\nkiln_inference_models_loaded 2\n"), std::string::npos) << text;

  // A batcher held when its version is evicted still answers; the version then loads again.
  auto b1 = repo.find("b", 1);
  repo.get("a", 2, relu(&loads));  // evicts a:1 (b:1 was loaded after a:1's last use)
  EXPECT_EQ(loads, 4);
  EXPECT_EQ(repo.find("a", 1), nullptr);
  EXPECT_EQ(run(*a1, 2.f), (std::vector<float>{0, 0, 2, 4}));
  EXPECT_EQ(run(*b1, 1.f), (std::vector<float>{0, 0, 1, 2}));
  EXPECT_NE(repo.get("a", 1, relu(&loads)), nullptr);
  EXPECT_EQ(loads, 5);
  EXPECT_EQ(repo.loaded_versions("a").size() + repo.loaded_versions("b").size(), 2u);
}

TEST(ServeModelRepository, NoLimitKeepsEveryVersion) {
  ModelRepository repo(BatchOptions{}, nullptr);
  int loads = 0;
  for (int64_t v = 1; v <= 5; ++v) repo.get("m", v, relu(&loads));
  EXPECT_EQ(repo.loaded_versions("m"), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(loads, 5);
}

}  // namespace
}  // namespace kiln::serve
