// Linear layers absorb what follows them: Conv/ConvTranspose + BatchNormalization, Conv/Gemm/MatMul
// + per-channel Mul/Add, Pad into Conv, MatMul + Add -> Gemm, Transpose into Gemm.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "opt/graph_edit.h"
#include "opt/passes.h"

namespace kiln::opt {

namespace {

// The values of constant c broadcast along `axis` of a rank-`rank` tensor with n entries there
// (every other dim of c must be 1). nullopt when c is not such a constant.
std::optional<std::vector<double>> per_channel(const Tensor* c, int64_t rank, int64_t axis,
                                               int64_t n) {
  if (!c || c->dtype() == DataType::kString || c->rank() > rank) return std::nullopt;
  const int64_t offset = rank - c->rank();
  bool along = false;
  for (int64_t j = 0; j < c->rank(); ++j) {
    const int64_t d = c->dim(static_cast<int>(j));
    if (j + offset == axis && d == n) along = true;
    else if (d != 1) return std::nullopt;
  }
  std::vector<double> out(n);
  for (int64_t k = 0; k < n; ++k) out[k] = c->get_f64(along ? k : 0);
  return out;
}

// A Conv or ConvTranspose with constant weights: scales output channel k by s[k] and adds t[k]
// to its bias, in fresh initializers (the old ones may be shared).
class ConvWeights {
 public:
  static std::optional<ConvWeights> of(const Node& conv, const InferFacts& facts) {
    const bool transposed = conv.op_type == "ConvTranspose";
    if ((conv.op_type != "Conv" && !transposed) || !conv.domain.empty()) return std::nullopt;
    const Tensor* w = constant_of(conv.has_input(1) ? conv.inputs[1] : nullptr, facts);
    const Tensor* b = conv.has_input(2) ? constant_of(conv.inputs[2], facts) : nullptr;
    if (!w || w->rank() < 3 || !is_float(w->dtype()) || (conv.has_input(2) && !b)) return std::nullopt;
    const int64_t group = attr_int(conv, "group");
    const int64_t channels = transposed ? w->dim(1) * group : w->dim(0);
    return ConvWeights{&conv, w, b, transposed, group, channels};
  }

  int64_t channels() const { return channels_; }

  void apply(Graph& g, const std::vector<double>& scale, const std::vector<double>& shift) const {
    Tensor w = w_->clone();
    const int64_t total = w.numel();
    if (!transposed_) {
      const int64_t per = total / channels_;
      for (int64_t i = 0; i < total; ++i) w.set_f64(i, w.get_f64(i) * scale[i / per]);
    } else {  // [C_in, C_out/group, k...]: output channel = (ci / (C_in/group)) * (C_out/group) + j
      const int64_t cin = w.dim(0), cout_g = w.dim(1), spatial = total / (cin * cout_g);
      const int64_t cin_g = cin / group_;
      for (int64_t i = 0; i < total; ++i) {
        const int64_t ci = i / (cout_g * spatial), j = (i / spatial) % cout_g;
        w.set_f64(i, w.get_f64(i) * scale[(ci / cin_g) * cout_g + j]);
      }
    }
    Tensor b(w.dtype(), {channels_});
    for (int64_t k = 0; k < channels_; ++k)
      b.set_f64(k, (b_ ? b_->get_f64(k) : 0.0) * scale[k] + shift[k]);
    Node* conv = const_cast<Node*>(conv_);
    g.set_input(conv, 1, add_initializer(g, conv->inputs[1]->name + "_fused", std::move(w)));
    const std::string bname = conv->has_input(2) ? conv->inputs[2]->name : conv->inputs[1]->name + "_bias";
    g.set_input(conv, 2, add_initializer(g, bname + "_fused", std::move(b)));
  }

