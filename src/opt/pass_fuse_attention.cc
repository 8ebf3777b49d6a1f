// Scaled dot-product attention -> ONNX's Attention (opset 23):
//
//   Softmax(MatMul(Q, K^T) [/ c | * c] [+ mask], axis=-1) @ V
//
// with Q, K, V of [batch, heads, seq, head_dim]. Where Q, K and V are split into heads from
// [batch, seq, hidden] by Reshape + Transpose and the result merged back the same way (how torch
// exports BERT), the 3-D form of Attention takes the hidden tensors and the split and merge go
// too. Never a vendor op.
//
// ONNX Runtime 1.30 requires the mask's second to last dim to be the query length (the spec lets
// it broadcast), so a mask that broadcasts there is expanded first: Expand(mask, [1.., S, 1]),
// shared by every attention of the graph reading the same mask with the same query length.
#include <algorithm>
#include <map>

#include "opt/fusion.h"
#include "opt/passes.h"

namespace kiln::opt {

namespace {

const std::vector<int64_t> kSplitPerm = {0, 2, 1, 3};  // [B, S, H, D] <-> [B, H, S, D]

std::optional<std::vector<Dim>> shape_of_value(const Value* v) {
  if (!v || !v->type.is_tensor() || !v->type.shape) return std::nullopt;
  return *v->type.shape;
}

// The core pattern, matched from its Softmax.
struct Sdpa {
  Node* qk = nullptr;     // MatMul(Q, K^T)
  Node* scaling = nullptr;  // Div or Mul by a scalar constant, or null
  Node* mask_add = nullptr;  // Add(scores, mask), or null
  Value* mask = nullptr;
  Node* softmax = nullptr;
  Node* pv = nullptr;     // MatMul(P, V)
  double scale = 1.0;
  std::vector<Dim> q, kt, v;  // shapes: [B, H, S, D], [B, H, D, Skv], [B, H, Skv, Dv]
};

// The Reshape + Transpose that split a [B, S, H*D] tensor into heads [B, H, S, D] and make `v`
// (or, for K, the Reshape alone when the transpose is accounted for by the caller).
struct HeadSplit {
  Node* reshape = nullptr;
  Node* transpose = nullptr;  // null for K
  Value* hidden = nullptr;    // the [B, S, H*D] input
};

// `reshaped` = Reshape(x [B, S, N]) with shape [B, S, H, D]; the reshape is read by `reader` only.
std::optional<HeadSplit> reshape_split(const Graph& g, Value* reshaped, const Node* reader) {
  Node* r = made_by(g, reshaped, "Reshape");
  if (!r || single_consumer(g, reshaped) != reader) return std::nullopt;
  auto in = shape_of_value(r->inputs[0]);
  auto out = shape_of_value(reshaped);
  if (!in || !out || in->size() != 3 || out->size() != 4 || !(*in)[0].same_as((*out)[0]) ||
      !(*in)[1].same_as((*out)[1]) || !(*out)[2].is_known() || !(*out)[3].is_known())
    return std::nullopt;
  return HeadSplit{r, nullptr, r->inputs[0]};
}

// `v` = Transpose(Reshape(x [B, S, N]) -> [B, S, H, D], perm [0, 2, 1, 3]), read by `reader`.
std::optional<HeadSplit> head_split(const Graph& g, Value* v, const Node* reader) {
  Node* t = made_by(g, v, "Transpose");
  if (!t || single_consumer(g, v) != reader || attr_ints(*t, "perm") != kSplitPerm)
    return std::nullopt;
  auto s = reshape_split(g, t->inputs[0], t);
  if (s) s->transpose = t;
  return s;
}

// The merge after the attention: Reshape(Transpose(y, perm [0, 2, 1, 3])) -> [B, S, H*Dv].
std::optional<Match> head_merge(const Graph& g, Value* y) {
  Node* t = read_by(g, y, "Transpose");
  if (!t || attr_ints(*t, "perm") != kSplitPerm) return std::nullopt;
  Node* r = read_by(g, t->outputs[0], "Reshape");
  if (!r) return std::nullopt;
  auto in = shape_of_value(t->outputs[0]);
  auto out = shape_of_value(r->outputs[0]);
  if (!in || !out || in->size() != 4 || out->size() != 3 || !(*in)[0].same_as((*out)[0]) ||
      !(*in)[1].same_as((*out)[1]) || !(*in)[2].is_known() || !(*in)[3].is_known() ||
      !(*out)[2].is_known() || (*out)[2].value() != (*in)[2].value() * (*in)[3].value())
    return std::nullopt;
  return Match{{t, r}, r->outputs[0]};
}

class FuseAttention final : public FusionPass {
 public:
  std::string_view name() const override { return "fuse-attention"; }
  std::string_view summary() const override {
    return "scaled dot-product attention (MatMul, scale, mask Add, Softmax, MatMul) -> Attention "
           "(opset 23)";
  }

