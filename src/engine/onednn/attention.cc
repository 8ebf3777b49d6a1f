// ONNX Attention (opset 23) as the engine runs the decomposed form: S = Q K^T through oneDNN's
// matmul (heads read through strides from 3-D [B, S, H*D] inputs, no copies), then per row of S
// the scale, the mask (every broadcast form, read through strides), the causal bound and the
// softmax in one pass, then Y = P V through oneDNN (written back through strides into 3-D).
// The common case only: float32, no past/present KV, no softcap, no nonpad_kv_seqlen, as many kv
// heads as query heads, only Y wanted. The rest stays on the reference kernel.
#include "engine/cpu/parallel.h"
#include "engine/cpu/softmax.h"
#include "engine/lowering.h"
#include "engine/onednn/dnnl_context.h"
#include "engine/onednn/onednn_kernels.h"
#include "engine/step.h"
#include "engine/threads.h"
#include "ops/attrs.h"
#include "support/error.h"

#include <cmath>
#include <limits>

namespace kiln::engine {

namespace {

using dt = dnnl::memory::data_type;

// The problem one Attention node poses, in [B, H, S, D] terms.
struct AttentionShape {
  int64_t B = 0, H = 0, Sq = 0, L = 0, Dh = 0, Dv = 0;
  bool three_d = false;
  bool causal = false;
  float scale = 1;
  const Value* mask = nullptr;
  std::vector<int64_t> mask_dims;  // lifted to 4-D
};

// Strides of a [B, H, S, D] view of input dims: 3-D [B, S, H*D] has its heads interleaved.
std::vector<int64_t> bhsd_strides(const AttentionShape& a, int64_t S, int64_t D) {
  if (!a.three_d) return {a.H * S * D, S * D, D, 1};
  return {S * a.H * D, D, a.H * D, 1};
}

bool positive(const std::vector<int64_t>& d) {
  for (int64_t x : d)
    if (x <= 0) return false;
  return true;
}

std::optional<AttentionShape> attention_shape(const Node& n, const GraphFacts& f) {
  if (n.num_inputs() < 3 || n.num_inputs() > 4 || !n.has_input(0) || !n.has_input(1) ||
      !n.has_input(2) || n.outputs.empty() || !n.outputs[0])
    return {};
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] && !f.consumers(n.outputs[i]).empty()) return {};
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] && f.is_graph_output(n.outputs[i])) return {};
  if (attr_float(n, "softcap", 0.f) != 0.f) return {};
  const int64_t causal = attr_int(n, "is_causal", 0);
  if (causal != 0 && causal != 1) return {};
  const Value *q = n.inputs[0], *k = n.inputs[1], *v = n.inputs[2];
  for (const Value* x : {q, k, v})
    if (f.dtype(x) != DataType::kFloat || !f.dims(x) || !positive(*f.dims(x))) return {};
  const auto &qd = *f.dims(q), &kd = *f.dims(k), &vd = *f.dims(v);
  const size_t rank = qd.size();
  if ((rank != 3 && rank != 4) || kd.size() != rank || vd.size() != rank) return {};
  AttentionShape a{.three_d = rank == 3, .causal = causal == 1};
  if (a.three_d) {
    const int64_t qh = attr_int(n, "q_num_heads", 0), kvh = attr_int(n, "kv_num_heads", 0);
    if (qh <= 0 || qh != kvh || qd[2] % qh || kd[2] % kvh || vd[2] % kvh) return {};
    a.B = qd[0];
    a.H = qh;
    a.Sq = qd[1];
    a.Dh = qd[2] / qh;
    a.L = kd[1];
    if (kd[2] / kvh != a.Dh || vd[1] != a.L) return {};
    a.Dv = vd[2] / kvh;
  } else {
    a.B = qd[0];
    a.H = qd[1];
    a.Sq = qd[2];
    a.Dh = qd[3];
    a.L = kd[2];
    if (kd[1] != a.H || kd[3] != a.Dh || vd[1] != a.H || vd[2] != a.L) return {};
    a.Dv = vd[3];
  }
  if (kd[0] != a.B || vd[0] != a.B) return {};
  // the step holds every row of scores at once; past this the reference kernel's row at a time
  constexpr double kMaxScoreBytes = 512.0 * 1024 * 1024;
  if (4.0 * static_cast<double>(a.B * a.H * a.Sq) * static_cast<double>(a.L) > kMaxScoreBytes) return {};
  a.scale = n.attr("scale") ? attr_float(n, "scale", 1.f)
                            : 1.f / std::sqrt(static_cast<float>(a.Dh));
  if (n.has_input(3)) {
    a.mask = n.inputs[3];
    const auto* md = f.dims(a.mask);
    if (f.dtype(a.mask) != DataType::kFloat && f.dtype(a.mask) != DataType::kBool) return {};
    if (!md || md->size() < 2 || md->size() > 4 || !positive(*md)) return {};
    a.mask_dims.assign(4 - md->size(), 1);
    a.mask_dims.insert(a.mask_dims.end(), md->begin(), md->end());
    const int64_t want[3] = {a.B, a.H, a.Sq};
    for (int i = 0; i < 3; ++i)
      if (a.mask_dims[i] != 1 && a.mask_dims[i] != want[i]) return {};
    if (a.mask_dims[3] > a.L) return {};
  }
  return a;
}

