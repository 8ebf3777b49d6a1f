// Chains of the same op merged into one: Transpose∘Transpose, Reshape∘Reshape,
// Unsqueeze∘Unsqueeze, Squeeze∘Squeeze, Concat∘Concat on the same axis, Slice∘Slice (constant
// parameters), Cast∘Cast where the middle type holds every value of the input's exactly.
#include <algorithm>
#include <array>
#include <limits>
#include <map>

#include "opt/graph_edit.h"
#include "opt/passes.h"

namespace kiln::opt {

namespace {

// The producer of input i of n when it is the same op in the same domain.
Node* same_op_producer(const Node& n, int i) {
  if (!n.has_input(i)) return nullptr;
  Node* p = n.inputs[i]->producer;
  return p && p->op_type == n.op_type && p->domain == n.domain && p->owner == n.owner ? p : nullptr;
}

int64_t rank_of(const Value* v) {
  return v && v->type.is_tensor() && v->type.shape ? static_cast<int64_t>(v->type.shape->size())
                                                   : -1;
}

// Axes normalized to [0, rank); empty when one is out of range.
std::vector<int64_t> normalized_axes(std::vector<int64_t> axes, int64_t rank) {
  for (int64_t& a : axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return {};
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

// How exactly a type holds numbers: integers by value bits, floats by mantissa and exponent bits.
struct NumberFormat {
  char kind;  // 'b'ool, 'u'nsigned, 'i'nteger (signed), 'f'loat
  int bits;   // value bits of an integer (sign excluded), mantissa bits of a float (implicit 1 in)
  int exponent_bits = 0;
};

std::optional<NumberFormat> number_format(DataType t) {
  switch (t) {
    case DataType::kBool: return NumberFormat{'b', 1};
    case DataType::kUInt8: return NumberFormat{'u', 8};
    case DataType::kUInt16: return NumberFormat{'u', 16};
    case DataType::kUInt32: return NumberFormat{'u', 32};
    case DataType::kUInt64: return NumberFormat{'u', 64};
    case DataType::kInt8: return NumberFormat{'i', 7};
    case DataType::kInt16: return NumberFormat{'i', 15};
    case DataType::kInt32: return NumberFormat{'i', 31};
    case DataType::kInt64: return NumberFormat{'i', 63};
    case DataType::kFloat16: return NumberFormat{'f', 11, 5};
    case DataType::kBFloat16: return NumberFormat{'f', 8, 8};
    case DataType::kFloat: return NumberFormat{'f', 24, 8};
    case DataType::kDouble: return NumberFormat{'f', 53, 11};
    default: return std::nullopt;  // strings, complex, 8- and 4-bit floats (saturation), sub-byte
  }
}

// Every value of `from` is a value of `to`: casting through `to` changes nothing.
bool holds_exactly(DataType from, DataType to) {
  if (from == to) return true;
  auto a = number_format(from), b = number_format(to);
  if (!a || !b) return false;
  if (a->kind == 'b') return true;  // 0 and 1
  switch (b->kind) {
    case 'b': return false;
    case 'u': return a->kind == 'u' && b->bits >= a->bits;
    case 'i': return (a->kind == 'u' || a->kind == 'i') && b->bits >= a->bits;
    default:  // a float
      if (a->kind == 'f') return b->bits >= a->bits && b->exponent_bits >= a->exponent_bits;
      return b->bits >= a->bits;
  }
}

int64_t saturating_add(int64_t a, int64_t b) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (a > 0 && b > kMax - a) return kMax;
  if (a < 0 && b < std::numeric_limits<int64_t>::min() - a) return std::numeric_limits<int64_t>::min();
  return a + b;
}

// A Slice's constant parameters, by axis (normalized): {start, end, step}.
using SliceRanges = std::map<int64_t, std::array<int64_t, 3>>;

std::optional<SliceRanges> slice_ranges(const Node& s, int64_t rank, const InferFacts& f) {
  const Tensor* starts = constant_of(s.has_input(1) ? s.inputs[1] : nullptr, f);
  const Tensor* ends = constant_of(s.has_input(2) ? s.inputs[2] : nullptr, f);
  const Tensor* axes = s.has_input(3) ? constant_of(s.inputs[3], f) : nullptr;
  const Tensor* steps = s.has_input(4) ? constant_of(s.inputs[4], f) : nullptr;
  if (!starts || !ends || (s.has_input(3) && !axes) || (s.has_input(4) && !steps) || rank < 0)
    return std::nullopt;
  const auto b = starts->to_int64s(), e = ends->to_int64s();
  std::vector<int64_t> a = axes ? axes->to_int64s() : std::vector<int64_t>{};
  if (!axes)
    for (size_t i = 0; i < b.size(); ++i) a.push_back(static_cast<int64_t>(i));
  const auto st = steps ? steps->to_int64s() : std::vector<int64_t>(b.size(), 1);
  if (e.size() != b.size() || a.size() != b.size() || st.size() != b.size()) return std::nullopt;
  SliceRanges out;
  for (size_t i = 0; i < b.size(); ++i) {
    const int64_t axis = a[i] < 0 ? a[i] + rank : a[i];
    if (axis < 0 || axis >= rank || out.contains(axis)) return std::nullopt;
    out[axis] = {b[i], e[i], st[i]};
  }
  return out;
}

// start or end of a step-1 slice of a dim of size `dim` (-1: unknown) as a non-negative index;
// nullopt when it counts from the end and the dim is unknown.
std::optional<int64_t> from_front(int64_t i, int64_t dim) {
  if (i >= 0) return i;
  if (dim < 0) return std::nullopt;
  return std::max<int64_t>(0, i + dim);
}

int64_t dim_or_unknown(const Value* v, int64_t axis) {
  const auto& s = v->type.shape;
  return s && axis < static_cast<int64_t>(s->size()) && (*s)[axis].is_known() ? (*s)[axis].value() : -1;
}

class MergeChains final : public GraphPass {
 public:
  std::string_view name() const override { return "merge-chains"; }
  std::string_view summary() const override {
    return "merges consecutive Transposes, Reshapes, Squeezes, Unsqueezes, Concats, Slices and "
           "exact Casts";
  }

 protected:
  void run_graph(Graph& g, const Model& m, PassContext& ctx) const override {
    for (const auto& up : g.nodes()) {
      Node* n = up.get();
      if (!n->domain.empty()) continue;
      Node* inner = same_op_producer(*n, 0);
      if (!inner) continue;
      std::string what;
      if (n->op_type == "Transpose") what = transpose(g, *n, *inner, ctx);
      else if (n->op_type == "Reshape") what = reshape(g, *n, *inner, ctx);
      else if (n->op_type == "Unsqueeze" || n->op_type == "Squeeze") what = squeeze(g, *n, *inner, ctx);
      else if (n->op_type == "Slice") what = slice(g, *n, *inner, ctx);
      else if (n->op_type == "Cast") what = cast(g, *n, *inner, ctx);
      else if (n->op_type == "Concat") continue;  // below: any input, not only the first
      if (!what.empty()) ctx.applied(what, {node_label(*inner), node_label(*n)}, {node_label(*n)});
    }
    for (const auto& up : g.nodes()) {
      Node* n = up.get();
      if (n->op_type == "Concat" && n->domain.empty()) concat(g, *n, ctx);
    }
  }

 private:
  // n now reads inner's input; inner goes when nothing else reads it (dce).
  static void bypass(Graph& g, Node& n, const Node& inner) { g.set_input(&n, 0, inner.inputs[0]); }

  std::string transpose(Graph& g, Node& n, const Node& inner, PassContext& ctx) const {
    auto p1 = attr_ints(inner, "perm"), p2 = attr_ints(n, "perm");
    if (p1.empty() || p2.empty() || p1.size() != p2.size()) {
      ctx.near_miss(n, "Transpose after Transpose, but a perm is implicit");
      return {};
    }
    if (!ctx.allow()) return {};
    std::vector<int64_t> q(p2.size());
    for (size_t i = 0; i < q.size(); ++i) q[i] = p1[p2[i]];
    n.attr("perm")->ints = q;
    bypass(g, n, inner);
    return "two Transposes merged";
  }

  std::string reshape(Graph& g, Node& n, const Node& inner, PassContext& ctx) const {
    const Tensor* shape = constant_of(n.inputs[1], ctx.facts());
    if (!shape) return {};
    const bool allowzero = attr_int(n, "allowzero") != 0;
    if (!allowzero)
      for (int64_t d : shape->to_int64s())
        if (d == 0) {
          ctx.near_miss(n, "Reshape after Reshape, but the target copies a dim (0)");
          return {};
        }
    if (!ctx.allow()) return {};
    bypass(g, n, inner);
    return "two Reshapes merged";
  }

  // Unsqueeze(Unsqueeze(x, a1), a2) -> Unsqueeze(x, a); Squeeze likewise. Axes are inputs.
  std::string squeeze(Graph& g, Node& n, const Node& inner, PassContext& ctx) const {
    const bool unsqueeze = n.op_type == "Unsqueeze";
    const Tensor* a1 = constant_of(inner.has_input(1) ? inner.inputs[1] : nullptr, ctx.facts());
    const Tensor* a2 = constant_of(n.has_input(1) ? n.inputs[1] : nullptr, ctx.facts());
    const int64_t r0 = rank_of(inner.inputs[0]), r1 = rank_of(n.inputs[0]), r2 = rank_of(n.outputs[0]);
    if (!a1 || !a2 || r0 < 0 || r1 < 0 || r2 < 0) return {};
    // Simulate: which dims of the final tensor are the original ones (true) or inserted ones.
    std::vector<int64_t> axes;
    if (unsqueeze) {
      auto x1 = normalized_axes(a1->to_int64s(), r1), x2 = normalized_axes(a2->to_int64s(), r2);
      if (x1.empty() || x2.empty()) return {};
      std::vector<bool> mid(r1, true), fin;
      for (int64_t a : x1) mid[a] = false;
      size_t k = 0;
      for (int64_t i = 0; i < r2; ++i)
        fin.push_back(std::binary_search(x2.begin(), x2.end(), i) ? false : mid[k++]);
      for (int64_t i = 0; i < r2; ++i)
        if (!fin[i]) axes.push_back(i);
    } else {
      auto x1 = normalized_axes(a1->to_int64s(), r0), x2 = normalized_axes(a2->to_int64s(), r1);
      if (x1.empty() || x2.empty()) return {};
      std::vector<int64_t> mid;  // original index of each dim after the first squeeze
      for (int64_t i = 0; i < r0; ++i)
        if (!std::binary_search(x1.begin(), x1.end(), i)) mid.push_back(i);
      axes = x1;
      for (int64_t a : x2) axes.push_back(mid[a]);
      std::sort(axes.begin(), axes.end());
    }
    if (!ctx.allow()) return {};
    Value* c = add_initializer(g, n.inputs[1]->name + "_merged", Tensor::from_int64s(axes));
    g.set_input(&n, 1, c);
    bypass(g, n, inner);
    return fmt::format("two {}s merged", n.op_type);
  }

  // Slice(Slice(x)) -> one Slice: disjoint axes are united; on a shared axis two step-1 ranges
  // compose (start s1 + s2, end min(e1, s1 + e2), indices from the end resolved by known dims).
  std::string slice(Graph& g, Node& n, const Node& inner, PassContext& ctx) const {
    const int64_t rank = rank_of(n.inputs[0]);
    auto r1 = slice_ranges(inner, rank, ctx.facts()), r2 = slice_ranges(n, rank, ctx.facts());
    if (!r1 || !r2) {
      ctx.near_miss(n, "Slice after Slice, but their parameters are not constants");
      return {};
    }
    SliceRanges merged = *r1;
    for (const auto& [axis, r] : *r2) {
      auto it = merged.find(axis);
      if (it == merged.end()) {
        merged[axis] = r;
        continue;
      }
      const auto [s1, e1, st1] = it->second;
      const auto [s2, e2, st2] = r;
      const auto b1 = from_front(s1, dim_or_unknown(inner.inputs[0], axis)),
                 f1 = from_front(e1, dim_or_unknown(inner.inputs[0], axis)),
                 b2 = from_front(s2, dim_or_unknown(n.inputs[0], axis)),
                 f2 = from_front(e2, dim_or_unknown(n.inputs[0], axis));
      if (st1 != 1 || st2 != 1) {
        ctx.near_miss(n, fmt::format("Slice after Slice on axis {}, but a step is not 1", axis));
        return {};
      }
      if (!b1 || !f1 || !b2 || !f2) {
        ctx.near_miss(n, fmt::format("Slice after Slice on axis {}, but an index counts from the "
                                     "end of a dim that is not known", axis));
        return {};
      }
      it->second = {saturating_add(*b1, *b2), std::min(*f1, saturating_add(*b1, *f2)), 1};
    }
    if (!ctx.allow()) return {};
    std::vector<int64_t> starts, ends, axes, steps;
    for (const auto& [axis, r] : merged) {
      axes.push_back(axis);
      starts.push_back(r[0]);
      ends.push_back(r[1]);
      steps.push_back(r[2]);
    }
    const std::string base = node_label(n);
    const std::vector<int64_t>* params[] = {&starts, &ends, &axes, &steps};
    const char* names[] = {"_starts", "_ends", "_axes", "_steps"};
    for (int i = 0; i < 4; ++i)
      g.set_input(&n, i + 1, add_initializer(g, base + names[i], Tensor::from_int64s(*params[i])));
    bypass(g, n, inner);
    return "two Slices merged";
  }

  // Cast(Cast(x, to=mid), to=out) -> Cast(x, to=out) when mid holds every value of x's type.
  std::string cast(Graph& g, Node& n, const Node& inner, PassContext& ctx) const {
    const DataType from = inner.inputs[0]->type.elem, mid = inner.outputs[0]->type.elem;
    if (from == DataType::kUndefined || !inner.inputs[0]->type.is_tensor()) return {};
    if (!holds_exactly(from, mid)) {
      ctx.near_miss(n, fmt::format("Cast after Cast, but {} does not hold every {} value",
                                   dtype_name(mid), dtype_name(from)));
      return {};
    }
    if (!ctx.allow()) return {};
    bypass(g, n, inner);
    return "two Casts merged";
  }

  void concat(Graph& g, Node& n, PassContext& ctx) const {
    const int64_t rank = rank_of(n.outputs[0]);
    if (rank < 0) return;
    auto axis_of = [&](const Node& c) {
      int64_t a = attr_int(c, "axis", 0);
      return a < 0 ? a + rank : a;
    };
    std::vector<Value*> inputs;
    std::vector<std::string> merged;
    for (Value* v : n.inputs) {
      Node* p = v ? v->producer : nullptr;
      if (p && p->op_type == "Concat" && p->domain.empty() && p->owner == &g &&
          axis_of(*p) == axis_of(n) && single_consumer(g, v) == &n && ctx.allow()) {
        inputs.insert(inputs.end(), p->inputs.begin(), p->inputs.end());
        merged.push_back(node_label(*p));
      } else {
        inputs.push_back(v);
      }
    }
    if (merged.empty()) return;
    for (int i = n.num_inputs(); i-- > 0;) g.set_input(&n, i, nullptr);
    n.inputs.clear();
    for (size_t i = 0; i < inputs.size(); ++i) g.set_input(&n, static_cast<int>(i), inputs[i]);
    merged.push_back(node_label(n));
    ctx.applied("Concats on the same axis merged", merged, {node_label(n)});
  }
};

}  // namespace

std::unique_ptr<Pass> make_merge_chains() { return std::make_unique<MergeChains>(); }

}  // namespace kiln::opt
