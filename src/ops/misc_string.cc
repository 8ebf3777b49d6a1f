// String ops: StringConcat, StringSplit, StringNormalizer, RegexFullMatch.
#include <pthread.h>

#include <regex>

#include "ops/kernel_util.h"
#include "support/error.h"

namespace kiln {

namespace {

void require_strings(const KernelContext& ctx, int i) {
  if (ctx.input(i).dtype() != DataType::kString)
    ctx.fail_here(fmt::format("input {} must be a string tensor, got {}", i,
                              dtype_name(ctx.input(i).dtype())));
}

// ---------------------------------------------------------------------------------------------

void run_string_concat(KernelContext& ctx) {
  require_strings(ctx, 0);
  require_strings(ctx, 1);
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const auto dims = broadcast_dims(ctx.node(), a.dims(), b.dims());
  Tensor out(DataType::kString, dims);
  std::string* o = out.strings();
  const std::string* pa = a.strings();
  const std::string* pb = b.strings();
  for_each_broadcast(dims, {a.dims(), b.dims()},
                     [&](int64_t i, const int64_t* off) { o[i] = pa[off[0]] + pb[off[1]]; });
  ctx.set_output(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// StringSplit: Y = X.shape + [max pieces] (padded with ""), Z = pieces per string.
// No delimiter (or ""): split on runs of whitespace, ignoring leading/trailing whitespace
// (Python's str.split semantics, which ONNX follows).
// maxsplit: at most that many splits; the rest stays in the last piece.

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

std::vector<std::string> split_one(const std::string& s, const std::string& delim,
                                   int64_t maxsplit) {
  std::vector<std::string> parts;
  if (delim.empty()) {
    size_t i = 0;
    while (true) {
      while (i < s.size() && is_space(s[i])) ++i;
      if (i >= s.size()) break;
      if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
        parts.push_back(s.substr(i));  // the rest, trailing whitespace kept (as Python does)
        break;
      }
      size_t j = i;
      while (j < s.size() && !is_space(s[j])) ++j;
      parts.push_back(s.substr(i, j - i));
      i = j;
    }
    return parts;
  }
  size_t start = 0;
  while (true) {
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) break;
    const size_t p = s.find(delim, start);
    if (p == std::string::npos) break;
    parts.push_back(s.substr(start, p - start));
    start = p + delim.size();
  }
  parts.push_back(s.substr(start));
  return parts;
}

void infer_string_split(InferContext& ctx) {
  std::optional<Shape> s = ctx.input_shape(0);
  std::optional<Shape> ys;
  if (s) {
    ys = *s;
    ys->push_back(Dim());
  }
  ctx.set_output(0, DataType::kString, ys);
  ctx.set_output(1, DataType::kInt64, s);
}

void run_string_split(KernelContext& ctx) {
  require_strings(ctx, 0);
  const Tensor& x = ctx.input(0);
  const std::string delim = attr_string(ctx.node(), "delimiter", "");
  int64_t maxsplit = -1;
  if (auto m = attr_int_opt(ctx.node(), "maxsplit")) {
    if (*m < 0) ctx.fail_here("maxsplit must be non-negative");
    maxsplit = *m;
  }
  std::vector<std::vector<std::string>> parts(static_cast<size_t>(x.numel()));
  int64_t widest = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    parts[i] = split_one(x.strings()[i], delim, maxsplit);
    widest = std::max<int64_t>(widest, static_cast<int64_t>(parts[i].size()));
  }
  std::vector<int64_t> yd = x.dims();
  yd.push_back(widest);
  Tensor y(DataType::kString, yd), z(DataType::kInt64, x.dims());
  for (int64_t i = 0; i < x.numel(); ++i) {
    for (size_t k = 0; k < parts[i].size(); ++k)
      y.strings()[i * widest + k] = std::move(parts[i][k]);
    z.data<int64_t>()[i] = static_cast<int64_t>(parts[i].size());
  }
  ctx.set_output(0, std::move(y));
  ctx.set_output(1, std::move(z));
}

// ---------------------------------------------------------------------------------------------
// StringNormalizer: drops stopwords, then changes case. Input [C] or [1, C].

std::string ascii_lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}
std::string ascii_upper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return s;
}

void infer_string_normalizer(InferContext& ctx) {
  const auto& s = ctx.input_shape(0);
  std::optional<Shape> out;
  if (s) {
    if (s->size() == 1)
      out = Shape{Dim()};
    else if (s->size() == 2)
      out = Shape{(*s)[0], Dim()};
    else
      ctx.fail_here("input must be [C] or [1, C]");
  }
  ctx.set_output(0, DataType::kString, out);
}

