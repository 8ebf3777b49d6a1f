// The weight cache: a constant is reordered once per layout, and a plan's own copy of a small
// constant (a bias combined anew by every plan) is matched by its bytes, so many plans of one model
// reorder and keep it once.
#include "engine/onednn/weight_cache.h"

#include <gtest/gtest.h>

#include <optional>

#include "engine/engine_test_util.h"
#include "engine/onednn/dnnl_context.h"

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

// A source is let go of only where a packed copy gives its bytes back exactly: a blocked layout
// of the same type does; a bf16 copy (rounded) or Winograd's transformed weights (which oneDNN
// does not reorder back: a re-plan of a small conv net failed on it) do not.
TEST(WeightCache, LetsGoOfASourceOnlyWhereAPackedCopyReadsBackExactly) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const dnnl::memory::desc plain({32, 16, 3, 3}, dt::f32, tag::abcd);
  const int key = 0;
  {
    WeightCache cache;
    const Tensor w = testing::random_tensor({32, 16, 3, 3}, 1);
    const Tensor kept = w.clone();
    cache.get(w, plain, dnnl::memory::desc({32, 16, 3, 3}, dt::f32, tag::ABcd16b16a));
    ASSERT_TRUE(cache.drop_source(w, &key));
    const Tensor back = cache.restore_source(&key, DataType::kFloat, {32, 16, 3, 3});
    for (int64_t i = 0; i < kept.numel(); ++i) ASSERT_EQ(back.data<float>()[i], kept.data<float>()[i]);
  }
  {
    WeightCache cache;
    const Tensor w = testing::random_tensor({32, 16, 3, 3}, 2);
    cache.get(w, plain, dnnl::memory::desc({32, 16, 3, 3}, dt::bf16, tag::ABcd16b16a));
    EXPECT_FALSE(cache.drop_source(w, &key));
  }
  {
    // Winograd's weights: the layout a Winograd conv primitive asks for.
    const dnnl::memory::desc src({1, 16, 8, 8}, dt::f32, tag::any), dst({1, 32, 8, 8}, dt::f32, tag::any),
        wei({32, 16, 3, 3}, dt::f32, tag::any);
    const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                            dnnl::algorithm::convolution_winograd, src, wei, dst,
                                            {1, 1}, {1, 1}, {1, 1});
    std::optional<dnnl::convolution_forward::primitive_desc> pd;
    try {
      pd.emplace(d, engine::dnnl_engine());
    } catch (const dnnl::error&) {
      GTEST_SKIP() << "no Winograd conv on this CPU";
    }
    ASSERT_EQ(pd->weights_desc().data.format_kind, dnnl_format_kind_wino);
    WeightCache cache;
    const Tensor w = testing::random_tensor({32, 16, 3, 3}, 3);
    cache.get(w, plain, pd->weights_desc());
    EXPECT_FALSE(cache.drop_source(w, &key));
  }
}

}  // namespace
}  // namespace kiln::engine

namespace kiln::engine {
namespace {

// A value derived from a weight (column sums) is made once per weight and kind, whatever its
// bytes: every plan finds it by the graph value, a weight let go of included.
TEST(WeightCache, DerivedValuesAreMadeOncePerWeightAndKind) {
  WeightCache cache;
  Value a, b;
  int made = 0;
  const auto make = [&] {
    ++made;
    return std::make_shared<const std::vector<int32_t>>(std::vector<int32_t>{made});
  };
  const auto first = cache.derived<std::vector<int32_t>>(&a, "int8 column sums", make);
  EXPECT_EQ(cache.derived<std::vector<int32_t>>(&a, "int8 column sums", make), first);
  EXPECT_EQ(made, 1);
  EXPECT_NE(cache.derived<std::vector<int32_t>>(&a, "int8 row sums", make), first);
  EXPECT_NE(cache.derived<std::vector<int32_t>>(&b, "int8 column sums", make), first);
  EXPECT_EQ(made, 3);
  EXPECT_EQ((*first)[0], 1);
}

}  // namespace
}  // namespace kiln::engine