// The scale, the mask, the causal bound and the softmax over one row of scores, in place. A
// fully masked row attends to nothing (zeros), as the reference kernel does.
template <class Mask>
void softmax_row(float* row, int64_t L, float scale, const Mask* mask, int64_t mask_stride,
                 int64_t mask_len, int64_t visible) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const int64_t end = std::min(visible, mask ? mask_len : L);
  float mx = ninf;
  for (int64_t j = 0; j < end; ++j) {
    float s = row[j] * scale;
    if constexpr (std::is_same_v<Mask, bool>) {
      if (!mask[j * mask_stride]) s = ninf;
    } else if (mask) {
      s += mask[j * mask_stride];
    }
    row[j] = s;
    mx = std::max(mx, s);
  }
  for (int64_t j = std::max<int64_t>(end, 0); j < L; ++j) row[j] = ninf;
  if (mx == ninf || std::isnan(mx)) {
    std::fill(row, row + L, 0.f);
    return;
  }
  cpu::softmax(row, row, 1, L, 1);
}

class AttentionStep : public Step {
 public:
  AttentionStep(const Node& n, const AttentionShape& a) : a_(a) {
    node = &n;
    kernel = "onednn.attention";
    const auto q_md = strided_md({a.B, a.H, a.Sq, a.Dh}, bhsd_strides(a, a.Sq, a.Dh), dt::f32);
    auto kt = bhsd_strides(a, a.L, a.Dh);
    std::swap(kt[2], kt[3]);  // K^T: [B, H, D, L]
    const auto kt_md = strided_md({a.B, a.H, a.Dh, a.L}, kt, dt::f32);
    const auto s_md = plain_md({a.B, a.H, a.Sq, a.L}, dt::f32);
    const auto v_md = strided_md({a.B, a.H, a.L, a.Dv}, bhsd_strides(a, a.L, a.Dv), dt::f32);
    const auto y_md = strided_md({a.B, a.H, a.Sq, a.Dv}, bhsd_strides(a, a.Sq, a.Dv), dt::f32);
    const double flops = 2.0 * static_cast<double>(a.B * a.H * a.Sq * a.L) *
                         static_cast<double>(a.Dh + a.Dv);
    threads = threads_for_work(flops);
    ThreadScope scope(threads);
    qk_ = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(q_md, kt_md, s_md), dnnl_engine()));
    pv_ = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(s_md, v_md, y_md), dnnl_engine()));
    q_ = unbound_memory(q_md);
    k_ = unbound_memory(kt_md);
    v_ = unbound_memory(v_md);
    y_ = unbound_memory(y_md);
    scores_.resize(static_cast<size_t>(a.B * a.H * a.Sq * a.L));
    s_ = dnnl::memory(s_md, dnnl_engine(), scores_.data());
  }

  void run(RunState& st) override {
    const Tensor* t[4] = {};
    for (size_t i = 0; i < inputs.size(); ++i) {
      const RtValue& v = st.slots[inputs[i]];
      KILN_CHECK(v.is_tensor(), ErrorKind::kRuntime, "{}: an input is not a tensor", kernel);
      if (v.tensor.dims() != expected_[i])
        fail(ErrorKind::kRuntime, "{}: input of shape {} where the plan expects {}", kernel,
             dims_to_string(v.tensor.dims()), dims_to_string(expected_[i]));
      t[i] = &v.tensor;
    }
    q_.set_data_handle(const_cast<void*>(t[0]->raw()));
    k_.set_data_handle(const_cast<void*>(t[1]->raw()));
    v_.set_data_handle(const_cast<void*>(t[2]->raw()));
    y_.set_data_handle(st.slots[outputs[0].slot].tensor.raw());
    qk_.execute(dnnl_stream(), {{DNNL_ARG_SRC, q_}, {DNNL_ARG_WEIGHTS, k_}, {DNNL_ARG_DST, s_}});
    dnnl_stream().wait();
    if (t[3] && t[3]->dtype() == DataType::kBool) softmax_rows(t[3]->data<bool>());
    else softmax_rows(t[3] ? t[3]->data<float>() : static_cast<const float*>(nullptr));
    pv_.execute(dnnl_stream(), {{DNNL_ARG_SRC, s_}, {DNNL_ARG_WEIGHTS, v_}, {DNNL_ARG_DST, y_}});
    dnnl_stream().wait();
  }

  void expect(int slot, std::vector<int64_t> dims) {
    inputs.push_back(slot);
    expected_.push_back(std::move(dims));
  }

 private:
  template <class Mask>
  void softmax_rows(const Mask* mask) {
    const AttentionShape& a = a_;
    int64_t ms[4] = {0, 0, 0, 0};
    if (mask) {
      int64_t s = 1;
      for (int i = 3; i >= 0; --i) {
        ms[i] = a.mask_dims[i] == 1 ? 0 : s;
        s *= a.mask_dims[i];
      }
    }
    const int64_t rows = a.B * a.H * a.Sq, L = a.L;
    float* scores = scores_.data();
    cpu::parallel_for(rows, std::max<int64_t>(1, 4096 / L), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t b = r / (a.H * a.Sq), h = (r / a.Sq) % a.H, i = r % a.Sq;
        const Mask* m = mask ? mask + b * ms[0] + h * ms[1] + i * ms[2] : nullptr;
        const int64_t visible = a.causal ? i + 1 : L;
        softmax_row(scores + r * L, L, a.scale, m, ms[3], mask ? a.mask_dims[3] : L, visible);
      }
    }, 1);
  }

  AttentionShape a_;
  std::vector<std::vector<int64_t>> expected_;
  dnnl::matmul qk_, pv_;
  dnnl::memory q_, k_, v_, y_, s_;
  std::vector<float> scores_;  // this plan's S and P (a plan runs one step at a time)
};

bool match_attention(const Node& n, const MatchContext& ctx, Group&) {
  return attention_shape(n, ctx.facts).has_value();
}

bool build_attention(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const GraphFacts& f = lw.facts();
  const auto a = attention_shape(n, f);
  if (!a) return false;
  auto step = std::make_unique<AttentionStep>(n, *a);
  for (int i = 0; i < (a->mask ? 4 : 3); ++i) step->expect(lw.plain(n.inputs[i]), *f.dims(n.inputs[i]));
  step->outputs.push_back({lw.define(n.outputs[0]), OutputMemory::kPlanned, -1});
  lw.add(std::move(step));
  return true;
}

}  // namespace

constinit const KernelImpl kOnednnAttention{.name = "onednn.attention",
                                            .match = match_attention, .build = build_attention};

}  // namespace kiln::engine
