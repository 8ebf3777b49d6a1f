// The artifact end to end on small models built in code: compiled, read back (weights viewed,
// pre-packed weights taken, declared shapes planned), run with the original's outputs; refused
// with one line when this CPU (capped) or this kiln cannot run it; --strict-shapes; the cache.
#include "artifact/load/artifact.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "artifact/cache.h"
#include "artifact/compile.h"
#include "artifact/format/format.h"
#include "engine/cpu/cpu_features.h"
#include "engine/engine_test_util.h"
#include "onnx/export.h"
#include "runtime/session.h"
#include "support/mapped_file.h"
#include "target/target.h"

namespace kiln::artifact {
namespace {

namespace fs = std::filesystem;
using engine::testing::ModelBuilder;
using engine::testing::random_tensor;

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("kiln_artifact_test_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// x: float[batch, 512] -> MatMul(w: 512x512) -> Add(b) -> Relu: a oneDNN matmul with constant weights
// (pre-packed) and a symbolic batch.
Model linear_model() {
  ModelBuilder b;
  // more than one thread's work at batch 2: oneDNN's matmul, whose packed weights the artifact holds
  Value* x = b.input("x", Shape{Dim::symbol("batch"), 512});
  Value* w = b.constant("w", random_tensor({512, 512}, 1));
  Value* bias = b.constant("b", random_tensor({512}, 2));
  b.output(b.op("Relu", {b.op("Add", {b.op("MatMul", {x, w}), bias})}));
  return b.take();
}

fs::path write_model(Model m, const fs::path& dir) {
  const fs::path p = dir / "linear.onnx";
  prepare_model(m);  // the outputs' types, which a saved model states
  save_model(m, p);
  return p;
}

std::vector<RtValue> feeds(int64_t batch) {
  return {RtValue::of(random_tensor({batch, 512}, 3))};
}

TEST(Artifact, CompiledModelRunsLikeTheOriginal) {
  const fs::path dir = temp_dir("run");
  CompileOptions o{.model = write_model(linear_model(), dir).string(), .target = "native",
                   .shapes = {"batch=2,4"}, .measure_runs = 2};
  const CompileResult r = compile(o);
  ASSERT_TRUE(r.runs_here);
  EXPECT_EQ(r.manifest.planned_signatures.size(), 2u);
  EXPECT_TRUE(r.manifest.json["measured"]["outputs_match"].get<bool>());
  write_file_atomically(dir / "linear.kiln", r.bytes);

  auto a = Artifact::open(dir / "linear.kiln");
  EXPECT_EQ(a->compatibility().fit, Fit::kOptimal);
  EXPECT_EQ(a->times().plans_made, 2);
  // AVX-512's matmul packs its weights (blocked), and the artifact holds them so; AVX2's reads the
  // row-major ones in place, and there is nothing to pack.
  if (cpu::active_isa() == cpu::Isa::kAvx512) {
    EXPECT_GT(a->times().packed_entries, 0);
  }
  EXPECT_EQ(a->times().packed_taken, a->times().packed_entries);  // no weight reordered again
  engine::CompiledModel original(linear_model());
  for (int64_t batch : {2, 4, 3}) {  // 3: not declared, planned on first use
    const auto got = a->run(feeds(batch));
    const auto want = original.run(feeds(batch));
    ASSERT_EQ(got.size(), 1u);
    const Comparison c = compare_values(got[0], want[0], Tolerance{1e-5, 1e-6});
    EXPECT_TRUE(c.equal) << "batch " << batch << ": " << c.reason;
  }
}

// The implementation choices the compile's plans made (measured here: a 3x3 conv, Winograd or
// direct) are in the manifest, and the loader's plans take them as they are, with tuning off.
TEST(Artifact, CarriesTheImplementationChoicesItsPlansWereMadeWith) {
  const fs::path dir = temp_dir("choices");
  engine::testing::CacheHome home("artifact_choices");
  ModelBuilder b;
  b.output(b.op("Conv", {b.input("x", {1, 32, 28, 28}), b.constant("w", random_tensor({32, 32, 3, 3}, 1))},
                {engine::testing::attr("pads", std::vector<int64_t>{1, 1, 1, 1})}));
  const fs::path model = dir / "conv.onnx";
  Model m = b.take();
  prepare_model(m);
  save_model(m, model);
  const char* was = std::getenv("KILN_TUNE");
  const std::string before = was ? was : "";
  setenv("KILN_TUNE", "on", 1);
  const CompileResult r = compile({.model = model.string(), .target = "native", .measure_runs = 0});
  if (before.empty()) unsetenv("KILN_TUNE");
  else setenv("KILN_TUNE", before.c_str(), 1);
  ASSERT_TRUE(r.runs_here);
  if (!cpu::isa_supported(cpu::Isa::kAvx512)) GTEST_SKIP() << "oneDNN has no Winograd here: no choice to make";
  const auto& choices = r.manifest.json.at("choices");
  ASSERT_EQ(choices.size(), 1u) << choices.dump();
  const std::string key = choices.begin().key();
  EXPECT_NE(key.find("conv f32 winograd|direct: 1x32x28x28"), std::string::npos) << key;
  const std::string pick = choices.begin().value().at("pick");
  EXPECT_EQ(choices.begin().value().at("micros").size(), 2u);

  std::shared_ptr<void> keep(std::aligned_alloc(64, (r.bytes.size() + 63) / 64 * 64), std::free);
  std::memcpy(keep.get(), r.bytes.data(), r.bytes.size());
  auto a = Artifact::from_bytes({static_cast<const uint8_t*>(keep.get()), r.bytes.size()}, keep, "c.kiln",
                                {.engine = {.tune = engine::TuneMode::kOff}});
  const std::string plan = a->model().describe({{1, 32, 28, 28}});
  EXPECT_NE(plan.find("choice " + key + ": " + pick + " (artifact"), std::string::npos) << plan;
}

TEST(Artifact, StrictShapesRefuseUndeclaredSizes) {
  const fs::path dir = temp_dir("strict");
  CompileOptions o{.model = write_model(linear_model(), dir).string(), .shapes = {"batch=1..4"},
                   .strict_shapes = true, .measure_runs = 0};
  const CompileResult r = compile(o);
  std::shared_ptr<void> keep(std::aligned_alloc(64, (r.bytes.size() + 63) / 64 * 64), std::free);
  std::memcpy(keep.get(), r.bytes.data(), r.bytes.size());
  auto a = Artifact::from_bytes({static_cast<const uint8_t*>(keep.get()), r.bytes.size()}, keep, "t.kiln");
  EXPECT_EQ(a->times().plans_made, 2);  // the range's two ends
  EXPECT_NO_THROW(a->run(feeds(3)));
  try {
    a->run(feeds(5));
    FAIL() << "batch 5 ran outside batch=1..4";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_NE(std::string(e.what()).find("batch=5 is outside"), std::string::npos) << e.what();
  }
}

// The manifest of an artifact for `target`, as compile writes it.
Manifest manifest_for(const std::string& target) {
  const Target& t = find_target(target);
  Manifest m;
  m.format_version = kFormatVersion;
  m.kiln_version = kiln_version();
  m.target = t.name;
  m.target_arch = t.arch;
  m.target_level = t.level;
  m.required_features = t.features;
  m.onednn_version = onednn_version();
  return m;
}

// The ISA mismatch, on this machine: kiln's kernels capped (as KILN_CPU_ISA does) and oneDNN's
// (DNNL_MAX_CPU_ISA, read by the check as oneDNN reads it).
TEST(ArtifactCompatibility, CappedIsaRefusesWiderArtifacts) {
  if (!cpu::isa_supported(cpu::Isa::kAvx2)) GTEST_SKIP() << "this CPU has no AVX2";
  const cpu::Isa before = cpu::set_active_isa(cpu::Isa::kAvx2);
  const Compatibility v4 = check_compatibility(manifest_for("x86-64-v4"));
  EXPECT_EQ(v4.fit, Fit::kUnsupported);
  EXPECT_NE(v4.message.find("needs"), std::string::npos) << v4.message;
  EXPECT_NE(v4.message.find("avx512f"), std::string::npos) << v4.message;
  EXPECT_NE(v4.message.find("--target x86-64-v3"), std::string::npos) << v4.message;
  EXPECT_THROW(require_compatible(v4, "a.kiln"), Error);
  EXPECT_EQ(check_compatibility(manifest_for("x86-64-v3")).fit, Fit::kOptimal);
  const Compatibility v1 = check_compatibility(manifest_for("x86-64"));
  EXPECT_EQ(v1.fit, Fit::kSuboptimal);
  EXPECT_NE(v1.message.find("recompile with --target x86-64-v3"), std::string::npos) << v1.message;
  cpu::set_active_isa(before);

  ::setenv("DNNL_MAX_CPU_ISA", "SSE41", 1);
  EXPECT_EQ(check_compatibility(manifest_for("x86-64-v3")).fit, Fit::kUnsupported);
  EXPECT_NE(check_compatibility(manifest_for("x86-64-v3")).message.find("DNNL_MAX_CPU_ISA=SSE41"),
            std::string::npos);
  ::unsetenv("DNNL_MAX_CPU_ISA");
}

TEST(ArtifactCompatibility, OtherKilnOrArchIsRefused) {
  Manifest m = manifest_for("native");
  m.kiln_version = "0.0.1";
  const Compatibility old = check_compatibility(m);
  EXPECT_EQ(old.fit, Fit::kUnsupported);
  EXPECT_NE(old.message.find("compiled by kiln 0.0.1"), std::string::npos) << old.message;
  const Compatibility arm = check_compatibility(manifest_for("aarch64-linux"));
  EXPECT_EQ(arm.fit, Fit::kUnsupported);
  EXPECT_NE(arm.message.find("aarch64"), std::string::npos) << arm.message;
  m = manifest_for("native");
  m.onednn_version = "1.0.0";
  EXPECT_EQ(check_compatibility(m).fit, Fit::kSuboptimal);  // repacked at load
}

TEST(ArtifactCompatibility, LoadRefusesWithOneLine) {
  const fs::path dir = temp_dir("refuse");
  CompileOptions o{.model = write_model(linear_model(), dir).string(), .target = "aarch64-linux"};
  const CompileResult r = compile(o);
  EXPECT_FALSE(r.runs_here);
  EXPECT_TRUE(r.manifest.planned_signatures.empty());
  write_file_atomically(dir / "arm.kiln", r.bytes);
  try {
    Artifact::open(dir / "arm.kiln");
    FAIL() << "an aarch64 artifact opened here";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("recompile"), std::string::npos) << e.what();
  }
}

TEST(ArtifactCache, HitsTouchAndTheLeastRecentlyUsedGoFirst) {
  const fs::path dir = temp_dir("cache");
  const std::string art = write_container({{SectionKind::kManifest, "{}"},
                                           {SectionKind::kWeights, std::string(4000, 'w'), false}});
  ArtifactCache cache(dir, 3 * art.size());  // room for three
  EXPECT_FALSE(cache.lookup("a").has_value());
  cache.store("a", art);
  cache.store("b", art);
  cache.store("c", art);
  // Make a look older than b and c, then use it: b is now the least recently used.
  fs::last_write_time(cache.path_of("a"), fs::file_time_type::clock::now() - std::chrono::hours(2));
  fs::last_write_time(cache.path_of("b"), fs::file_time_type::clock::now() - std::chrono::hours(1));
  ASSERT_TRUE(cache.lookup("a").has_value());
  Eviction ev;
  cache.store("d", art, &ev);
  EXPECT_EQ(ev.files, 1);
  EXPECT_TRUE(fs::exists(cache.path_of("a")));
  EXPECT_FALSE(fs::exists(cache.path_of("b")));
  EXPECT_TRUE(fs::exists(cache.path_of("d")));
  EXPECT_LE(cache.size_bytes(), 3 * art.size());
  // A damaged entry is a miss, and is removed.
  write_file_atomically(cache.path_of("c"), "garbage");
  EXPECT_FALSE(cache.lookup("c").has_value());
  EXPECT_FALSE(fs::exists(cache.path_of("c")));
  EXPECT_EQ(parse_size("2G"), uint64_t(2) << 30);
  EXPECT_EQ(parse_size("512M"), uint64_t(512) << 20);
  EXPECT_THROW(parse_size("12X"), Error);
}

// New weights in the external data file beside an unchanged .onnx are a new model to the cache.
TEST(ArtifactCache, TheModelsHashCoversItsExternalData) {
  const fs::path dir = temp_dir("external");
  Model m = linear_model();
  prepare_model(m);
  const SavedModel saved = save_model(m, dir / "ext.onnx", {.external_data = true, .external_threshold = 16});
  ASSERT_FALSE(saved.data_path.empty());
  const std::string before = model_content_sha256((dir / "ext.onnx").string());
  EXPECT_EQ(model_content_sha256((dir / "ext.onnx").string()), before);
  std::string data;
  {
    std::ifstream f(saved.data_path, std::ios::binary);
    data.assign(std::istreambuf_iterator<char>(f), {});
  }
  ASSERT_FALSE(data.empty());
  data[0] ^= 1;
  write_file_atomically(saved.data_path, data);
  EXPECT_NE(model_content_sha256((dir / "ext.onnx").string()), before);
  // A model without external data: the hash of its bytes and nothing else.
  const fs::path plain = write_model(linear_model(), dir);
  EXPECT_EQ(model_content_sha256(plain.string()), model_content_sha256(plain.string()));
  EXPECT_NE(model_content_sha256(plain.string()), before);
}

TEST(ArtifactCache, KeyChangesWithModelOptionsAndTarget) {
  CompileOptions o{.model = "m.onnx", .target = "x86-64"};
  const std::string base = compile_key("00", o);
  EXPECT_EQ(compile_key("00", o), base);
  EXPECT_NE(compile_key("01", o), base);
  CompileOptions t = o;
  t.target = "x86-64-v3";
  EXPECT_NE(compile_key("00", t), base);
  CompileOptions s = o;
  s.shapes = {"batch=1..8"};
  EXPECT_NE(compile_key("00", s), base);
  CompileOptions l = o;
  l.level = 1;
  EXPECT_NE(compile_key("00", l), base);
  CompileOptions b = o;
  b.backends = {"xnnpack", "cpu"};
  EXPECT_NE(compile_key("00", b), base);
}

}  // namespace
}  // namespace kiln::artifact
