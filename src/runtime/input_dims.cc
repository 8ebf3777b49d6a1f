#include "runtime/input_dims.h"

#include <algorithm>
#include <chrono>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "support/error.h"

namespace kiln {

namespace {

// Shapes of the inputs, when they are tensors of known rank.
template <typename F>
void for_each_input_dim(const std::vector<const Value*>& inputs, F&& f) {
  for (const Value* v : inputs) {
    if (v->type.kind != TypeInfo::Kind::kTensor || !v->type.shape) continue;
    for (size_t axis = 0; axis < v->type.shape->size(); ++axis) f((*v->type.shape)[axis], axis);
  }
}

// Sizes tried after 1, smallest first: powers of two (what strided convs and pools halve down
// to), and the image sides models are made for.
constexpr int64_t kLadder[] = {2, 4, 8, 16, 32, 64, 128, 224, 256, 320, 512, 640, 1024};

// Candidates whose inputs would hold more elements than this are not tried (1 GiB of floats).
constexpr int64_t kMaxCandidateElements = int64_t{1} << 28;

int64_t total_elements(const std::vector<const Value*>& inputs, const RandomInputOptions& opts) {
  int64_t total = 0;
  for (const Value* v : inputs) {
    int64_t n = 1;
    for (int64_t d : concrete_dims(*v, opts)) n = d > 0 && n > kMaxCandidateElements / d ? kMaxCandidateElements + 1 : n * d;
    total += n;
  }
  return total;
}

// Whether random_inputs can make every input at all (tensors of known rank): else no size helps.
bool makeable(const std::vector<const Value*>& inputs) {
  return std::all_of(inputs.begin(), inputs.end(), [](const Value* v) {
    return v->type.kind == TypeInfo::Kind::kTensor && v->type.shape.has_value();
  });
}

// The dims with no name ('?') take one size together (RandomInputOptions::default_dim): they are
// chosen as one, under this name.
constexpr const char* kUnnamed = "?";

bool has_unnamed_dims(const std::vector<const Value*>& inputs) {
  bool any = false;
  for_each_input_dim(inputs, [&](const Dim& d, size_t) { any |= d.is_unknown(); });
  return any;
}

}  // namespace

std::vector<std::string> symbolic_input_dims(const std::vector<const Value*>& inputs) {
  std::vector<std::string> names;
  for_each_input_dim(inputs, [&](const Dim& d, size_t) {
    if (d.is_symbolic() && std::find(names.begin(), names.end(), d.sym()) == names.end())
      names.push_back(d.sym());
  });
  return names;
}

void check_dim_names(const std::vector<const Value*>& inputs,
                     const std::map<std::string, int64_t>& dims, const std::string& flag) {
  const std::vector<std::string> names = symbolic_input_dims(inputs);
  for (const auto& [name, value] : dims) {
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    if (names.empty())
      fail(ErrorKind::kBadInput, "{} {}={}: the model's inputs have no symbolic dims", flag, name,
           value);
    fail(ErrorKind::kBadInput, "{} {}={}: no input has a dim '{}'; the model's symbolic dims: {}",
         flag, name, value, name, fmt::join(names, ", "));
  }
}

std::vector<std::string> open_input_dims(const std::vector<const Value*>& inputs,
                                         const RandomInputOptions& given) {
  std::vector<std::string> open;
  if (!makeable(inputs)) return open;
  for (const std::string& name : symbolic_input_dims(inputs))
    if (!given.dims.contains(name)) open.push_back(name);
  if (has_unnamed_dims(inputs)) open.push_back(kUnnamed);
  return open;
}

std::string DimSearch::describe() const {
  std::vector<std::string> parts;
  for (const std::string& name : chosen)
    parts.push_back(name == kUnnamed ? fmt::format("unnamed (?) dims={}", inputs.default_dim)
                                     : fmt::format("{}={}", name, inputs.dims.at(name)));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string DimSearch::hint() const {
  const bool only_unnamed = chosen.size() == 1 && chosen[0] == kUnnamed;
  return only_unnamed ? "--inputs DIR gives real inputs instead" : "--dim sets them";
}

DimSearch search_input_dims(const std::vector<const Value*>& inputs,
                            const RandomInputOptions& given,
                            const std::function<void(const RandomInputOptions&)>& attempt,
                            double budget_s) {
  DimSearch s;
  std::set<std::string> leading;  // dims at axis 0 of some input: batches, which any size fits
  for_each_input_dim(inputs, [&](const Dim& d, size_t axis) {
    if (d.is_symbolic() && axis == 0) leading.insert(d.sym());
  });
  s.chosen = open_input_dims(inputs, given);
  const bool some_leading = std::any_of(s.chosen.begin(), s.chosen.end(),
                                        [&](const std::string& n) { return leading.contains(n); });
  const bool some_other = std::any_of(s.chosen.begin(), s.chosen.end(),
                                      [&](const std::string& n) { return !leading.contains(n); });

  // The candidates: (size of the leading dims, size of the others).
  std::vector<std::pair<int64_t, int64_t>> candidates = {{1, 1}};
  if (some_other)
    for (int64_t v : kLadder) candidates.push_back({1, v});
  if (some_leading)
    for (int64_t v : kLadder) candidates.push_back({v, v});

  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> tried;
  for (const auto& [lead, other] : candidates) {
    RandomInputOptions opts = given;
    for (const std::string& name : s.chosen) {
      if (name == kUnnamed)
        opts.default_dim = other;  // unnamed dims cannot be told apart, so no batch among them
      else
        opts.dims[name] = leading.contains(name) ? lead : other;
    }
    if (!s.chosen.empty() && total_elements(inputs, opts) > kMaxCandidateElements) continue;
    ++s.attempts;
    try {
      attempt(opts);
      s.inputs = opts;
      return s;
    } catch (const Error& e) {
      if (s.first_failure.empty()) s.first_failure = e.what();
      // Nothing to choose, or a failure no size mends (an unsupported op, a bug in kiln): it is
      // the model's, the user's or kiln's, and says so as it is.
      if (s.chosen.empty() || e.kind() == ErrorKind::kUnsupported ||
          e.kind() == ErrorKind::kInternal)
        throw;
      tried.push_back(some_leading && some_other ? fmt::format("{}/{}", lead, other)
                                                 : std::to_string(some_other ? other : lead));
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > budget_s) break;
  }
  std::vector<std::string> flags;
  for (const std::string& name : s.chosen)
    flags.push_back(name == kUnnamed ? "--inputs DIR (unnamed dims have no flag)"
                                     : fmt::format("--dim {}=N", name));
  fail(ErrorKind::kBadInput,
       "{} (with symbolic dims {} set to 1; kiln also tried {} and found no size that runs: pass "
       "{})",
       s.first_failure, fmt::join(s.chosen, ", "),
       tried.size() > 1 ? fmt::format("{}", fmt::join(tried.begin() + 1, tried.end(), ", ")) : "nothing else",
       fmt::join(flags, " "));
}

}  // namespace kiln
