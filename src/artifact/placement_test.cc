// The placement an artifact records: a backend outside the engine takes its nodes at compile, the
// manifest says so, and the loader hands them to it again; a backend that fails to compile falls
// back with the reason recorded; --strict refuses that; a hand-made placement is refused cleanly.
#include "artifact/placement.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "artifact/compile.h"
#include "artifact/load/artifact.h"
#include "backend/backend_test_util.h"
#include "backend/registry.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "runtime/session.h"

namespace kiln::artifact {
namespace {

namespace fs = std::filesystem;
using backend::testing::TestBackend;
using engine::testing::ModelBuilder;
using engine::testing::random_tensor;

// x: float[2, 16] -> MatMul(w) -> Relu -> Neg: the engine's matmul, then two nodes the test
// backend takes.
fs::path write_model(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("kiln_placement_test_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  ModelBuilder b;
  Value* x = b.input("x", shape_of({2, 16}));
  b.output(b.op("Neg", {b.op("Relu", {b.op("MatMul", {x, b.constant("w", random_tensor({16, 8}, 1))})})}));
  Model m = b.take();
  prepare_model(m);
  save_model(m, dir / "m.onnx");
  return dir / "m.onnx";
}

std::unique_ptr<Artifact> load(const std::string& bytes) {
  std::shared_ptr<void> keep(std::aligned_alloc(64, (bytes.size() + 63) / 64 * 64), std::free);
  std::memcpy(keep.get(), bytes.data(), bytes.size());
  return Artifact::from_bytes({static_cast<const uint8_t*>(keep.get()), bytes.size()}, keep, "t.kiln",
                              {.recorded_placement = artifact_placement, .quiet = true});
}

// A backend in the global registry for one test.
struct Registered {
  std::shared_ptr<TestBackend> b;
  explicit Registered(std::shared_ptr<TestBackend> backend) : b(std::move(backend)) {
    backend::BackendRegistry::global().add(b);
  }
  ~Registered() { backend::BackendRegistry::global().remove(b->name()); }
};

TEST(ArtifactPlacement, ABackendOutsideTheEngineIsRecordedAndUsedAtLoad) {
  Registered t(std::make_shared<TestBackend>("t", std::set<std::string>{"Relu", "Neg"}));
  const CompileOptions o{.model = write_model("outside").string(), .measure_runs = 0, .backends = {"t", "cpu"}};
  const CompileResult r = compile(o);
  const nlohmann::json& p = r.manifest.json["placement"];
  EXPECT_TRUE(p["outside_engine"].get<bool>()) << p.dump();
  EXPECT_EQ(p["order"], nlohmann::json({"t", "cpu", "reference"}));
  bool found = false;
  for (const auto& part : p["partitions"])
    if (part["backend"] == "t") {
      EXPECT_EQ(part["nodes"].get<int>(), 2) << part.dump();
      found = true;
    }
  EXPECT_TRUE(found) << p.dump();
  EXPECT_EQ(placed_backends(r.manifest), (std::vector<std::string>{"t", "cpu", "reference"}));

  const int compiles_before = t.b->compiles;
  auto a = load(r.bytes);
  const std::vector<RtValue> feeds = {RtValue::of(random_tensor({2, 16}, 3))};
  const auto got = a->run(feeds);
  EXPECT_GT(t.b->compiles, compiles_before);  // the loader gave the nodes to the backend again
  engine::CompiledModel original(load_model(o.model));
  const Comparison c = compare_values(got[0], original.run(feeds)[0], Tolerance{1e-5, 1e-6});
  EXPECT_TRUE(c.equal) << c.reason;
}

TEST(ArtifactPlacement, ACompileFailureFallsBackWithItsReasonAndStrictRefusesIt) {
  Registered t(std::make_shared<TestBackend>("tfail", std::set<std::string>{"Relu", "Neg"}, true));
  CompileOptions o{.model = write_model("fallback").string(), .measure_runs = 0, .backends = {"tfail", "cpu"}};
  const CompileResult r = compile(o);
  const nlohmann::json& p = r.manifest.json["placement"];
  EXPECT_FALSE(p["outside_engine"].get<bool>()) << p.dump();
  ASSERT_EQ(p["fallbacks"].size(), 1u) << p.dump();
  EXPECT_EQ(p["fallbacks"][0]["backend"], "tfail");
  EXPECT_EQ(p["fallbacks"][0]["reason"], "made to fail by the test");
  EXPECT_TRUE(placed_backends(r.manifest).empty());
  bool noted = false;
  for (const std::string& n : r.notes) noted = noted || n.find("made to fail by the test") != std::string::npos;
  EXPECT_TRUE(noted);

  o.strict_backends = true;
  try {
    compile(o);
    FAIL() << "--strict compiled with a fallback";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tfail"), std::string::npos) << e.what();
  }
}

TEST(ArtifactPlacement, TheEngineAloneNeedsNoHookAndHandMadeOrdersAreRefused) {
  const CompileResult r = compile({.model = write_model("engine").string(), .measure_runs = 0});
  EXPECT_FALSE(r.manifest.json["placement"]["outside_engine"].get<bool>());
  EXPECT_EQ(artifact_placement(r.manifest, 1), nullptr);

  Manifest m = r.manifest;
  m.json["placement"]["outside_engine"] = true;
  for (const nlohmann::json& bad : {nlohmann::json(nullptr), nlohmann::json::array(), nlohmann::json({1, 2}),
                                    nlohmann::json({"a", "a"}), nlohmann::json({"../x"})}) {
    m.json["placement"]["order"] = bad;
    try {
      placed_backends(m);
      FAIL() << "order " << bad.dump() << " was taken";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kBadModel) << e.what();
    }
  }
}

}  // namespace
}  // namespace kiln::artifact