 protected:
  void run_graph(Graph& g, const Model& m, PassContext& ctx) const override {
    std::vector<Node*> softmaxes;
    for (const auto& up : g.nodes())
      if (up->op_type == "Softmax" && up->domain.empty()) softmaxes.push_back(up.get());
    std::map<const Value*, std::vector<ExpandedMask>> masks;  // shared expansions, by mask
    for (Node* sm : softmaxes) {
      Node* pv = read_by(g, sm->outputs[0], "MatMul");
      if (!pv || pv->inputs[0] != sm->outputs[0]) continue;  // not attention
      std::string why;
      auto sdpa = match(g, *sm, *pv, ctx.facts(), &why);
      if (!sdpa) {
        if (!why.empty()) ctx.near_miss(*sm, "Softmax before MatMul, but " + why);
        continue;
      }
      if (!opset_allows(m, *sm, ctx, 23, "Attention") || !ctx.allow()) continue;
      fuse(g, m, *sdpa, masks, ctx);
    }
  }

 private:
  struct ExpandedMask {
    Dim seq;  // the query length it was expanded to
    Value* value;
  };

  // v is MatMul(..) or a Div/Mul of one: the scores side of the mask's Add.
  static bool leads_to_matmul(const Graph& g, const Value* v) {
    if (made_by(g, v, "MatMul")) return true;
    const Node* p = made_by(g, v, "Div");
    if (!p) p = made_by(g, v, "Mul");
    return p && (made_by(g, p->inputs[0], "MatMul") || made_by(g, p->inputs[1], "MatMul"));
  }

