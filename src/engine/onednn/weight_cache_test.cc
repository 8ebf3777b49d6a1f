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
  // A layout change (a constant already in the wanted layout is used in place, never reordered).
  const dnnl::memory::desc from({8, 8}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
  const dnnl::memory::desc to({8, 8}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ba);
  const Tensor a = testing::random_tensor({8, 8}, 1);
  const Tensor copy = a.clone();  // another buffer, the same bytes
  const Tensor other = testing::random_tensor({8, 8}, 2);
  const dnnl::memory ma = cache.get(a, from, to);
  EXPECT_EQ(cache.get(copy, from, to).get_data_handle(), ma.get_data_handle());
  EXPECT_NE(cache.get(other, from, to).get_data_handle(), ma.get_data_handle());
  EXPECT_EQ(cache.reordered(), 2);
  EXPECT_EQ(cache.bytes(), 2 * 64 * sizeof(float));
}

}  // namespace
}  // namespace kiln::engine