 private:
  ConvWeights(const Node* c, const Tensor* w, const Tensor* b, bool t, int64_t g, int64_t ch)
      : conv_(c), w_(w), b_(b), transposed_(t), group_(g), channels_(ch) {}
  const Node* conv_;
  const Tensor* w_;
  const Tensor* b_;
  bool transposed_;
  int64_t group_, channels_;
};

// The node reading a Conv's output, when the Conv's output has no other reader.
Node* sole_reader(Graph& g, const Node& conv, PassContext& ctx, const Node& follower) {
  if (single_consumer(g, conv.outputs[0]) == &follower) return const_cast<Node*>(&follower);
  ctx.near_miss(follower, fmt::format("{} output has {} readers{}", node_label(conv),
                                      conv.outputs[0]->uses.size(),
                                      is_graph_output(g, conv.outputs[0]) ? " and is a graph output" : ""));
  return nullptr;
}

// Removes `follower` (reading conv's output) so that the conv's output takes its place.
void absorb(Graph& g, Node& conv, Node& follower) {
  replace_value(g, follower.outputs[0], conv.outputs[0], nullptr);
  for (Value* v : follower.outputs)
    if (v && v->producer == &follower) v->producer = nullptr;
  g.remove_node(&follower);
}

class FuseConvBn final : public GraphPass {
 public:
  std::string_view name() const override { return "fuse-conv-bn"; }
  std::string_view summary() const override {
    return "folds an inference BatchNormalization into the Conv/ConvTranspose before it";
  }

 protected:
  void run_graph(Graph& g, const Model& m, PassContext& ctx) const override {
    std::vector<Node*> bns;
    for (const auto& up : g.nodes())
      if (up->op_type == "BatchNormalization" && up->domain.empty()) bns.push_back(up.get());
    for (Node* bn : bns) {
      Node* conv = bn->has_input(0) ? bn->inputs[0]->producer : nullptr;
      if (!conv || conv->owner != &g) continue;
      auto w = ConvWeights::of(*conv, ctx.facts());
      if (!w) {
        if (conv->op_type == "Conv") ctx.near_miss(*bn, "the Conv before it has no constant weights");
        continue;
      }
      if (attr_int(*bn, "training_mode") != 0 ||
          (bn->num_outputs() > 1 && std::any_of(bn->outputs.begin() + 1, bn->outputs.end(),
                                                [](const Value* v) { return v && !v->uses.empty(); }))) {
        ctx.near_miss(*bn, "training-mode BatchNormalization");
        continue;
      }
      auto scale = constant_values(bn->inputs[1], ctx.facts());
      auto bias = constant_values(bn->inputs[2], ctx.facts());
      auto mean = constant_values(bn->inputs[3], ctx.facts());
      auto var = constant_values(bn->inputs[4], ctx.facts());
      const size_t c = static_cast<size_t>(w->channels());
      if (!scale || !bias || !mean || !var || scale->size() != c || bias->size() != c ||
          mean->size() != c || var->size() != c) {
        ctx.near_miss(*bn, "its parameters are not constants of one value per channel");
        continue;
      }
      if (!sole_reader(g, *conv, ctx, *bn) || !ctx.allow()) continue;
      const double eps = attr_float(*bn, "epsilon");
      std::vector<double> s(c), t(c);
      for (size_t k = 0; k < c; ++k) {
        s[k] = (*scale)[k] / std::sqrt((*var)[k] + eps);
        t[k] = (*bias)[k] - (*mean)[k] * s[k];
      }
      w->apply(g, s, t);
      const std::string label = node_label(*bn);
      absorb(g, *conv, *bn);
      ctx.applied("BatchNormalization folded into " + conv->op_type, {node_label(*conv), label},
                  {node_label(*conv)});
    }
  }
};

// Conv + Mul/Add by a per-output-channel constant; Gemm with constant B + Mul/Add by a
// per-column constant.
class FuseLinearAffine final : public GraphPass {
 public:
  std::string_view name() const override { return "fuse-linear-affine"; }
  std::string_view summary() const override {
    return "folds per-channel Mul and Add by constants into the Conv, Gemm or MatMul before them";
  }