void run_string_normalizer(KernelContext& ctx) {
  require_strings(ctx, 0);
  const Tensor& x = ctx.input(0);
  const Node& n = ctx.node();
  if (!(x.rank() == 1 || (x.rank() == 2 && x.dim(0) == 1)))
    ctx.fail_here(fmt::format("input must be [C] or [1, C], got {}", dims_to_string(x.dims())));
  const std::string action = attr_string(n, "case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    ctx.fail_here(fmt::format("unknown case_change_action '{}'", action));
  const bool sensitive = attr_int(n, "is_case_sensitive", 0) != 0;
  std::vector<std::string> stop = attr_strings(n, "stopwords");
  if (!sensitive)
    for (auto& w : stop) w = ascii_lower(w);
  std::vector<std::string> kept;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const std::string& s = x.strings()[i];
    const std::string key = sensitive ? s : ascii_lower(s);
    if (std::find(stop.begin(), stop.end(), key) != stop.end()) continue;
    kept.push_back(action == "LOWER" ? ascii_lower(s) : action == "UPPER" ? ascii_upper(s) : s);
  }
  if (kept.empty()) kept.emplace_back();
  const int64_t c = static_cast<int64_t>(kept.size());
  Tensor out(DataType::kString,
             x.rank() == 1 ? std::vector<int64_t>{c} : std::vector<int64_t>{1, c});
  for (int64_t i = 0; i < c; ++i) out.strings()[i] = std::move(kept[i]);
  ctx.set_output(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------

// libstdc++'s std::regex matches recursively, about a stack frame per character: long strings
// overflow an ordinary stack. Matching runs on a thread with a large stack, and strings longer
// than kMaxRegexInput fail cleanly instead of crashing.
constexpr size_t kRegexStack = size_t(256) << 20;
constexpr size_t kMaxRegexInput = 50000;

template <typename Fn>
void on_big_stack(Fn& fn) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kRegexStack);
  pthread_t th;
  auto entry = [](void* p) -> void* {
    (*static_cast<Fn*>(p))();
    return nullptr;
  };
  const int rc = pthread_create(&th, &attr, entry, &fn);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    fn();  // no thread: match here (inputs are length-capped anyway)
    return;
  }
  pthread_join(th, nullptr);
}

void run_regex_full_match(KernelContext& ctx) {
  require_strings(ctx, 0);
  const Tensor& x = ctx.input(0);
  const Attribute* a = ctx.node().attr("pattern");
  if (!a) ctx.fail_here("attribute 'pattern' is required");
  if (a->s.size() > kMaxRegexInput) ctx.fail_here("pattern too long for the regex engine");
  for (int64_t i = 0; i < x.numel(); ++i)
    if (x.strings()[i].size() > kMaxRegexInput)
      ctx.fail_here(fmt::format("string {} has {} bytes, above the {} the regex engine takes", i,
                                x.strings()[i].size(), kMaxRegexInput));
  Tensor out(DataType::kBool, x.dims());
  std::string error;
  auto match_all = [&] {
    try {
      const std::regex re(a->s, std::regex::ECMAScript);
      for (int64_t i = 0; i < x.numel(); ++i)
        out.data<bool>()[i] = std::regex_match(x.strings()[i], re);
    } catch (const std::regex_error& e) {
      error = fmt::format("pattern '{}': {}", a->s, e.what());
    } catch (const std::exception& e) {
      error = e.what();
    }
  };
  on_big_stack(match_all);
  if (!error.empty()) ctx.fail_here(error);
  ctx.set_output(0, std::move(out));
}

}  // namespace

void register_misc_string_ops(OpRegistry& r) {
  r.add("", "StringConcat")
      .versions(20)
      .inputs(2, 2)
      .shape([](InferContext& c) { infer_broadcast(c, DataType::kString); })
      .run(run_string_concat);
  r.add("", "StringSplit")
      .versions(20)
      .inputs(1, 1)
      .outputs(2, 2)
      .attr("delimiter", AttrKind::kString)
      .attr("maxsplit", AttrKind::kInt)
      .shape(infer_string_split)
      .run(run_string_split);
  r.add("", "StringNormalizer")
      .versions(10)
      .inputs(1, 1)
      .attr("case_change_action", AttrKind::kString)
      .attr("is_case_sensitive", AttrKind::kInt)
      .attr("locale", AttrKind::kString)
      .attr("stopwords", AttrKind::kStrings)
      .shape(infer_string_normalizer)
      .run(run_string_normalizer);
  r.add("", "RegexFullMatch")
      .versions(20)
      .inputs(1, 1)
      .attr("pattern", AttrKind::kString, true)
      .shape([](InferContext& c) { c.set_output(0, DataType::kBool, c.input_shape(0)); })
      .run(run_regex_full_match);
}

}  // namespace kiln
