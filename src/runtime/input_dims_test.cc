#include "runtime/input_dims.h"

#include <gtest/gtest.h>

#include "onnx/text_format.h"
#include "runtime/session.h"
#include "support/error.h"

namespace kiln {
namespace {

// An image model with dynamic sides: a 2x2 average pool needs at least 2 pixels a side, then a
// 4x4 one after it at least 8 in all.
constexpr const char* kPools = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  agraph (float[N, 3, H, W] x) => (float[N, 3, ?, ?] y) {
    p = AveragePool<kernel_shape = [2, 2], strides = [2, 2]>(x)
    y = AveragePool<kernel_shape = [4, 4], strides = [4, 4]>(p)
  }
)";

TEST(InputDims, NamesTheSymbolicDimsInOrder) {
  Session s(parse_model_text(kPools));
  EXPECT_EQ(symbolic_input_dims(s.inputs()), (std::vector<std::string>{"N", "H", "W"}));
}

TEST(InputDims, AnUnknownDimNameIsAnErrorListingTheModelsDims) {
  Session s(parse_model_text(kPools));
  check_dim_names(s.inputs(), {{"H", 8}});
  try {
    check_dim_names(s.inputs(), {{"batch", 4}});
    FAIL() << "accepted a dim the model does not have";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_STREQ(e.what(), "--dim batch=4: no input has a dim 'batch'; the model's symbolic dims: N, H, W");
  }
}

TEST(InputDims, ChoosesTheSmallestSizeThatRunsAndKeepsTheBatchAtOne) {
  Session s(parse_model_text(kPools));
  const DimSearch found = search_input_dims(s.inputs(), {}, [&](const RandomInputOptions& in) {
    s.run(random_inputs(s.inputs(), in));
  });
  EXPECT_EQ(found.describe(), "N=1, H=8, W=8");
  EXPECT_EQ(found.attempts, 4);  // 1, 2, 4, 8
  EXPECT_NE(found.first_failure.find("AveragePool"), std::string::npos) << found.first_failure;
}

TEST(InputDims, GivenDimsStayAsGiven) {
  Session s(parse_model_text(kPools));
  const DimSearch found = search_input_dims(s.inputs(), {.dims = {{"H", 16}}},
                                            [&](const RandomInputOptions& in) {
                                              s.run(random_inputs(s.inputs(), in));
                                            });
  EXPECT_EQ(found.inputs.dims.at("H"), 16);
  EXPECT_EQ(found.describe(), "N=1, W=8");
}

TEST(InputDims, WhenNoSizeRunsTheFirstFailureNamesTheFlagsToPass) {
  Session s(parse_model_text(kPools));
  try {
    search_input_dims(s.inputs(), {}, [](const RandomInputOptions&) {
      fail(ErrorKind::kRuntime, "node 'p' (AveragePool): too small");
    });
    FAIL() << "no candidate can run";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_EQ(m.rfind("node 'p' (AveragePool): too small (with symbolic dims N, H, W set to 1", 0), 0u) << m;
    EXPECT_NE(m.find("pass --dim N=N --dim H=N --dim W=N"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
}

TEST(InputDims, WithNothingToChooseTheFailureIsRaisedAsItIs) {
  Session s(parse_model_text(kPools));
  try {
    search_input_dims(s.inputs(), {.dims = {{"N", 1}, {"H", 1}, {"W", 1}}},
                      [](const RandomInputOptions&) { fail(ErrorKind::kRuntime, "broken"); });
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "broken");
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
  }
}

}  // namespace
}  // namespace kiln