 protected:
  void run_graph(Graph& g, const Model& m, PassContext& ctx) const override {
    std::vector<Node*> candidates;
    for (const auto& up : g.nodes())
      if ((up->op_type == "Mul" || up->op_type == "Add") && up->domain.empty())
        candidates.push_back(up.get());
    for (Node* op : candidates) {
      for (int side = 0; side < 2 && op->num_inputs() == 2; ++side) {
        Node* lin = op->inputs[side] ? op->inputs[side]->producer : nullptr;
        if (!lin || lin->owner != &g || !lin->domain.empty()) continue;
        if (lin->op_type == "Conv" || lin->op_type == "ConvTranspose") {
          if (into_conv(g, *lin, *op, side, ctx)) break;
        } else if (lin->op_type == "Gemm" || lin->op_type == "MatMul") {
          if (into_gemm(g, *lin, *op, side, ctx)) break;
        }
      }
    }
  }

 private:
  static bool into_conv(Graph& g, Node& conv, Node& op, int side, PassContext& ctx) {
    auto w = ConvWeights::of(conv, ctx.facts());
    const auto& out_shape = conv.outputs[0]->type.shape;
    if (!w || !out_shape) return false;
    const int64_t rank = static_cast<int64_t>(out_shape->size());
    auto c = per_channel(constant_of(op.inputs[1 - side], ctx.facts()), rank, 1, w->channels());
    if (!c) return false;
    if (!sole_reader(g, conv, ctx, op) || !ctx.allow()) return false;
    const size_t n = c->size();
    std::vector<double> s(n, 1.0), t(n, 0.0);
    (op.op_type == "Mul" ? s : t) = *c;
    w->apply(g, s, t);
    const std::string label = node_label(op), what = op.op_type;
    absorb(g, conv, op);  // deletes op
    ctx.applied(what + " by a per-channel constant folded into " + conv.op_type,
                {node_label(conv), label}, {node_label(conv)});
    return true;
  }

  static bool into_gemm(Graph& g, Node& lin, Node& op, int side, PassContext& ctx);
};

// Gemm or MatMul with a constant 2-D B ([K, N]; [N, K] under Gemm's transB): a following Mul by a
// per-column constant scales B's columns (and Gemm's C); an Add by one goes into Gemm's C
// (C' = beta * C + t, beta 1). MatMul + Add is fuse-gemm's (2-D) or the engine's.
bool FuseLinearAffine::into_gemm(Graph& g, Node& lin, Node& op, int side, PassContext& ctx) {
  const bool gemm = lin.op_type == "Gemm", mul = op.op_type == "Mul";
  const Tensor* b = constant_of(lin.has_input(1) ? lin.inputs[1] : nullptr, ctx.facts());
  const auto& out = lin.outputs[0]->type.shape;
  if ((!gemm && !mul) || !b || b->rank() != 2 || !is_float(b->dtype()) || !out || out->empty())
    return false;
  const bool trans_b = gemm && attr_int(lin, "transB") != 0;
  const int64_t n = trans_b ? b->dim(0) : b->dim(1), rank = static_cast<int64_t>(out->size());
  auto c = per_channel(constant_of(op.inputs[1 - side], ctx.facts()), rank, rank - 1, n);
  if (!c) return false;
  std::vector<double> bias(n, 0.0);  // Gemm's beta * C, per column
  if (gemm && lin.has_input(2)) {
    auto cc = per_channel(constant_of(lin.inputs[2], ctx.facts()), 2, 1, n);
    if (!cc) {
      ctx.near_miss(op, op.op_type + " by a per-column constant after Gemm, but Gemm's C is not "
                    "a per-column constant");
      return false;
    }
    const double beta = attr_float(lin, "beta");
    for (int64_t j = 0; j < n; ++j) bias[j] = beta * (*cc)[j];
  }
  if (!sole_reader(g, lin, ctx, op) || !ctx.allow()) return false;
  if (mul) {
    Tensor w = b->clone();
    const int64_t cols = w.dim(1);
    for (int64_t i = 0; i < w.numel(); ++i)
      w.set_f64(i, w.get_f64(i) * (*c)[trans_b ? i / cols : i % cols]);
    g.set_input(&lin, 1, add_initializer(g, lin.inputs[1]->name + "_scaled", std::move(w)));
  }
  if (gemm && (lin.has_input(2) || !mul)) {
    Tensor t(b->dtype(), {n});
    for (int64_t j = 0; j < n; ++j) t.set_f64(j, mul ? bias[j] * (*c)[j] : bias[j] + (*c)[j]);
    const std::string name = lin.has_input(2) ? lin.inputs[2]->name : lin.inputs[1]->name + "_bias";
    g.set_input(&lin, 2, add_initializer(g, name + "_fused", std::move(t)));
    set_attr_float(lin, "beta", 1.0f);
  }
  const std::string label = node_label(op), what = op.op_type;
  absorb(g, lin, op);  // deletes op
  ctx.applied(what + " by a per-column constant folded into " + lin.op_type,
              {node_label(lin), label}, {node_label(lin)});
  return true;
}

// Pad (constant mode, zeros, spatial dims only) folded into the pads of the Conv it feeds.
class FusePad final : public GraphPass {
 public:
  std::string_view name() const override { return "fuse-pad"; }
  std::string_view summary() const override {
    return "folds a constant Pad of the spatial dims into the Conv, AveragePool or MaxPool after "
           "it where exact";
  }

