// nn family: Einsum, reference kernel and inference (an equation parsed into labels, summed in
// the accumulation type of nn_common.h).
#include <algorithm>
#include <cmath>
#include <map>

#include "support/checked_math.h"

#include "ops/nn_common.h"

namespace kiln {
namespace {

using nn::acc_t;

// ---------------------------------------------------------------------------------------------
// Einsum.

struct EinsumSpec {
  std::vector<std::vector<int>> in;  // labels of each input's dims
  std::vector<int> out;              // labels of the output's dims
  int num_labels = 0;
};

// Labels: letters get 0..51; the dims covered by "..." get 52.. (right-aligned across inputs).
EinsumSpec parse_einsum(const Node& n, const std::string& eq_in,
                        const std::vector<int>& ranks) {
  auto bad = [&](const std::string& why) -> void {
    fail(ErrorKind::kBadModel, "{}equation '{}': {}", n.where(), eq_in, why);
  };
  std::string eq;
  for (char c : eq_in)
    if (c != ' ') eq += c;
  std::string lhs = eq, rhs;
  bool explicit_out = false;
  if (auto p = eq.find("->"); p != std::string::npos) {
    lhs = eq.substr(0, p);
    rhs = eq.substr(p + 2);
    explicit_out = true;
  }
  std::vector<std::string> terms;
  {
    size_t s = 0;
    while (true) {
      auto c = lhs.find(',', s);
      terms.push_back(lhs.substr(s, c == std::string::npos ? std::string::npos : c - s));
      if (c == std::string::npos) break;
      s = c + 1;
    }
  }
  if (terms.size() != ranks.size())
    bad(fmt::format("{} terms for {} inputs", terms.size(), ranks.size()));
  auto letter = [&](char c) -> int {
    if (c >= 'a' && c <= 'z') return c - 'a';
    if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
    bad(fmt::format("unexpected character '{}'", c));
    return -1;
  };
  // split a term into letters before / after the ellipsis
  struct Term {
    std::vector<int> pre, post;
    bool ell = false;
  };
  auto split = [&](const std::string& t) {
    Term r;
    auto e = t.find("...");
    if (e != std::string::npos) {
      r.ell = true;
      if (t.find("...", e + 3) != std::string::npos) bad("more than one ellipsis in a term");
      for (char c : t.substr(0, e)) r.pre.push_back(letter(c));
      for (char c : t.substr(e + 3)) r.post.push_back(letter(c));
    } else {
      for (char c : t) r.pre.push_back(letter(c));
    }
    return r;
  };
  EinsumSpec s;
  int ell_rank = 0;
  std::vector<Term> parsed;
  for (size_t i = 0; i < terms.size(); ++i) {
    Term t = split(terms[i]);
    const int nl = static_cast<int>(t.pre.size() + t.post.size());
    if (!t.ell && nl != ranks[i])
      bad(fmt::format("term {} has {} labels for rank {}", i, nl, ranks[i]));
    if (t.ell && nl > ranks[i])
      bad(fmt::format("term {} has {} labels for rank {}", i, nl, ranks[i]));
    if (t.ell) ell_rank = std::max(ell_rank, ranks[i] - nl);
    parsed.push_back(std::move(t));
  }
  for (size_t i = 0; i < parsed.size(); ++i) {
    const Term& t = parsed[i];
    std::vector<int> labels = t.pre;
    if (t.ell) {
      const int e = ranks[i] - static_cast<int>(t.pre.size() + t.post.size());
      for (int j = 0; j < e; ++j) labels.push_back(52 + ell_rank - e + j);
    }
    labels.insert(labels.end(), t.post.begin(), t.post.end());
    s.in.push_back(std::move(labels));
  }
  if (explicit_out) {
    Term t = split(rhs);
    s.out = t.pre;
    if (t.ell)
      for (int j = 0; j < ell_rank; ++j) s.out.push_back(52 + j);
    s.out.insert(s.out.end(), t.post.begin(), t.post.end());
    std::vector<int> seen;
    for (int l : s.out) {
      if (std::find(seen.begin(), seen.end(), l) != seen.end()) bad("output label repeated");
      seen.push_back(l);
      bool found = false;
      for (const auto& in : s.in)
        if (std::find(in.begin(), in.end(), l) != in.end()) found = true;
      if (!found) bad("output label not in any input");
    }
  } else {
    for (int j = 0; j < ell_rank; ++j) s.out.push_back(52 + j);
    std::map<int, int> count;
    for (const auto& in : s.in)
      for (int l : in)
        if (l < 52) ++count[l];
    // alphabetical: upper case letters sort before lower case ones
    std::vector<int> once;
    for (auto [l, c] : count)
      if (c == 1) once.push_back(l);
    std::sort(once.begin(), once.end(), [](int a, int b) {
      auto key = [](int l) { return l >= 26 ? l - 26 : l + 26; };
      return key(a) < key(b);
    });
    s.out.insert(s.out.end(), once.begin(), once.end());
  }
  s.num_labels = 52 + ell_rank;
  return s;
}

// Sizes of each label from the inputs' dims (1 broadcasts for ellipsis dims).
std::vector<int64_t> einsum_sizes(const Node& n, const EinsumSpec& s,
                                  const std::vector<std::vector<int64_t>>& dims) {
  std::vector<int64_t> size(s.num_labels, -1);
  for (size_t i = 0; i < s.in.size(); ++i)
    for (size_t j = 0; j < s.in[i].size(); ++j) {
      const int l = s.in[i][j];
      const int64_t d = dims[i][j];
      if (size[l] < 0 || size[l] == 1) {
        if (size[l] == 1 && l < 52 && d != 1)
          fail(ErrorKind::kRuntime, "{}label sizes differ: 1 and {}", n.where(), d);
        size[l] = d;
      } else if (d != size[l] && !(d == 1 && l >= 52)) {
        fail(ErrorKind::kRuntime, "{}label sizes differ: {} and {}", n.where(), size[l], d);
      }
    }
  return size;
}

void run_einsum(KernelContext& ctx) {
  const Node& n = ctx.node();
  const int ni = ctx.num_inputs();
  std::vector<int> ranks;
  std::vector<std::vector<int64_t>> dims;
  for (int i = 0; i < ni; ++i) {
    ranks.push_back(ctx.input(i).rank());
    dims.push_back(ctx.input(i).dims());
    if (ctx.input(i).dtype() != ctx.input(0).dtype()) ctx.fail_here("input types differ");
  }
  const auto spec = parse_einsum(n, attr_string(n, "equation", ""), ranks);
  const auto size = einsum_sizes(n, spec, dims);
  // loop labels: output labels, then the summed ones
  std::vector<int> loop = spec.out;
  for (const auto& in : spec.in)
    for (int l : in)
      if (std::find(loop.begin(), loop.end(), l) == loop.end()) loop.push_back(l);
  const int L = static_cast<int>(loop.size());
  std::vector<int64_t> lsize(L);
  for (int j = 0; j < L; ++j) lsize[j] = size[loop[j]];
  // strides: per input per loop label (repeated labels add: a diagonal), output
  std::vector<std::vector<int64_t>> st(ni, std::vector<int64_t>(L, 0));
  for (int i = 0; i < ni; ++i) {
    const auto own = strides_of(dims[i]);
    for (size_t j = 0; j < spec.in[i].size(); ++j) {
      if (dims[i][j] == 1) continue;
      const int p = static_cast<int>(std::find(loop.begin(), loop.end(), spec.in[i][j]) - loop.begin());
      st[i][p] += own[j];
    }
  }
  std::vector<int64_t> od;
  for (int l : spec.out) od.push_back(size[l]);
  const auto ost = strides_of(od);
  std::vector<int64_t> so(L, 0);
  for (size_t j = 0; j < spec.out.size(); ++j) so[j] = ost[j];
  visit<KILN_NUMERIC_TYPES>(n, ctx.input(0).dtype(), [&]<typename T>() {
    using A = acc_t<T>;
    std::vector<nn::View<A>> v;
    for (int i = 0; i < ni; ++i) v.push_back(nn::view_as<A>(n, ctx.input(i)));
    Tensor y(ctx.input(0).dtype(), od);
    std::vector<A> acc(static_cast<size_t>(y.numel()), A(0));
    const auto total_opt = checked_product(lsize);
    if (!total_opt) ctx.fail_here("the equation's index space overflows int64");
    const int64_t total = *total_opt;
    if (total > 0) {
      std::vector<int64_t> idx(L, 0), off(ni, 0);
      int64_t oo = 0;
      for (int64_t it = 0; it < total; ++it) {
        A prod = A(1);
        for (int i = 0; i < ni; ++i) prod = prod * v[i][off[i]];
        acc[oo] += prod;
        for (int d = L - 1; d >= 0; --d) {
          ++idx[d];
          for (int i = 0; i < ni; ++i) off[i] += st[i][d];
          oo += so[d];
          if (idx[d] < lsize[d]) break;
          for (int i = 0; i < ni; ++i) off[i] -= st[i][d] * lsize[d];
          oo -= so[d] * lsize[d];
          idx[d] = 0;
        }
      }
    }
    T* yp = y.data<T>();
    for (size_t i = 0; i < acc.size(); ++i) yp[i] = nn::from_num<T>(acc[i]);
    ctx.set_output(0, std::move(y));
  });
}

void infer_einsum(InferContext& ctx) {
  const Node& n = ctx.node();
  const DataType dt = ctx.input_dtype(0);
  std::vector<int> ranks;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const int r = ctx.input_rank(i);
    if (r < 0) {
      ctx.set_output(0, dt, std::nullopt);
      return;
    }
    ranks.push_back(r);
  }
  const auto spec = parse_einsum(n, attr_string(n, "equation", ""), ranks);
  Shape out;
  for (int l : spec.out) {
    Dim d;
    bool set = false;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Shape& s = *ctx.input_shape(i);
      for (size_t j = 0; j < spec.in[i].size(); ++j) {
        if (spec.in[i][j] != l) continue;
        const Dim& c = s[j];
        if (!set || (d.is_known() && d.value() == 1 && l >= 52)) {
          d = c;
          set = true;
        } else if (d.is_unknown() && !c.is_unknown() && !(c.is_known() && c.value() == 1)) {
          d = c;
        }
      }
    }
    out.push_back(d);
  }
  ctx.set_output(0, dt, out);
}

}  // namespace

void register_nn_einsum_ops(OpRegistry& r) {
  r.add("", "Einsum")
      .versions(12)
      .inputs(1, -1)
      .outputs(1, 1)
      .attr("equation", AttrKind::kString, true)
      .shape(infer_einsum)
      .run(run_einsum);
}

}  // namespace kiln
