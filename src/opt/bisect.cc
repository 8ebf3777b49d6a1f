#include "opt/bisect.h"

#include "support/error.h"

namespace kiln::opt {

namespace {

// Empty when the outputs match; otherwise how they differ.
std::string failure_with_budget(const std::function<Model()>& load,
                                const std::vector<std::string>& passes, PipelineOptions opts,
                                int64_t budget, const Reference& ref, const VerifyOptions& vopts) {
  opts.rewrite_budget = budget;
  try {
    Model m = load();
    optimize(m, passes, opts);
    Session s(std::move(m));
    const VerifyReport r = check_against(s, ref, vopts);
    for (const auto& o : r.outputs)
      if (!o.ok) return fmt::format("output '{}': {}", o.name, o.reason);
    return {};
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace

BisectResult bisect(const std::function<Model()>& load, const std::vector<std::string>& passes,
                    const PipelineOptions& opts, const Reference& ref, const VerifyOptions& vopts) {
  BisectResult result;
  Model full = load();
  const OptimizeResult all = optimize(full, passes, opts);
  result.total = static_cast<int64_t>(all.rewrites.size());
  auto fails = [&](int64_t k, std::string* why) {
    ++result.runs;
    *why = failure_with_budget(load, passes, opts, k, ref, vopts);
    return !why->empty();
  };
  std::string why;
  if (!fails(result.total, &why)) return result;  // nothing to find
  result.failure = why;
  int64_t good = 0, bad = result.total;  // invariant: budget `good` passes, `bad` fails
  std::string probe;
  if (fails(0, &probe)) return result;  // the original itself does not verify
  while (bad - good > 1) {
    const int64_t mid = good + (bad - good) / 2;
    if (fails(mid, &probe)) {
      bad = mid;
      result.failure = probe;
    } else {
      good = mid;
    }
  }
  result.first_bad = bad;
  result.rewrite = all.rewrites[static_cast<size_t>(bad - 1)];
  return result;
}

}  // namespace kiln::opt