 protected:
  void run_graph(Graph& g, const Model& m, PassContext& ctx) const override {
    for (const auto& up : g.nodes()) {
      Node* pad = up.get();
      if (pad->op_type != "Pad" || !pad->domain.empty()) continue;
      Node* user = single_consumer(g, pad->outputs[0]);
      if (!user || !user->domain.empty() || user->inputs[0] != pad->outputs[0]) continue;
      const bool pool = user->op_type == "AveragePool" || user->op_type == "MaxPool";
      if (user->op_type != "Conv" && !pool) continue;
      const std::string reason = why_not(*pad, *user, ctx.facts());
      if (!reason.empty()) {
        ctx.near_miss(*pad, "Pad before " + user->op_type + ", but " + reason);
        continue;
      }
      if (!ctx.allow()) return;
      const auto pads = constant_of(pad->inputs[1], ctx.facts())->to_int64s();
      const size_t rank = pads.size() / 2, spatial = rank - 2;
      std::vector<int64_t> merged = attr_ints(*user, "pads");
      merged.resize(2 * spatial, 0);
      for (size_t i = 0; i < spatial; ++i) {
        merged[i] += pads[2 + i];
        merged[spatial + i] += pads[rank + 2 + i];
      }
      set_attr_ints(*user, "pads", merged);
      if (user->op_type == "AveragePool") set_attr_int(*user, "count_include_pad", 1);  // the Pad's zeros
      g.set_input(user, 0, pad->inputs[0]);
      ctx.applied("Pad folded into " + user->op_type, {node_label(*pad), node_label(*user)},
                  {node_label(*user)});
    }
  }

