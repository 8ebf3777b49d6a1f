#include "opt/pipeline.h"

#include <chrono>
#include <functional>

#include "ops/check.h"
#include "opt/passes.h"
#include "support/error.h"

namespace kiln::opt {

namespace {

// Every pass kiln has.
const std::pair<std::string_view, PassFactory> kPasses[] = {
    {"raise-opset", make_raise_opset},
    {"fold-constants", make_fold_constants},
    {"simplify-shapes", make_simplify_shapes},
    {"eliminate-noops", make_eliminate_noops},
    {"merge-chains", make_merge_chains},
    {"cse", make_cse},
    {"dedupe-initializers", make_dedupe_initializers},
    {"fuse-pad", make_fuse_pad},
    {"fuse-conv-bn", make_fuse_conv_bn},
    {"fuse-linear-affine", make_fuse_linear_affine},
    {"fuse-gemm", make_fuse_gemm},
    {"fuse-layernorm", make_fuse_layernorm},
    {"fuse-gelu", make_fuse_gelu},
    {"fuse-rmsnorm", make_fuse_rmsnorm},
    {"fuse-attention", make_fuse_attention},
    {"dce", make_dce},
};

std::vector<std::pair<std::string, PassFactory>>& registry() {
  static std::vector<std::pair<std::string, PassFactory>> passes = [] {
    std::vector<std::pair<std::string, PassFactory>> out;
    for (const auto& [n, make] : kPasses) out.emplace_back(std::string(n), make);
    return out;
  }();
  return passes;
}

std::unique_ptr<Pass> make_pass(std::string_view name) {
  for (const auto& [n, make] : registry())
    if (n == name) return make();
  return nullptr;
}

void sort_all(Graph& g) {
  g.sort_topologically();
  for (Graph* sg : g.subgraphs()) sort_all(*sg);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void register_pass(const std::string& name, PassFactory make) {
  KILN_ASSERT(!make_pass(name), "pass registered twice");
  registry().emplace_back(name, std::move(make));
}

std::vector<PassInfo> list_passes() {
  std::vector<PassInfo> out;
  for (const auto& [n, make] : registry()) out.push_back({n, std::string(make()->summary())});
  return out;
}

std::vector<std::string> level_pipeline(int level) {
  KILN_CHECK(level >= 0 && level <= 3, ErrorKind::kBadInput, "-O{}: levels are 0 to 3", level);
  if (level == 0) return {};
  std::vector<std::string> cleanup = {"fold-constants", "simplify-shapes", "eliminate-noops",
                                      "cse", "dedupe-initializers", "dce"};
  if (level == 1) return cleanup;
  std::vector<std::string> out = {"fold-constants", "simplify-shapes", "eliminate-noops",
                                  "merge-chains", "cse", "dedupe-initializers", "fuse-pad",
                                  "fuse-conv-bn", "fuse-linear-affine", "fuse-gemm",
                                  "fuse-layernorm", "fuse-gelu", "fuse-rmsnorm", "dce"};
  if (level == 3) {
    out.insert(out.begin(), "raise-opset");
    // Not at -O2: kiln's engine optimizes at -O2 before lowering and runs Attention with the
    // reference kernel (BERT-base at seq 256: 2.9x slower than its MatMuls and Softmax).
    out.insert(out.end() - 1, "fuse-attention");
  }
  return out;
}

std::vector<std::string> parse_pipeline(std::string_view spec) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t end = spec.find(',', start);
    if (end == std::string_view::npos) end = spec.size();
    std::string name(spec.substr(start, end - start));
    if (!name.empty()) {
      KILN_CHECK(make_pass(name), ErrorKind::kBadInput,
                 "--passes: unknown pass '{}' (kiln optimize --list-passes shows them)", name);
      out.push_back(std::move(name));
    }
    start = end + 1;
  }
  return out;
}

OptimizeResult optimize(Model& m, const std::vector<std::string>& passes,
                        const PipelineOptions& opts) {
  const auto t_start = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<Pass>> pipeline;
  OptimizeResult result;
  for (const auto& name : passes) {
    auto p = make_pass(name);
    KILN_CHECK(p, ErrorKind::kBadInput, "unknown pass '{}'", name);
    pipeline.push_back(std::move(p));
    result.passes.push_back({name, 0, 0, 0});
  }
  PassContext ctx(opts.pass, opts.rewrite_budget);
  // Inference evaluates constant nodes far beyond its usual limit, so folding sees them.
  InferOptions infer_opts;
  infer_opts.fold_limit = opts.pass.fold_max_bytes / 4 + 1;  // elements of 4 bytes or fewer
  infer_opts.keep_unevaluated = kept_weight_decoding;
  for (int round = 0; round < opts.max_rounds && !pipeline.empty(); ++round) {
    ++result.rounds;
    ctx.clear_near_misses();
    const int64_t before_round = ctx.rewrites_applied();
    for (size_t i = 0; i < pipeline.size(); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      ctx.mutable_facts() = InferFacts{};
      infer_shapes(m, infer_opts, &ctx.mutable_facts());
      ctx.set_pass(std::string(pipeline[i]->name()));
      const int64_t before = ctx.rewrites_applied();
      pipeline[i]->run(m, ctx);
      sort_all(*m.graph);
      PassStats& st = result.passes[i];
      ++st.runs;
      st.rewrites += ctx.rewrites_applied() - before;
      st.ms += ms_since(t0);
      if (opts.check_each_pass) {
        try {
          check_model(m);
          infer_shapes(m);
        } catch (const Error& e) {
          fail(ErrorKind::kRuntime, "pass '{}' left an invalid model: {}", pipeline[i]->name(),
               e.what());
        }
      }
    }
    if (ctx.rewrites_applied() == before_round) break;
  }
  infer_shapes(m);
  result.rewrites = ctx.rewrites();
  result.near_misses = ctx.near_misses();
  result.ms = ms_since(t_start);
  return result;
}

}  // namespace kiln::opt