  static std::optional<Sdpa> match(const Graph& g, Node& sm, Node& pv, const InferFacts& f,
                                   std::string* why) {
    Sdpa s;
    s.softmax = &sm;
    s.pv = &pv;
    auto x = shape_of_value(sm.inputs[0]);
    const int64_t axis = attr_int(sm, "axis", -1);
    if (!x || (axis != -1 && axis != static_cast<int64_t>(x->size()) - 1)) {
      *why = "the Softmax is not over the last axis";
      return std::nullopt;
    }
    Value* scores = sm.inputs[0];
    if (Node* add = made_by(g, scores, "Add"); add && single_consumer(g, scores) == &sm) {
      for (int i = 0; i < 2 && !s.mask_add; ++i) {
        if (leads_to_matmul(g, add->inputs[i])) {
          s.mask_add = add;
          s.mask = add->inputs[1 - i];
          scores = add->inputs[i];
        }
      }
    }
    if (Node* d = made_by(g, scores, "Div"); d && single_consumer(g, scores)) {
      auto c = scalar(d->inputs[1], f);
      if (!c || *c == 0) {
        *why = "the scores are divided by something other than a scalar constant";
        return std::nullopt;
      }
      s.scaling = d;
      s.scale = 1.0 / *c;
      scores = d->inputs[0];
    } else if (Node* mul = made_by(g, scores, "Mul"); mul && single_consumer(g, scores)) {
      const int side = scalar(mul->inputs[1], f) ? 1 : scalar(mul->inputs[0], f) ? 0 : -1;
      if (side < 0) {
        *why = "the scores are multiplied by something other than a scalar constant";
        return std::nullopt;
      }
      s.scaling = mul;
      s.scale = *scalar(mul->inputs[side], f);
      scores = mul->inputs[1 - side];
    }
    s.qk = made_by(g, scores, "MatMul");
    if (!s.qk || !single_consumer(g, scores)) {
      *why = "the scores are not a MatMul of Q and K read by nothing else";
      return std::nullopt;
    }
    auto q = shape_of_value(s.qk->inputs[0]), kt = shape_of_value(s.qk->inputs[1]),
         v = shape_of_value(pv.inputs[1]), sc = shape_of_value(sm.inputs[0]);
    if (!q || !kt || !v || q->size() != 4 || kt->size() != 4 || v->size() != 4 || sc->size() != 4) {
      *why = "Q, K and V are not all 4-D [batch, heads, seq, head_dim]";
      return std::nullopt;
    }
    const auto& Q = *q;
    const auto& K = *kt;
    const auto& V = *v;
    if (!Q[0].same_as(K[0]) || !Q[0].same_as(V[0]) || !Q[1].same_as(K[1]) || !Q[1].same_as(V[1]) ||
        !Q[3].same_as(K[2]) || !K[3].same_as(V[2])) {
      *why = "Q, K and V do not share batch, heads and head sizes (broadcasting MatMuls)";
      return std::nullopt;
    }
    for (int i = 0; i < 4; ++i)
      if (!(*sc)[i].same_as(i < 3 ? Q[i] : K[3])) {
        *why = "the mask widens the scores";
        return std::nullopt;
      }
    const DataType dt = s.qk->inputs[0]->type.elem;
    if (dt != DataType::kFloat && dt != DataType::kFloat16) {
      *why = "Attention here is for float and float16";
      return std::nullopt;
    }
    if (s.mask) {
      auto ms = shape_of_value(s.mask);
      const DataType mt = s.mask->type.elem;
      if (!ms || ms->empty() || (mt != dt && mt != DataType::kBool)) {
        *why = "the mask is not a tensor of the scores' type";
        return std::nullopt;
      }
      if (!ms->back().same_as(K[3])) {  // ONNX Runtime 1.30 rejects a mask broadcast over keys
        *why = "the mask broadcasts over the keys";
        return std::nullopt;
      }
    }
    s.q = Q;
    s.kt = K;
    s.v = V;
    return s;
  }

  // A mask whose second to last dim is surely the query length `seq`, read from `src` (dim
  // `seq_axis`): the mask itself or an expansion of it (shared).
  static Value* mask_for_ort(Graph& g, const Model& m, Value* mask, Value* src, int64_t seq_axis,
                             const Dim& seq, std::map<const Value*, std::vector<ExpandedMask>>& cache,
                             std::vector<std::string>* added) {
    const auto& ms = *mask->type.shape;
    if (ms.size() >= 2 && ms[ms.size() - 2].same_as(seq)) return mask;
    for (const ExpandedMask& e : cache[mask])
      if (e.seq.same_as(seq)) return e.value;
    const int opset = model_opset(m);
    const std::string base = mask->name + "_per_query";
    // The target shape [1.., S, 1]: a constant when S is known, else S read at run time.
    const int64_t lead = std::max<int64_t>(static_cast<int64_t>(ms.size()), 2) - 2;
    Value* target = nullptr;
    if (seq.is_known()) {
      std::vector<int64_t> dims(lead, 1);
      dims.insert(dims.end(), {seq.value(), 1});
      target = add_initializer(g, base + "_shape", Tensor::from_int64s(dims));
    } else {
      Node* len = add_node(g, "Shape", base + "_len", {src}, 1, opset);
      set_attr_int(*len, "start", seq_axis);
      set_attr_int(*len, "end", seq_axis + 1);
      std::vector<Value*> parts;
      if (lead > 0)
        parts.push_back(add_initializer(g, base + "_lead", Tensor::from_int64s(std::vector<int64_t>(lead, 1))));
      parts.push_back(len->outputs[0]);
      parts.push_back(add_initializer(g, base + "_keys", Tensor::from_int64s(std::vector<int64_t>{1})));
      Node* concat = add_node(g, "Concat", base + "_shape", parts, 1, opset);
      set_attr_int(*concat, "axis", 0);
      target = concat->outputs[0];
      added->push_back(node_label(*len));
      added->push_back(node_label(*concat));
    }
    Node* expand = add_node(g, "Expand", base, {mask, target}, 1, opset);
    cache[mask].push_back({seq, expand->outputs[0]});
    added->push_back(node_label(*expand));
    return expand->outputs[0];
  }