 private:
  static std::string why_not(const Node& pad, const Node& user, const InferFacts& f) {
    const Attribute* mode = pad.attr("mode");
    if (mode && mode->s != "constant") return "its mode is " + mode->s;
    if (pad.has_input(3)) return "it names axes";
    std::optional<double> value = 0.0;
    if (pad.has_input(2)) {
      auto v = constant_values(pad.inputs[2], f);
      value = v && v->size() == 1 ? std::optional<double>(v->front()) : std::nullopt;
    }
    if (user.op_type == "MaxPool") {
      if (std::string why = why_not_max_pool(pad, user, value, f); !why.empty()) return why;
    } else if (value != 0.0) {
      return "its value is not a constant zero";
    }
    const Tensor* p = constant_of(pad.has_input(1) ? pad.inputs[1] : nullptr, f);
    if (!p) return "its pads are not constant";
    const auto pads = p->to_int64s();
    const size_t rank = pads.size() / 2;
    if (rank < 3) return "it pads fewer than 3 dims";
    for (size_t i = 0; i < pads.size(); ++i) {
      if (pads[i] < 0) return "it crops (negative pads)";
      if ((i % rank) < 2 && pads[i] != 0) return "it pads the batch or channel dim";
    }
    const Attribute* ap = user.attr("auto_pad");
    if (ap && ap->s != "NOTSET") return user.op_type + " uses auto_pad " + ap->s;
    // count_include_pad=0 with pads of its own: the Pad's zeros would be counted, its own not.
    // Without pads of its own nothing was left out, and the folded pool counts every pad.
    if (user.op_type == "AveragePool" && attr_int(user, "count_include_pad") == 0) {
      for (int64_t q : attr_ints(user, "pads"))
        if (q != 0) return "AveragePool has pads of its own that it does not count (count_include_pad=0)";
    }
    return {};
  }

  // MaxPool pads with -inf: the Pad must too, or pad with 0 what is never negative. Every window
  // must keep a real element (pads under the kernel size, no dilation, no ceil mode), and the
  // indices output would count the padded positions.
  static std::string why_not_max_pool(const Node& pad, const Node& pool, std::optional<double> value,
                                      const InferFacts& f) {
    if (!value) return "its value is not a constant scalar";
    if (*value == 0.0 && !never_negative(pad.inputs[0]))
      return "it pads with 0 and its input may be negative (MaxPool pads with -inf)";
    if (*value != 0.0 && *value != -std::numeric_limits<double>::infinity())
      return fmt::format("it pads with {} (MaxPool pads with -inf)", *value);
    if (pool.num_outputs() > 1 && pool.outputs[1] && !pool.outputs[1]->uses.empty())
      return "MaxPool's indices are read";
    if (attr_int(pool, "ceil_mode") != 0) return "MaxPool uses ceil_mode";
    for (int64_t d : attr_ints(pool, "dilations"))
      if (d != 1) return "MaxPool is dilated";
    const Tensor* p = constant_of(pad.has_input(1) ? pad.inputs[1] : nullptr, f);
    const auto kernel = attr_ints(pool, "kernel_shape");
    auto own = attr_ints(pool, "pads");
    if (p) {
      const auto pads = p->to_int64s();
      const size_t rank = pads.size() / 2, spatial = kernel.size();
      own.resize(2 * spatial, 0);
      for (size_t i = 0; i < spatial && i + 2 < rank; ++i)
        if (pads[i + 2] + own[i] >= kernel[i] || pads[rank + i + 2] + own[spatial + i] >= kernel[i])
          return "the pads would reach the kernel size (a window of padding only)";
    }
    return {};
  }

  // Outputs of ops that are never negative (x >= 0 or NaN).
  static bool never_negative(const Value* v) {
    static const std::set<std::string, std::less<>> kNonNegative = {"Relu", "Sigmoid", "Softmax",
                                                                    "Abs", "Exp", "Sqrt", "Softplus"};
    const Node* p = v ? v->producer : nullptr;
    return p && p->domain.empty() && kNonNegative.contains(p->op_type);
  }
};

// MatMul of 2-D operands followed by a bias Add becomes Gemm; a 2-D Transpose feeding Gemm
// becomes its transA/transB.
class FuseGemm final : public GraphPass {
 public:
  std::string_view name() const override { return "fuse-gemm"; }
  std::string_view summary() const override {
    return "MatMul + Add on 2-D operands -> Gemm; Transpose folded into Gemm's transA/transB";
  }

