// ai.onnx.ml ops the conformance suite uses: ArrayFeatureExtractor, Binarizer, LabelEncoder,
// TreeEnsemble.
#include <cmath>
#include <cstring>
#include <map>

#include "ops/kernel_util.h"
#include "support/error.h"

namespace kiln {

namespace {

constexpr const char* kMl = "ai.onnx.ml";

// Copies element `from` of src to element `to` of dst (same dtype).
void copy_one(Tensor& dst, int64_t to, const Tensor& src, int64_t from) {
  if (src.dtype() == DataType::kString) {
    dst.strings()[to] = src.strings()[from];
    return;
  }
  const size_t es = dtype_size(src.dtype());
  std::memcpy(static_cast<char*>(dst.raw()) + to * es,
              static_cast<const char*>(src.raw()) + from * es, es);
}

// ---------------------------------------------------------------------------------------------
// ArrayFeatureExtractor(X [..., N], Y indices) -> X[..., Y] ([1, k] for a 1-D X).

void infer_array_feature_extractor(InferContext& ctx) {
  const auto& xs = ctx.input_shape(0);
  Dim k;
  if (const auto& ys = ctx.input_shape(1)) {
    k = 1;
    for (const Dim& d : *ys) k = k * d;
  }
  std::optional<Shape> out;
  if (xs) {
    if (xs->empty()) ctx.fail_here("X must have rank >= 1");
    out = xs->size() == 1 ? Shape{Dim(1), k} : *xs;
    out->back() = k;
  }
  ctx.set_output(0, ctx.input_dtype(0), out);
}

void run_array_feature_extractor(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  if (x.rank() < 1) ctx.fail_here("X must have rank >= 1");
  const int64_t N = x.dims().back();
  const int64_t k = y.numel();
  std::vector<int64_t> od = x.rank() == 1 ? std::vector<int64_t>{1, k} : x.dims();
  od.back() = k;
  Tensor out(x.dtype(), od);
  const int64_t rows = N == 0 ? 0 : x.numel() / N;
  for (int64_t j = 0; j < k; ++j) {
    const int64_t ix = y.get_i64(j);
    if (ix < 0 || ix >= N) ctx.fail_here(fmt::format("index {} out of range [0, {})", ix, N));
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; ++j) copy_one(out, r * k + j, x, r * N + y.get_i64(j));
  ctx.set_output(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------

void run_binarizer(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const double th = attr_float(ctx.node(), "threshold", 0.0f);
  Tensor out(x.dtype(), x.dims());
  visit<float, double, int64_t, int32_t>(ctx.node(), x.dtype(), [&]<typename T>() {
    const T* px = x.data<T>();
    T* po = out.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) po[i] = static_cast<double>(px[i]) > th ? T(1) : T(0);
  });
  ctx.set_output(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// LabelEncoder. Opset 2+: keys_* / values_* (or keys_tensor / values_tensor, opset 4) with a
// default_* (or default_tensor). Opset 1: classes_strings maps strings <-> their index.

struct Mapping {
  Tensor keys, values, dflt;  // dflt has one element, values' dtype
};

Tensor strings_tensor(const std::vector<std::string>& v) {
  Tensor t(DataType::kString, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.strings()[i] = v[i];
  return t;
}
Tensor floats_tensor(const std::vector<float>& v) {
  Tensor t(DataType::kFloat, {static_cast<int64_t>(v.size())});
  if (!v.empty()) std::memcpy(t.raw(), v.data(), v.size() * sizeof(float));
  return t;
}

Tensor pick(const Node& n, const char* prefix) {
  const std::string p = prefix;
  if (const Attribute* a = n.attr(p + "_strings")) return strings_tensor(a->strings);
  if (const Attribute* a = n.attr(p + "_int64s")) return Tensor::from_int64s(a->ints);
  if (const Attribute* a = n.attr(p + "_floats")) return floats_tensor(a->floats);
  if (const Tensor* t = attr_tensor_opt(n, p + "_tensor")) return t->reshaped({t->numel()});
  return {};
}

Mapping label_mapping(const Node& n) {
  Mapping m;
  m.keys = pick(n, "keys");
  m.values = pick(n, "values");
  KILN_CHECK(m.keys.defined() && m.values.defined(), ErrorKind::kBadModel,
             "{}LabelEncoder needs keys and values", n.where());
  KILN_CHECK(m.keys.numel() == m.values.numel(), ErrorKind::kBadModel, "{}{} keys but {} values",
             n.where(), m.keys.numel(), m.values.numel());
  if (const Tensor* t = attr_tensor_opt(n, "default_tensor")) {
    KILN_CHECK(t->numel() == 1 && t->dtype() == m.values.dtype(), ErrorKind::kBadModel,
               "{}default_tensor must be one value of the values' type", n.where());
    m.dflt = t->reshaped({1});
  } else {
    m.dflt = Tensor(m.values.dtype(), {1});
    switch (m.values.dtype()) {
      case DataType::kString:
        m.dflt.strings()[0] = attr_string(n, "default_string", "_Unused");
        break;
      case DataType::kInt64:
        m.dflt.data<int64_t>()[0] = attr_int(n, "default_int64", -1);
        break;
      case DataType::kFloat:
        m.dflt.data<float>()[0] = attr_float(n, "default_float", -0.0f);
        break;
      default:
        break;  // zero
    }
  }
  return m;
}

DataType label_out_dtype(const Node& n, DataType in) {
  if (n.attr("classes_strings"))
    return in == DataType::kString ? DataType::kInt64 : DataType::kString;
  if (n.attr("values_strings")) return DataType::kString;
  if (n.attr("values_int64s")) return DataType::kInt64;
  if (n.attr("values_floats")) return DataType::kFloat;
  if (const Tensor* t = attr_tensor_opt(n, "values_tensor")) return t->dtype();
  fail(ErrorKind::kBadModel, "{}LabelEncoder has no values", n.where());
}

void run_label_encoder(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  if (const Attribute* cls = n.attr("classes_strings")) {
    const auto& classes = cls->strings;
    if (x.dtype() == DataType::kString) {
      std::map<std::string, int64_t> ix;
      for (size_t i = 0; i < classes.size(); ++i) ix.emplace(classes[i], static_cast<int64_t>(i));
      const int64_t d = attr_int(n, "default_int64", -1);
      Tensor out(DataType::kInt64, x.dims());
      for (int64_t i = 0; i < x.numel(); ++i) {
        auto it = ix.find(x.strings()[i]);
        out.data<int64_t>()[i] = it == ix.end() ? d : it->second;
      }
      ctx.set_output(0, std::move(out));
    } else {
      const std::string d = attr_string(n, "default_string", "_Unused");
      Tensor out(DataType::kString, x.dims());
      for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t v = x.get_i64(i);
        out.strings()[i] = v >= 0 && v < static_cast<int64_t>(classes.size()) ? classes[v] : d;
      }
      ctx.set_output(0, std::move(out));
    }
    return;
  }
  const Mapping m = label_mapping(n);
  const bool str_in = x.dtype() == DataType::kString;
  if (str_in != (m.keys.dtype() == DataType::kString))
    ctx.fail_here(fmt::format("input of type {} does not fit keys of type {}",
                              dtype_name(x.dtype()), dtype_name(m.keys.dtype())));
  Tensor out(m.values.dtype(), x.dims());
  if (str_in) {
    std::map<std::string, int64_t> ix;
    for (int64_t i = 0; i < m.keys.numel(); ++i) ix.emplace(m.keys.strings()[i], i);
    for (int64_t i = 0; i < x.numel(); ++i) {
      auto it = ix.find(x.strings()[i]);
      if (it == ix.end())
        copy_one(out, i, m.dflt, 0);
      else
        copy_one(out, i, m.values, it->second);
    }
  } else if (is_float(x.dtype()) || is_float(m.keys.dtype())) {
    std::map<double, int64_t> ix;
    int64_t nan_ix = -1;
    for (int64_t i = 0; i < m.keys.numel(); ++i) {
      const double k = m.keys.get_f64(i);
      if (std::isnan(k)) {
        if (nan_ix < 0) nan_ix = i;
      } else {
        ix.emplace(k, i);
      }
    }
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double v = x.get_f64(i);
      int64_t hit = -1;
      if (std::isnan(v))
        hit = nan_ix;
      else if (auto it = ix.find(v); it != ix.end())
        hit = it->second;
      if (hit < 0)
        copy_one(out, i, m.dflt, 0);
      else
        copy_one(out, i, m.values, hit);
    }
  } else {
    std::map<int64_t, int64_t> ix;
    for (int64_t i = 0; i < m.keys.numel(); ++i) ix.emplace(m.keys.get_i64(i), i);
    for (int64_t i = 0; i < x.numel(); ++i) {
      auto it = ix.find(x.get_i64(i));
      if (it == ix.end())
        copy_one(out, i, m.dflt, 0);
      else
        copy_one(out, i, m.values, it->second);
    }
  }
  ctx.set_output(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// TreeEnsemble (ai.onnx.ml 5)

enum class Mode { kLeq, kLt, kGte, kGt, kEq, kNeq, kMember };

struct Ensemble {
  std::vector<double> splits;
  std::vector<int64_t> feature, true_id, false_id;
  std::vector<uint8_t> true_leaf, false_leaf, missing_true;
  std::vector<Mode> modes;
  std::vector<std::vector<double>> members;  // per node (BRANCH_MEMBER only)
  std::vector<int64_t> roots, leaf_target;
  std::vector<double> leaf_weight;
  int64_t n_targets = 0;
  int aggregate = 1, post = 0;
};

Ensemble load_ensemble(const Node& n) {
  Ensemble e;
  const Tensor& splits = attr_tensor_req(n, "nodes_splits");
  const Tensor& modes = attr_tensor_req(n, "nodes_modes");
  const Tensor& weights = attr_tensor_req(n, "leaf_weights");
  const size_t count = static_cast<size_t>(splits.numel());
  for (int64_t i = 0; i < splits.numel(); ++i) e.splits.push_back(splits.get_f64(i));
  e.feature = attr_ints(n, "nodes_featureids");
  e.true_id = attr_ints(n, "nodes_truenodeids");
  e.false_id = attr_ints(n, "nodes_falsenodeids");
  auto flags = [&](const char* name) {
    std::vector<uint8_t> f;
    for (int64_t v : attr_ints(n, name)) f.push_back(v != 0);
    return f;
  };
  e.true_leaf = flags("nodes_trueleafs");
  e.false_leaf = flags("nodes_falseleafs");
  e.missing_true = flags("nodes_missing_value_tracks_true");
  if (e.missing_true.empty()) e.missing_true.assign(count, 0);
  KILN_CHECK(static_cast<size_t>(modes.numel()) == count && e.feature.size() == count &&
                 e.true_id.size() == count && e.false_id.size() == count &&
                 e.true_leaf.size() == count && e.false_leaf.size() == count &&
                 e.missing_true.size() == count,
             ErrorKind::kBadModel, "{}the nodes_* attributes differ in length", n.where());
  for (int64_t i = 0; i < modes.numel(); ++i) {
    const int64_t m = modes.get_i64(i);
    KILN_CHECK(m >= 0 && m <= 6, ErrorKind::kBadModel, "{}unknown node mode {}", n.where(), m);
    e.modes.push_back(static_cast<Mode>(m));
  }
  e.members.resize(count);
  if (const Tensor* mv = attr_tensor_opt(n, "membership_values")) {
    int64_t pos = 0;
    for (size_t i = 0; i < count; ++i) {
      if (e.modes[i] != Mode::kMember) continue;
      while (pos < mv->numel() && !std::isnan(mv->get_f64(pos)))
        e.members[i].push_back(mv->get_f64(pos++));
      ++pos;  // the NaN separator
    }
  }
  e.roots = attr_ints(n, "tree_roots");
  e.leaf_target = attr_ints(n, "leaf_targetids");
  for (int64_t i = 0; i < weights.numel(); ++i) e.leaf_weight.push_back(weights.get_f64(i));
  KILN_CHECK(e.leaf_target.size() == e.leaf_weight.size(), ErrorKind::kBadModel,
             "{}leaf_targetids and leaf_weights differ in length", n.where());
  e.n_targets = attr_int_req(n, "n_targets");
  e.aggregate = static_cast<int>(attr_int(n, "aggregate_function", 1));
  e.post = static_cast<int>(attr_int(n, "post_transform", 0));
  KILN_CHECK(e.aggregate >= 0 && e.aggregate <= 3, ErrorKind::kBadModel,
             "{}unknown aggregate_function {}", n.where(), e.aggregate);
  KILN_CHECK(e.post >= 0 && e.post <= 4, ErrorKind::kBadModel, "{}unknown post_transform {}",
             n.where(), e.post);
  for (int64_t t : e.leaf_target)
    KILN_CHECK(t >= 0 && t < e.n_targets, ErrorKind::kBadModel, "{}leaf target {} out of range",
               n.where(), t);
  return e;
}

double probit(double p) {
  // sqrt(2) * erfinv(2p - 1), by Newton steps on erf from a rough start
  const double y = 2 * p - 1;
  if (y <= -1) return -INFINITY;
  if (y >= 1) return INFINITY;
  const double a = 0.147, l = std::log(1 - y * y), t = 2 / (M_PI * a) + l / 2;
  double x = std::copysign(std::sqrt(std::sqrt(t * t - l / a) - t), y);
  for (int i = 0; i < 3; ++i) x -= (std::erf(x) - y) / (2 / std::sqrt(M_PI) * std::exp(-x * x));
  return std::sqrt(2.0) * x;
}

void run_tree_ensemble(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  if (x.rank() != 1 && x.rank() != 2) ctx.fail_here("X must be [N, F] or [F]");
  const Ensemble e = load_ensemble(n);
  const int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
  const int64_t F = x.dims().back();
  const int64_t nodes = static_cast<int64_t>(e.splits.size());
  const int64_t T = e.n_targets;
  Tensor out(x.dtype(), {rows, T});
  std::vector<double> acc(T);
  std::vector<uint8_t> hit(T);
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(acc.begin(), acc.end(), 0.0);
    std::fill(hit.begin(), hit.end(), 0);
    for (int64_t root : e.roots) {
      int64_t id = root;
      bool leaf = false;
      for (int64_t steps = 0; !leaf; ++steps) {
        if (id < 0 || id >= nodes || steps > nodes)
          ctx.fail_here(fmt::format("tree walk reached bad node {}", id));
        const int64_t f = e.feature[id];
        if (f < 0 || f >= F) ctx.fail_here(fmt::format("feature {} out of range [0, {})", f, F));
        const double v = x.get_f64(r * F + f), s = e.splits[id];
        bool cond;
        if (std::isnan(v) && e.missing_true[id]) {
          cond = true;
        } else {
          switch (e.modes[id]) {
            case Mode::kLeq:
              cond = v <= s;
              break;
            case Mode::kLt:
              cond = v < s;
              break;
            case Mode::kGte:
              cond = v >= s;
              break;
            case Mode::kGt:
              cond = v > s;
              break;
            case Mode::kEq:
              cond = v == s;
              break;
            case Mode::kNeq:
              cond = v != s;
              break;
            default:
              cond =
                  std::find(e.members[id].begin(), e.members[id].end(), v) != e.members[id].end();
          }
        }
        leaf = cond ? e.true_leaf[id] : e.false_leaf[id];
        id = cond ? e.true_id[id] : e.false_id[id];
      }
      if (id < 0 || id >= static_cast<int64_t>(e.leaf_target.size()))
        ctx.fail_here(fmt::format("leaf {} out of range", id));
      const int64_t t = e.leaf_target[id];
      const double w = e.leaf_weight[id];
      switch (e.aggregate) {
        case 2:
          acc[t] = hit[t] ? std::min(acc[t], w) : w;
          break;
        case 3:
          acc[t] = hit[t] ? std::max(acc[t], w) : w;
          break;
        default:
          acc[t] += w;
      }
      hit[t] = 1;
    }
    if (e.aggregate == 0 && !e.roots.empty())
      for (double& a : acc) a /= static_cast<double>(e.roots.size());
    switch (e.post) {
      case 1:
      case 3: {  // softmax; SOFTMAX_ZERO leaves zeros at zero
        double mx = -INFINITY, sum = 0;
        for (double a : acc)
          if (e.post == 1 || a != 0) mx = std::max(mx, a);
        for (double& a : acc) {
          if (e.post == 3 && a == 0) continue;
          a = std::exp(a - mx);
          sum += a;
        }
        for (double& a : acc)
          if (sum > 0 && !(e.post == 3 && a == 0)) a /= sum;
        break;
      }
      case 2:
        for (double& a : acc) a = 1 / (1 + std::exp(-a));
        break;
      case 4:
        for (double& a : acc) a = probit(a);
        break;
      default:
        break;
    }
    for (int64_t t = 0; t < T; ++t) out.set_f64(r * T + t, acc[t]);
  }
  ctx.set_output(0, std::move(out));
}

}  // namespace

void register_misc_ml_ops(OpRegistry& r) {
  r.add(kMl, "ArrayFeatureExtractor")
      .versions(1)
      .inputs(2, 2)
      .shape(infer_array_feature_extractor)
      .run(run_array_feature_extractor);
  r.add(kMl, "Binarizer")
      .versions(1)
      .inputs(1, 1)
      .attr("threshold", AttrKind::kFloat)
      .shape([](InferContext& c) { infer_same_as_input(c); })
      .run(run_binarizer);
  auto& le = r.add(kMl, "LabelEncoder").versions(1).inputs(1, 1);
  for (const char* a : {"keys_strings", "values_strings", "classes_strings"})
    le.attr(a, AttrKind::kStrings);
  for (const char* a : {"keys_int64s", "values_int64s"}) le.attr(a, AttrKind::kInts);
  for (const char* a : {"keys_floats", "values_floats"}) le.attr(a, AttrKind::kFloats);
  for (const char* a : {"keys_tensor", "values_tensor", "default_tensor"})
    le.attr(a, AttrKind::kTensor);
  le.attr("default_string", AttrKind::kString)
      .attr("default_int64", AttrKind::kInt)
      .attr("default_float", AttrKind::kFloat)
      .shape([](InferContext& c) {
        c.set_output(0, label_out_dtype(c.node(), c.input_dtype(0)), c.input_shape(0));
      })
      .run(run_label_encoder);
  auto& te = r.add(kMl, "TreeEnsemble").versions(5).inputs(1, 1);
  for (const char* a : {"aggregate_function", "n_targets", "post_transform"})
    te.attr(a, AttrKind::kInt, std::string(a) == "n_targets");
  for (const char* a :
       {"leaf_targetids", "nodes_falseleafs", "nodes_falsenodeids", "nodes_featureids",
        "nodes_missing_value_tracks_true", "nodes_trueleafs", "nodes_truenodeids", "tree_roots"})
    te.attr(a, AttrKind::kInts);
  for (const char* a :
       {"leaf_weights", "membership_values", "nodes_hitrates", "nodes_modes", "nodes_splits"})
    te.attr(a, AttrKind::kTensor);
  te.shape([](InferContext& c) {
      const auto& s = c.input_shape(0);
      const Dim rows = s && s->size() == 2 ? (*s)[0] : s && s->size() == 1 ? Dim(1) : Dim();
      c.set_output(0, c.input_dtype(0), Shape{rows, Dim(attr_int_req(c.node(), "n_targets"))});
    }).run(run_tree_ensemble);
}

}  // namespace kiln
