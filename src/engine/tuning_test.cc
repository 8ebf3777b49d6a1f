#include "engine/tuning.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using namespace testing;

// A candidate that takes `us` microseconds a run (spinning: a sleep may last longer).
Candidate busy(const std::string& name, double us, int* made = nullptr) {
  return {name, [=] {
            if (made) ++*made;
            return std::function<void()>([us] {
              const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(us);
              while (std::chrono::steady_clock::now() < end) {
              }
            });
          }};
}
Candidate unavailable(const std::string& name) {
  return {name, [] { return std::function<void()>(); }};
}

TEST(Tuner, PicksTheFastestWhenItIsClearlyFaster) {
  CacheHome home("tuner_fastest");
  Tuner t({.tune = TuneMode::kOn});
  EXPECT_EQ(t.choose("k1", {busy("slow", 3000), busy("fast", 300)}), "fast");
  ASSERT_EQ(t.made().size(), 1u);
  EXPECT_EQ(t.made()[0].source, PlanChoice::Source::kMeasured);
  ASSERT_EQ(t.made()[0].choice.micros.size(), 2u);
  EXPECT_GT(t.made()[0].choice.micros[0].second, t.made()[0].choice.micros[1].second);
  EXPECT_TRUE(t.measured_any());
  // The order of preference stands against one within the margin, and an unavailable one.
  EXPECT_EQ(t.choose("k2", {busy("first", 500), busy("second", 490)}), "first");
  EXPECT_EQ(t.choose("k3", {unavailable("first"), busy("second", 100), busy("third", 2000)}), "second");
}

// A candidate that costs memory the preference does not (a Winograd conv's transformed weights
// and scratchpad) names a larger margin: faster by less than it, it does not replace the pick.
TEST(Tuner, ACandidatesOwnMarginHoldsItToMore) {
  CacheHome home("tuner_margin");
  Tuner t({.tune = TuneMode::kOn});
  Candidate dear = busy("dear", 1600);
  dear.margin = 0.5;
  EXPECT_EQ(t.choose("k1", {busy("plain", 2000), dear}), "plain");  // 20% faster: not enough
  Candidate dearer = busy("dear", 400);
  dearer.margin = 0.5;
  EXPECT_EQ(t.choose("k2", {busy("plain", 2000), dearer}), "dear");  // 80% faster
}

TEST(Tuner, OffTakesTheOrderOfPreferenceAndTimesNothing) {
  CacheHome home("tuner_off");
  int made = 0;
  Tuner t({.tune = TuneMode::kOff});
  EXPECT_EQ(t.choose("k", {busy("first", 3000, &made), busy("second", 10, &made)}), "first");
  EXPECT_EQ(made, 0);
  EXPECT_TRUE(t.made().empty());
}