 protected:
  void run_graph(Graph& g, const Model& m, PassContext& ctx) const override {
    std::vector<Node*> matmuls, gemms;
    for (const auto& up : g.nodes()) {
      if (!up->domain.empty()) continue;
      if (up->op_type == "MatMul") matmuls.push_back(up.get());
      if (up->op_type == "Gemm") gemms.push_back(up.get());
    }
    for (Node* mm : matmuls)
      if (Node* gemm = matmul_add(g, *mm, ctx)) gemms.push_back(gemm);
    for (Node* gemm : gemms) fold_transposes(g, *gemm, ctx);
  }

 private:
  static Node* matmul_add(Graph& g, Node& mm, PassContext& ctx) {
    Node* add = single_consumer(g, mm.outputs[0]);
    if (!add || add->op_type != "Add" || !add->domain.empty()) return nullptr;
    const Value* bias = other_input(*add, mm.outputs[0]);
    const auto& as = mm.inputs[0]->type.shape;
    if (!as || as->size() != 2 || !mm.inputs[1]->type.shape || mm.inputs[1]->type.shape->size() != 2) {
      ctx.near_miss(mm, fmt::format("MatMul + Add, but Gemm takes 2-D operands (input rank {})",
                                    as ? std::to_string(as->size()) : "unknown"));
      return nullptr;
    }
    // Gemm's C broadcasts to [M, N] one way only: the bias must not widen the output.
    const auto& bs = bias ? bias->type.shape : std::nullopt;
    const auto& out = add->outputs[0]->type.shape;
    const auto& mmo = mm.outputs[0]->type.shape;
    if (!bias || !bs || bs->size() > 2 || !out || !mmo || out->size() != 2 ||
        !(*out)[0].same_as((*mmo)[0]) || !(*out)[1].same_as((*mmo)[1])) {
      ctx.near_miss(mm, "MatMul + Add, but the bias's shape is not one Gemm broadcasts");
      return nullptr;
    }
    if (!ctx.allow()) return nullptr;
    Node* gemm = add_node(g, "Gemm", mm.name.empty() ? "" : mm.name + "_gemm",
                          {mm.inputs[0], mm.inputs[1], const_cast<Value*>(bias)}, 1, mm.opset);
    replace_value(g, add->outputs[0], gemm->outputs[0], nullptr);
    // replace_value may have handed add's output to the gemm (graph outputs keep their names)
    const std::vector<std::string> removed = {node_label(mm), node_label(*add)};
    for (Value* v : add->outputs)
      if (v && v->producer == add) v->producer = nullptr;
    g.remove_node(add);
    g.remove_node(&mm);
    ctx.applied("MatMul + Add -> Gemm", removed, {node_label(*gemm)});
    return gemm;
  }

  static void fold_transposes(Graph& g, Node& gemm, PassContext& ctx) {
    for (int i = 0; i < 2; ++i) {
      Node* t = gemm.has_input(i) ? gemm.inputs[i]->producer : nullptr;
      if (!t || t->op_type != "Transpose" || !t->domain.empty() || t->owner != &g) continue;
      auto perm = attr_ints(*t, "perm");
      const auto& s = t->inputs[0]->type.shape;
      const bool swap2d = s && s->size() == 2 && (perm.empty() || perm == std::vector<int64_t>{1, 0});
      if (!swap2d || !ctx.allow()) continue;
      const char* flag = i == 0 ? "transA" : "transB";
      set_attr_int(gemm, flag, attr_int(gemm, flag) ? 0 : 1);
      g.set_input(&gemm, i, t->inputs[0]);
      ctx.applied(std::string("Transpose folded into Gemm's ") + flag, {node_label(*t)},
                  {node_label(gemm)});
    }
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_conv_bn() { return std::make_unique<FuseConvBn>(); }
std::unique_ptr<Pass> make_fuse_linear_affine() { return std::make_unique<FuseLinearAffine>(); }
std::unique_ptr<Pass> make_fuse_pad() { return std::make_unique<FusePad>(); }
std::unique_ptr<Pass> make_fuse_gemm() { return std::make_unique<FuseGemm>(); }

}  // namespace kiln::opt
