#include "opt/verify.h"

#include <algorithm>

#include "support/error.h"

namespace kiln::opt {

Reference make_reference(Session& original, const VerifyOptions& opts) {
  Reference ref;
  for (const Value* v : original.inputs()) ref.input_names.push_back(v->name);
  for (const Value* v : original.outputs()) ref.output_names.push_back(v->name);
  for (const std::vector<RtValue>& feeds : opts.given) {
    ref.feeds.push_back(feeds);
    ref.outputs.push_back(original.run(feeds));
  }
  ref.random = opts.inputs;
  if (opts.samples <= 0) return ref;
  const DimSearch search =
      search_input_dims(original.inputs(), opts.inputs, [&](const RandomInputOptions& in) {
        std::vector<RtValue> feeds = random_inputs(original.inputs(), in);
        std::vector<RtValue> outputs = original.run(feeds);
        ref.feeds.push_back(std::move(feeds));
        ref.outputs.push_back(std::move(outputs));
      });
  ref.random = search.inputs;
  ref.chosen_dims = search.describe();
  ref.chosen_hint = search.hint();
  if (search.attempts > 1) ref.chosen_because = search.first_failure;
  for (int s = 1; s < opts.samples; ++s) {
    RandomInputOptions in = ref.random;
    in.seed = opts.inputs.seed + static_cast<uint64_t>(s);
    ref.feeds.push_back(random_inputs(original.inputs(), in));
    ref.outputs.push_back(original.run(ref.feeds.back()));
  }
  return ref;
}

VerifyReport check_against(Session& candidate, const Reference& ref, const VerifyOptions& opts) {
  KILN_CHECK(candidate.outputs().size() == ref.output_names.size(), ErrorKind::kRuntime,
             "the optimized model has {} outputs, the original {}", candidate.outputs().size(),
             ref.output_names.size());
  KILN_CHECK(candidate.inputs().size() == ref.input_names.size(), ErrorKind::kRuntime,
             "the optimized model has {} inputs, the original {}", candidate.inputs().size(),
             ref.input_names.size());
  for (size_t i = 0; i < ref.input_names.size(); ++i)
    KILN_CHECK(candidate.inputs()[i]->name == ref.input_names[i], ErrorKind::kRuntime,
               "input {} is '{}' in the optimized model, '{}' in the original", i,
               candidate.inputs()[i]->name, ref.input_names[i]);
  VerifyReport report;
  for (size_t i = 0; i < ref.output_names.size(); ++i) {
    KILN_CHECK(candidate.outputs()[i]->name == ref.output_names[i], ErrorKind::kRuntime,
               "output {} is '{}' in the optimized model, '{}' in the original", i,
               candidate.outputs()[i]->name, ref.output_names[i]);
    report.outputs.push_back({ref.output_names[i], 0, 0, true, ""});
  }
  for (size_t s = 0; s < ref.feeds.size(); ++s) {
    const auto got = candidate.run(ref.feeds[s]);
    for (size_t i = 0; i < got.size(); ++i) {
      const Comparison c = compare_values(got[i], ref.outputs[s][i], opts.tolerance);
      OutputCheck& o = report.outputs[i];
      o.max_abs_error = std::max(o.max_abs_error, c.max_abs_error);
      o.max_rel_error = std::max(o.max_rel_error, c.max_rel_error);
      if (!c.equal && o.ok) {
        o.ok = false;
        o.reason = c.reason;
      }
    }
  }
  for (const auto& o : report.outputs) report.ok &= o.ok;
  report.chosen_dims = ref.chosen_dims;
  report.chosen_because = ref.chosen_because;
  return report;
}

}  // namespace kiln::opt