TEST(Tuner, DecisionsAreCachedInTheMachinesFileAndGivenOnesComeFirst) {
  CacheHome home("tuner_cache");
  {
    Tuner t({.tune = TuneMode::kOn});
    EXPECT_EQ(t.choose("conv x", {busy("a", 2000), busy("b", 200)}), "b");
    ChoiceStore::machine().save();
  }
  const std::string text = [&] {
    std::ifstream in(home.dir() / "kiln" / "choices.json");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  EXPECT_NE(text.find(ChoiceStore::machine_identity()), std::string::npos) << text;
  EXPECT_NE(text.find("conv x"), std::string::npos) << text;
  int made = 0;
  {  // the next plan times nothing
    Tuner t({.tune = TuneMode::kOn});
    EXPECT_EQ(t.choose("conv x", {busy("a", 10, &made), busy("b", 2000, &made)}), "b");
    EXPECT_EQ(made, 0);
    EXPECT_EQ(t.made().at(0).source, PlanChoice::Source::kMachine);
  }
  {  // again: measured anew, and the cache follows
    Tuner t({.tune = TuneMode::kAgain});
    EXPECT_EQ(t.choose("conv x", {busy("a", 100, &made), busy("b", 2000, &made)}), "a");
    EXPECT_EQ(made, 2);
    EXPECT_EQ(ChoiceStore::machine().find("conv x")->pick, "a");
  }
  {  // an artifact's decision holds over the machine's, with tuning off too
    auto given = ChoiceStore::parse(R"({"conv x": {"pick": "b", "micros": {"a": 5, "b": 4}}})");
    Tuner t({.tune = TuneMode::kOff, .given_choices = given});
    EXPECT_EQ(t.choose("conv x", {busy("a", 10), busy("b", 10)}), "b");
    EXPECT_EQ(t.made().at(0).source, PlanChoice::Source::kGiven);
    // a pick that is not among the candidates (another kiln's) is not taken
    auto other = ChoiceStore::parse(R"({"conv x": {"pick": "c"}})");
    Tuner u({.tune = TuneMode::kOff, .given_choices = other});
    EXPECT_EQ(u.choose("conv x", {busy("a", 10), busy("b", 10)}), "a");
  }
}

TEST(Tuner, TheBudgetBoundsTheMeasuring) {
  CacheHome home("tuner_budget");
  int made = 0;
  Tuner t({.tune = TuneMode::kOn, .tune_budget_ms = 0});
  EXPECT_EQ(t.choose("k", {busy("first", 1000, &made), busy("second", 10, &made)}), "first");
  EXPECT_EQ(made, 0);
  EXPECT_EQ(t.made().at(0).source, PlanChoice::Source::kPreference);
}

TEST(ChoiceStore, JsonRoundTripAndRefusals) {
  ChoiceStore s;
  s.put("a", {"x", {{"x", 1.5}, {"y", 2}}});
  s.put("b", {"y", {}});
  const auto back = ChoiceStore::parse(s.to_json());
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ(back->find("a")->pick, "x");
  EXPECT_EQ(back->find("a")->micros.size(), 2u);
  EXPECT_EQ(back->find("b")->pick, "y");
  for (const char* bad : {"[]", "{\"a\": 1}", "{\"a\": {\"pick\": 3}}", "{\"a\": {\"pick\": \"\"}}",
                          "{\"a\": {\"pick\": \"x\", \"micros\": [1]}}", "{\"a\": {\"pick\": \"x\", \"micros\": {\"x\": \"1\"}}}",
                          "not json"})
    EXPECT_THROW(ChoiceStore::parse(bad), Error) << bad;
}

// A 3x3 conv Winograd fits: the plan measures Winograd against direct once, says so, runs the
// pick with the reference's outputs, and the next plan (another model of the same conv) takes the
// cached decision; an artifact's given decision wins either way.
TEST(Tuner, AConvChoosesWinogradOrDirectByMeasurement) {
  CacheHome home("tuner_conv");
  const auto make = [] {
    ModelBuilder b;
    b.output(b.op("Conv", {b.input("x", {1, 32, 28, 28}), b.constant("w", random_tensor({32, 32, 3, 3}, 2))},
                  {attr("pads", std::vector<int64_t>{1, 1, 1, 1})}));
    return b.take();
  };
  const std::vector<Tensor> feeds{random_tensor({1, 32, 28, 28}, 1)};
  const auto choice_line = [](const PlanSummary& s) {
    const size_t at = s.listing.find("choice conv f32 winograd|direct: 1x32x28x28 row-major by 32x32x3x3");
    return at == std::string::npos ? std::string() : s.listing.substr(at, s.listing.find('\n', at) - at);
  };
  const auto first = expect_same_as_reference(make, feeds, 1e-3, 1e-4, {.tune = TuneMode::kOn});
  const std::string measured = choice_line(first);
  ASSERT_FALSE(measured.empty()) << first.listing;
  EXPECT_NE(measured.find("(measured: winograd "), std::string::npos) << measured;
  EXPECT_NE(measured.find(" us, direct "), std::string::npos) << measured;
  const std::string pick = measured.find(": winograd (") != std::string::npos ? "winograd" : "direct";

  const auto second = expect_same_as_reference(make, feeds, 1e-3, 1e-4, {.tune = TuneMode::kOn});
  EXPECT_NE(choice_line(second).find(": " + pick + " (cached: "), std::string::npos) << second.listing;

  for (const std::string given : {"winograd", "direct"}) {
    const std::string key = measured.substr(7, measured.find(": " + pick) - 7);
    auto store = std::make_shared<ChoiceStore>();
    store->put(key, {given, {}});
    const auto s = expect_same_as_reference(make, feeds, 1e-3, 1e-4,
                                            {.tune = TuneMode::kOff, .given_choices = store});
    EXPECT_NE(choice_line(s).find(": " + given + " (artifact"), std::string::npos) << s.listing;
  }
}

// A conv whose Winograd form takes megabytes more than its direct one (512 -> 512 channels:
// transformed weights of 16.8 MB for 9.4) has direct as its preference: with no time to measure
// it runs direct, and its decision's key says why.
TEST(Tuner, AConvWhoseWinogradCostsMemoryPrefersDirect) {
  if (!cpu::isa_supported(cpu::Isa::kAvx512)) GTEST_SKIP() << "oneDNN has no Winograd here: no choice to make";
  CacheHome home("tuner_costly");
  const auto make = [] {
    ModelBuilder b;
    b.output(b.op("Conv", {b.input("x", {1, 512, 4, 4}), b.constant("w", random_tensor({512, 512, 3, 3}, 2, -0.02f, 0.02f))},
                  {attr("pads", std::vector<int64_t>{1, 1, 1, 1})}));
    return b.take();
  };
  const std::vector<Tensor> feeds{random_tensor({1, 512, 4, 4}, 1)};
  const auto s = expect_same_as_reference(make, feeds, 1e-3, 1e-4, {.tune = TuneMode::kOn});
  EXPECT_NE(s.listing.find("choice conv f32 direct|winograd (costly): 1x512x4x4"), std::string::npos) << s.listing;
  const auto unmeasured = expect_same_as_reference(make, feeds, 1e-3, 1e-4,
                                                   {.tune = TuneMode::kAgain, .tune_budget_ms = 0});
  const size_t at = unmeasured.listing.find("(costly): 1x512x4x4 row-major by 512x512x3x3");
  ASSERT_NE(at, std::string::npos) << unmeasured.listing;
  const std::string line = unmeasured.listing.substr(at, unmeasured.listing.find('\n', at) - at);
  EXPECT_NE(line.find(" threads: direct ("), std::string::npos) << line;
}

}  // namespace
}  // namespace kiln::engine

