// The weight cache: a constant is reordered once per layout, and a plan's own copy of a small
// constant (a bias combined anew by every plan) is matched by its bytes, so many plans of one model
// reorder and keep it once.
#include "engine/onednn/weight_cache.h"

#include <gtest/gtest.h>

#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

TEST(WeightCache, SmallConstantsWithTheSameBytesAreReorderedOnce) {
  WeightCache cache;
  const dnnl::memory::desc md({64}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
  const Tensor a = testing::random_tensor({64}, 1);
  const Tensor copy = a.clone();  // another buffer, the same bytes
  const Tensor other = testing::random_tensor({64}, 2);
  const dnnl::memory ma = cache.get(a, md, md);
  EXPECT_EQ(cache.get(copy, md, md).get_data_handle(), ma.get_data_handle());
  EXPECT_NE(cache.get(other, md, md).get_data_handle(), ma.get_data_handle());
  EXPECT_EQ(cache.reordered(), 2);
  EXPECT_EQ(cache.bytes(), 2 * 64 * sizeof(float));
}

}  // namespace
}  // namespace kiln::engine