  static void fuse(Graph& g, const Model& m, const Sdpa& s,
                   std::map<const Value*, std::vector<ExpandedMask>>& masks, PassContext& ctx) {
    const int opset = model_opset(m);
    Match match{{s.qk, s.softmax, s.pv}, s.pv->outputs[0]};
    if (s.scaling) match.nodes.push_back(s.scaling);
    if (s.mask_add) match.nodes.push_back(s.mask_add);
    std::vector<std::string> added;

    // K = Transpose(src, perm) with K^T = Transpose(src, perm with its last two swapped).
    Value* k_src = s.qk->inputs[1];
    std::vector<int64_t> k_perm = {0, 1, 3, 2};
    Node* kt = made_by(g, k_src, "Transpose");
    if (kt && attr_ints(*kt, "perm").size() == 4) {
      k_perm = attr_ints(*kt, "perm");
      std::swap(k_perm[2], k_perm[3]);
      k_src = kt->inputs[0];
      if (single_consumer(g, s.qk->inputs[1]) == s.qk) match.nodes.push_back(kt);
    }

    // The 3-D form when every head split and the merge match.
    auto qs = head_split(g, s.qk->inputs[0], s.qk);
    auto vs = head_split(g, s.pv->inputs[1], s.pv);
    const bool kt_removed = kt && std::find(match.nodes.begin(), match.nodes.end(), kt) != match.nodes.end();
    auto ks = kt_removed && k_perm == kSplitPerm ? reshape_split(g, k_src, kt) : std::nullopt;
    auto merge = head_merge(g, s.pv->outputs[0]);
    const bool three_d = qs && ks && vs && merge && s.q[1].is_known() && s.kt[1].is_known();

    Value *q, *k, *v;
    Value* seq_src;
    int64_t seq_axis;
    if (three_d) {
      q = qs->hidden;
      k = ks->hidden;
      v = vs->hidden;
      for (const HeadSplit* h : {&*qs, &*ks, &*vs}) {
        match.nodes.push_back(h->reshape);
        if (h->transpose) match.nodes.push_back(h->transpose);
      }
      match.nodes.insert(match.nodes.end(), merge->nodes.begin(), merge->nodes.end());
      match.out = merge->out;
      seq_src = q;
      seq_axis = 1;
    } else {
      q = s.qk->inputs[0];
      v = s.pv->inputs[1];
      k = k_src;
      if (k_perm != std::vector<int64_t>{0, 1, 2, 3}) {
        Node* t = add_node(g, "Transpose", node_label(*s.qk) + "_k", {k_src}, 1, opset);
        set_attr_ints(*t, "perm", k_perm);
        k = t->outputs[0];
        added.push_back(node_label(*t));
      }
      seq_src = q;
      seq_axis = 2;
    }
    std::vector<Value*> inputs = {q, k, v};
    if (s.mask)
      inputs.push_back(mask_for_ort(g, m, s.mask, seq_src, seq_axis, s.q[2], masks, &added));
    Node* att = add_node(g, "Attention", node_label(*s.softmax) + "_attention", inputs, 1, opset);
    set_attr_float(*att, "scale", static_cast<float>(s.scale));
    if (three_d) {
      set_attr_int(*att, "q_num_heads", s.q[1].value());
      set_attr_int(*att, "kv_num_heads", s.kt[1].value());
    }
    added.push_back(node_label(*att));
    const auto removed = labels(match);
    replace_match(g, match, att);
    ctx.applied(three_d ? "attention with its head split and merge -> Attention (3-D)"
                        : "scaled dot-product attention -> Attention",
                removed, added);
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_attention() { return std::make_unique<FuseAttention>(); }

}  // namespace kiln::opt