namespace kiln::engine {
namespace {

using namespace testing;

// A pool of channel blocks (a conv's result) chooses between kiln's pooling and oneDNN's by
// measurement, says so, and gives the reference's outputs either way.
TEST(Tuner, APoolOfChannelBlocksChoosesKilnsOrOnednnsByMeasurement) {
  CacheHome home("tuner_pool");
  const auto make = [] {
    ModelBuilder b;
    Value* y = b.op("Conv", {b.input("x", {1, 16, 21, 21}), b.constant("w", random_tensor({16, 16, 3, 3}, 2))},
                    {attr("pads", std::vector<int64_t>{1, 1, 1, 1})});
    b.output(b.op("MaxPool", {y}, {attr("kernel_shape", std::vector<int64_t>{3, 3}),
                                    attr("strides", std::vector<int64_t>{2, 2})}));
    return b.take();
  };
  const std::vector<Tensor> feeds{random_tensor({1, 16, 21, 21}, 1)};
  const auto s = expect_same_as_reference(make, feeds, 1e-3, 1e-4, {.tune = TuneMode::kOn});
  // (AVX-512: the stem writes nChw16c for the Winograd-sized conv; AVX2's convs write nChw8c.)
  if (!cpu::isa_supported(cpu::Isa::kAvx2)) GTEST_SKIP() << "oneDNN's convs write no channel blocks here";
  const size_t at = s.listing.find("choice pool f32 cpu.pool|onednn.pool: max 1x16x21x21 nChw");
  ASSERT_NE(at, std::string::npos) << s.listing;
  const std::string line = s.listing.substr(at, s.listing.find('\n', at) - at);
  EXPECT_NE(line.find("(measured: cpu.pool "), std::string::npos) << line;
  EXPECT_NE(line.find(" us, onednn.pool "), std::string::npos) << line;
  const bool kilns = line.find(": cpu.pool (") != std::string::npos;
  EXPECT_EQ(steps_of(s, "cpu.pool"), kilns ? 1 : 0) << s.listing;
  EXPECT_EQ(steps_of(s, "onednn.pool"), kilns ? 0 : 1) << s.listing;
}

}  // namespace
}  // namespace kiln::engine
