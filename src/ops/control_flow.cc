// Control flow: If, Loop, Scan. Bodies run through ctx.run_subgraph (the runtime resolves
// outer-scope values); shape inference goes through ctx.infer_subgraph.
#include <limits>

#include "ops/control_common.h"
#include "ops/kernel_util.h"
#include "support/error.h"

namespace kiln {

using namespace control;

namespace {

bool truthy(const KernelContext& ctx, const RtValue& v, const char* what) {
  if (!v.is_tensor() || v.tensor.numel() != 1)
    ctx.fail_here(fmt::format("{} must be a one-element tensor, got {}", what, v.describe()));
  if (v.tensor.dtype() == DataType::kBool) return v.tensor.data<bool>()[0];
  return v.tensor.get_f64(0) != 0;
}

// A scan output for zero iterations: the node's declared/inferred type with the scan axis 0.
Tensor empty_scan_output(const Node& n, int out, int axis, int batch_prefix = 0) {
  DataType dt = DataType::kFloat;
  std::vector<int64_t> dims;
  bool have = false;
  if (out < n.num_outputs() && n.outputs[out]) {
    const TypeInfo& t = n.outputs[out]->type;
    if (t.is_tensor() && t.elem != DataType::kUndefined) dt = t.elem;
    if (t.is_tensor() && t.shape) {
      have = true;
      for (size_t d = 0; d < t.shape->size(); ++d) {
        const Dim& dim = (*t.shape)[d];
        if (static_cast<int>(d) == axis)
          dims.push_back(0);
        else if (dim.is_known())
          dims.push_back(dim.value());
        else {
          have = false;
          break;
        }
      }
    }
  }
  if (!have) {
    dims.assign(batch_prefix, 0);
    dims.push_back(0);
  }
  return Tensor(dt, dims);
}

// ---------------------------------------------------------------------------------------------
// If

// A branch's output types, or nothing when its inference fails.
std::optional<std::vector<TypeInfo>> try_infer_branch(const InferContext& ctx, const Graph& g,
                                                      std::optional<Error>& error) {
  try {
    return ctx.infer_subgraph(g, {});
  } catch (const Error& e) {
    error = e;
    return std::nullopt;
  }
}

// Both branches are inferred, so that every subgraph value gets a type. A branch that fails is
// not the model's fault when it may never run: a constant condition rules it out (a torch
// export's dead branch, traced with shapes it never sees), or the condition is unknown and the
// other branch is sound (silero VAD's 8 kHz branch fails with 16 kHz shapes: the sample rate
// input picks the branch). The outputs then take the sound branch's types, a warning says what
// failed, and the node fails at run time if the failing branch is taken. Both failing fails.
void infer_if(InferContext& ctx) {
  const Graph& then_g = attr_graph_req(ctx.node(), "then_branch");
  const Graph& else_g = attr_graph_req(ctx.node(), "else_branch");
  // A branch takes no inputs (it reads outer values by name): one that declares some is malformed
  // whichever branch runs, not a branch that fails with these shapes.
  for (const Graph* g : {&then_g, &else_g})
    KILN_CHECK(g->inputs.empty(), ErrorKind::kBadModel,
               "{}{} '{}' declares {} inputs; an If branch takes none", ctx.node().where(),
               g == &then_g ? "then_branch" : "else_branch", g->name, g->inputs.size());
  std::optional<bool> known;
  if (const Tensor* c = ctx.input_constant(0); c && c->numel() == 1) known = c->get_f64(0) != 0;
  std::optional<Error> then_error, else_error;
  const auto a = try_infer_branch(ctx, then_g, then_error);
  const auto b = try_infer_branch(ctx, else_g, else_error);
  const size_t n = static_cast<size_t>(ctx.num_outputs());
  const std::vector<TypeInfo> unknown(n);
  if (known) {
    // The taken branch must be sound; the other one never runs.
    if (*known && !a) throw *then_error;
    if (!*known && !b) throw *else_error;
  } else if (!a && !b) {
    throw *then_error;
  } else if (!a || !b) {
    ctx.warn(fmt::format("{} fails inference and the node fails if it is taken: {}",
                         a ? "else_branch" : "then_branch", (a ? else_error : then_error)->what()));
  }
  const std::vector<TypeInfo>& ta = a ? *a : unknown;
  const std::vector<TypeInfo>& tb = b ? *b : unknown;
  if (ta.size() != n)
    ctx.fail_here(fmt::format("then_branch has {} outputs, the node {}", ta.size(), n));
  if (tb.size() != n)
    ctx.fail_here(fmt::format("else_branch has {} outputs, the node {}", tb.size(), n));
  for (size_t i = 0; i < n; ++i) {
    if (known)
      ctx.set_output(static_cast<int>(i), *known ? ta[i] : tb[i]);
    else if (!a || !b)
      ctx.set_output(static_cast<int>(i), a ? ta[i] : tb[i]);
    else
      ctx.set_output(static_cast<int>(i), merge_types(ta[i], tb[i]));
  }
}

void run_if(KernelContext& ctx) {
  const bool cond = truthy(ctx, ctx.input_value(0), "the If condition");
  const Graph& g = attr_graph_req(ctx.node(), cond ? "then_branch" : "else_branch");
  std::vector<RtValue> outs = ctx.run_subgraph(g, {});
  if (static_cast<int>(outs.size()) != ctx.num_outputs())
    ctx.fail_here(
        fmt::format("branch gave {} outputs, the node has {}", outs.size(), ctx.num_outputs()));
  for (size_t i = 0; i < outs.size(); ++i) ctx.set_output(static_cast<int>(i), std::move(outs[i]));
}

bool kinds_differ(const TypeInfo& a, const TypeInfo& b) {
  return a.kind != TypeInfo::Kind::kUnknown && b.kind != TypeInfo::Kind::kUnknown &&
         a.kind != b.kind;
}

// ---------------------------------------------------------------------------------------------
// Loop: inputs (M?, cond?, v_initial...), body (iter, cond, v...) -> (cond, v..., scan...).

// The first iteration's condition is the node's cond input, so it must have the type the body
// declares for its condition input (a scalar, where it says): as ONNX infers the body with the
// outer cond's type there, a 1-element vector for a declared scalar is refused. Later
// iterations take the body's own condition output, so the body is inferred with a scalar.
void check_loop_cond(const InferContext& ctx, const Graph& body) {
  if (!ctx.has_input(1) || body.inputs.size() < 2 || !body.inputs[1]->has_declared_type) return;
  const TypeInfo& given = ctx.input_type(1);
  const TypeInfo& declared = body.inputs[1]->type;
  if (!given.is_tensor() || !declared.is_tensor()) return;
  bool agree = given.elem == DataType::kUndefined || declared.elem == DataType::kUndefined ||
               given.elem == declared.elem;
  if (agree && given.shape && declared.shape) {
    agree = given.shape->size() == declared.shape->size();
    for (size_t i = 0; agree && i < given.shape->size(); ++i) {
      const Dim &a = (*given.shape)[i], &b = (*declared.shape)[i];
      agree = !a.is_known() || !b.is_known() || a.value() == b.value();
    }
  }
  KILN_CHECK(agree, ErrorKind::kBadModel,
             "{}cond '{}' is {}, but the body declares its condition input '{}' {}",
             ctx.node().where(), ctx.node().inputs[1]->name, given.to_string(),
             body.inputs[1]->name, declared.to_string());
}

void infer_loop(InferContext& ctx) {
  const Graph& body = attr_graph_req(ctx.node(), "body");
  const int n_carried = ctx.num_inputs() - 2;
  const int n_scan = ctx.num_outputs() - n_carried;
  if (n_carried < 0 || n_scan < 0)
    ctx.fail_here(fmt::format("{} inputs and {} outputs do not fit Loop", ctx.num_inputs(),
                              ctx.num_outputs()));
  check_loop_cond(ctx, body);
  std::vector<TypeInfo> in = {TypeInfo::tensor(DataType::kInt64, Shape{}),
                              TypeInfo::tensor(DataType::kBool, Shape{})};
  for (int k = 0; k < n_carried; ++k)
    in.push_back(ctx.has_input(2 + k) ? ctx.input_type(2 + k) : TypeInfo{});
  std::vector<TypeInfo> out;
  // Carried values may change type across iterations: a second pass runs the body on the union
  // of the initial and the first pass's types (dims that change become unknown, so it is stable).
  // Loops nested deeper than kMaxReinferDepth keep one pass, so nesting cannot cost 2^depth.
  constexpr int kMaxReinferDepth = 8;
  const int passes = body.depth() <= kMaxReinferDepth ? 2 : 1;
  for (int pass = 0; pass < passes; ++pass) {
    out = ctx.infer_subgraph(body, in);
    if (static_cast<int>(out.size()) != 1 + n_carried + n_scan)
      ctx.fail_here(
          fmt::format("body has {} outputs, expected {}", out.size(), 1 + n_carried + n_scan));
    bool changed = false;
    for (int k = 0; k < n_carried; ++k) {
      if (kinds_differ(in[2 + k], out[1 + k])) continue;
      TypeInfo m = merge_types(in[2 + k], out[1 + k]);
      if (!same_type(m, in[2 + k])) {
        in[2 + k] = std::move(m);
        changed = true;
      }
    }
    if (!changed) break;
  }
  // A carried value whose kind changes in the body (an optional that becomes a sequence) has the
  // body's type, as ONNX infers it; otherwise the union of the initial and the body's types.
  for (int k = 0; k < n_carried; ++k)
    ctx.set_output(
        k, kinds_differ(in[2 + k], out[1 + k]) ? out[1 + k] : merge_types(in[2 + k], out[1 + k]));
  for (int j = 0; j < n_scan; ++j) {
    TypeInfo t = out[1 + n_carried + j];
    if (t.kind == TypeInfo::Kind::kTensor && t.shape)
      t.shape->insert(t.shape->begin(), Dim());
    else if (t.kind == TypeInfo::Kind::kUnknown)
      t = TypeInfo::tensor(DataType::kUndefined);
    ctx.set_output(n_carried + j, t);
  }
}

void run_loop(KernelContext& ctx) {
  const Graph& body = attr_graph_req(ctx.node(), "body");
  const int n_carried = ctx.num_inputs() - 2;
  const int n_scan = ctx.num_outputs() - n_carried;
  if (n_carried < 0 || n_scan < 0) ctx.fail_here("input and output counts do not fit Loop");
  int64_t max_trips = std::numeric_limits<int64_t>::max();
  if (ctx.has_input(0)) {
    const Tensor& m = ctx.input(0);
    if (m.numel() != 1) ctx.fail_here("trip count M must have one element");
    max_trips = m.get_i64(0);
  }
  bool cond = true;
  if (ctx.has_input(1)) cond = truthy(ctx, ctx.input_value(1), "the Loop condition");
  std::vector<RtValue> carried;
  for (int k = 0; k < n_carried; ++k) carried.push_back(input_or_none(ctx, 2 + k));
  std::vector<std::vector<Tensor>> scans(n_scan);
  for (int64_t it = 0; it < max_trips && cond; ++it) {
    std::vector<RtValue> in;
    in.reserve(2 + n_carried);
    in.push_back(RtValue::of(scalar_int64(it)));
    in.push_back(RtValue::of(scalar_bool(cond)));
    for (auto& v : carried) in.push_back(std::move(v));
    std::vector<RtValue> out = ctx.run_subgraph(body, std::move(in));
    if (static_cast<int>(out.size()) != 1 + n_carried + n_scan)
      ctx.fail_here(
          fmt::format("body gave {} outputs, expected {}", out.size(), 1 + n_carried + n_scan));
    cond = truthy(ctx, out[0], "the body's condition output");
    for (int k = 0; k < n_carried; ++k) carried[k] = std::move(out[1 + k]);
    for (int j = 0; j < n_scan; ++j) {
      RtValue& v = out[1 + n_carried + j];
      if (!v.is_tensor())
        ctx.fail_here(fmt::format("scan output {} is {}, expected a tensor", j, v.describe()));
      if (!scans[j].empty() &&
          (scans[j][0].dims() != v.tensor.dims() || scans[j][0].dtype() != v.tensor.dtype()))
        ctx.fail_here(fmt::format("scan output {} changes shape across iterations: {} then {}", j,
                                  dims_to_string(scans[j][0].dims()),
                                  dims_to_string(v.tensor.dims())));
      scans[j].push_back(std::move(v.tensor));
    }
  }
  for (int k = 0; k < n_carried; ++k) ctx.set_output(k, std::move(carried[k]));
  for (int j = 0; j < n_scan; ++j) {
    if (!ctx.wants_output(n_carried + j)) continue;
    ctx.set_output(n_carried + j, scans[j].empty() ? empty_scan_output(ctx.node(), n_carried + j, 0)
                                                   : stack_along(ctx.node(), scans[j], 0));
  }
}

// ---------------------------------------------------------------------------------------------
// Scan. Opset 9+: inputs (state..., scan...); opset 8: (sequence_lens?, state..., scan...) with a
// leading batch axis on everything.

struct ScanAttrs {
  int n_state = 0, n_scan_in = 0, n_scan_out = 0;
  std::vector<int64_t> in_axes, in_dirs, out_axes, out_dirs;
};

ScanAttrs scan_attrs(const Node& n, int num_inputs, int num_outputs, bool v8) {
  ScanAttrs a;
  a.n_scan_in = static_cast<int>(attr_int_req(n, "num_scan_inputs"));
  const int first = v8 ? 1 : 0;
  a.n_state = num_inputs - first - a.n_scan_in;
  a.n_scan_out = num_outputs - a.n_state;
  KILN_CHECK(a.n_scan_in >= 0 && a.n_state >= 0 && a.n_scan_out >= 0, ErrorKind::kBadModel,
             "{}num_scan_inputs {} does not fit {} inputs and {} outputs", n.where(), a.n_scan_in,
             num_inputs, num_outputs);
  auto sized = [&](const char* name, int count) {
    auto v = attr_ints(n, name, std::vector<int64_t>(count, 0));
    KILN_CHECK(static_cast<int>(v.size()) == count, ErrorKind::kBadModel,
               "{}attribute '{}' has {} entries, expected {}", n.where(), name, v.size(), count);
    return v;
  };
  if (v8) {
    a.in_axes.assign(a.n_scan_in, 0);
    a.in_dirs = sized("directions", a.n_scan_in);
    a.out_axes.assign(a.n_scan_out, 0);
    a.out_dirs.assign(a.n_scan_out, 0);
  } else {
    a.in_axes = sized("scan_input_axes", a.n_scan_in);
    a.in_dirs = sized("scan_input_directions", a.n_scan_in);
    a.out_axes = sized("scan_output_axes", a.n_scan_out);
    a.out_dirs = sized("scan_output_directions", a.n_scan_out);
  }
  return a;
}

std::optional<Shape> drop_dims(const std::optional<Shape>& s, std::initializer_list<int> axes) {
  if (!s) return std::nullopt;
  Shape r = *s;
  // axes in decreasing order
  for (int ax : axes) {
    if (ax < 0 || ax >= static_cast<int>(r.size())) return std::nullopt;
    r.erase(r.begin() + ax);
  }
  return r;
}

void infer_scan(InferContext& ctx) {
  const Node& n = ctx.node();
  const bool v8 = ctx.opset() < 9;
  const Graph& body = attr_graph_req(n, "body");
  const ScanAttrs a = scan_attrs(n, ctx.num_inputs(), ctx.num_outputs(), v8);
  const int first = v8 ? 1 : 0;
  std::vector<TypeInfo> in;
  Dim batch, seq;
  for (int k = 0; k < a.n_state; ++k) {
    TypeInfo t = ctx.input_type(first + k);
    if (v8) {
      if (t.shape && !t.shape->empty()) batch = (*t.shape)[0];
      t.shape = drop_dims(t.shape, {0});
    }
    in.push_back(std::move(t));
  }
  for (int j = 0; j < a.n_scan_in; ++j) {
    TypeInfo t = ctx.input_type(first + a.n_state + j);
    const int rank = t.shape ? static_cast<int>(t.shape->size()) : -1;
    if (v8) {
      if (rank >= 2) {
        if (j == 0) seq = (*t.shape)[1];
        batch = (*t.shape)[0];
      }
      t.shape = drop_dims(t.shape, {1, 0});
    } else if (rank >= 0) {
      if (rank == 0) ctx.fail_here("a scan input must have rank >= 1");
      const int ax = normalize_axis(n, a.in_axes[j], rank);
      if (j == 0) seq = (*t.shape)[ax];
      t.shape = drop_dims(t.shape, {ax});
    }
    in.push_back(std::move(t));
  }
  std::vector<TypeInfo> out = ctx.infer_subgraph(body, in);
  if (static_cast<int>(out.size()) != a.n_state + a.n_scan_out)
    ctx.fail_here(
        fmt::format("body has {} outputs, expected {}", out.size(), a.n_state + a.n_scan_out));
  for (int k = 0; k < a.n_state; ++k) {
    TypeInfo t = merge_types(in[k], out[k]);
    if (v8 && t.shape) t.shape->insert(t.shape->begin(), batch);
    ctx.set_output(k, t);
  }
  for (int j = 0; j < a.n_scan_out; ++j) {
    TypeInfo t = out[a.n_state + j];
    if (t.kind == TypeInfo::Kind::kUnknown) t = TypeInfo::tensor(DataType::kUndefined);
    if (t.shape) {
      if (v8) {
        t.shape->insert(t.shape->begin(), seq);
        t.shape->insert(t.shape->begin(), batch);
      } else {
        const int r = static_cast<int>(t.shape->size()) + 1;
        const int ax = normalize_axis(n, a.out_axes[j], r);
        t.shape->insert(t.shape->begin() + ax, seq);
      }
    }
    ctx.set_output(a.n_state + j, t);
  }
}

// Runs the scan over one set of (unbatched) states and scan inputs.
// Returns final states, and scan outputs stacked along their axes.
void scan_once(KernelContext& ctx, const Graph& body, const ScanAttrs& a,
               std::vector<Tensor> states, const std::vector<Tensor>& scan_in,
               const std::vector<int>& in_axes, int64_t seq_len, std::vector<Tensor>& final_states,
               std::vector<Tensor>& scan_out, const std::vector<int>& out_axes) {
  std::vector<std::vector<Tensor>> parts(a.n_scan_out);
  for (int64_t t = 0; t < seq_len; ++t) {
    std::vector<RtValue> in;
    for (auto& s : states) in.push_back(RtValue::of(std::move(s)));
    for (int j = 0; j < a.n_scan_in; ++j) {
      const int64_t idx = a.in_dirs[j] ? seq_len - 1 - t : t;
      in.push_back(RtValue::of(take_along(scan_in[j], in_axes[j], idx)));
    }
    std::vector<RtValue> out = ctx.run_subgraph(body, std::move(in));
    if (static_cast<int>(out.size()) != a.n_state + a.n_scan_out)
      ctx.fail_here(
          fmt::format("body gave {} outputs, expected {}", out.size(), a.n_state + a.n_scan_out));
    for (int k = 0; k < a.n_state + a.n_scan_out; ++k)
      if (!out[k].is_tensor())
        ctx.fail_here(fmt::format("body output {} is {}, expected a tensor", k, out[k].describe()));
    for (int k = 0; k < a.n_state; ++k) states[k] = std::move(out[k].tensor);
    for (int j = 0; j < a.n_scan_out; ++j) parts[j].push_back(std::move(out[a.n_state + j].tensor));
  }
  final_states = std::move(states);
  scan_out.clear();
  for (int j = 0; j < a.n_scan_out; ++j) {
    if (parts[j].empty()) {
      scan_out.emplace_back();
      continue;
    }
    if (a.out_dirs[j]) std::reverse(parts[j].begin(), parts[j].end());
    const int r = parts[j][0].rank() + 1;
    scan_out.push_back(
        stack_along(ctx.node(), parts[j], normalize_axis(ctx.node(), out_axes[j], r)));
  }
}

void run_scan(KernelContext& ctx) {
  const Node& n = ctx.node();
  const bool v8 = ctx.opset() < 9;
  const Graph& body = attr_graph_req(n, "body");
  const ScanAttrs a = scan_attrs(n, ctx.num_inputs(), ctx.num_outputs(), v8);
  const int first = v8 ? 1 : 0;
  std::vector<Tensor> states, scans;
  for (int k = 0; k < a.n_state; ++k) states.push_back(ctx.input(first + k));
  for (int j = 0; j < a.n_scan_in; ++j) scans.push_back(ctx.input(first + a.n_state + j));

  if (!v8) {
    std::vector<int> in_axes, out_axes;
    int64_t seq_len = -1;
    for (int j = 0; j < a.n_scan_in; ++j) {
      const int ax = normalize_axis(n, a.in_axes[j], scans[j].rank());
      if (scans[j].rank() == 0) ctx.fail_here("a scan input must have rank >= 1");
      in_axes.push_back(ax);
      const int64_t len = scans[j].dim(ax);
      if (seq_len >= 0 && len != seq_len)
        ctx.fail_here(fmt::format("scan inputs have different lengths: {} and {}", seq_len, len));
      seq_len = len;
    }
    if (seq_len < 0) seq_len = 0;
    for (int j = 0; j < a.n_scan_out; ++j) out_axes.push_back(static_cast<int>(a.out_axes[j]));
    std::vector<Tensor> fin, outs;
    scan_once(ctx, body, a, states, scans, in_axes, seq_len, fin, outs, out_axes);
    for (int k = 0; k < a.n_state; ++k) ctx.set_output(k, std::move(fin[k]));
    for (int j = 0; j < a.n_scan_out; ++j) {
      if (!outs[j].defined()) {
        // zero iterations: the axis is the output's; rank from the node's type when known
        int ax = static_cast<int>(a.out_axes[j]);
        if (ax < 0) {
          const TypeInfo* t = n.outputs[a.n_state + j] ? &n.outputs[a.n_state + j]->type : nullptr;
          ax = t && t->shape ? ax + static_cast<int>(t->shape->size()) : 0;
        }
        outs[j] = empty_scan_output(n, a.n_state + j, std::max(ax, 0));
      }
      ctx.set_output(a.n_state + j, std::move(outs[j]));
    }
    return;
  }

  // Scan-8: batch axis 0 everywhere, the sequence axis is 1 of the scan inputs.
  int64_t batch = -1, max_len = -1;
  for (const Tensor& s : states) {
    if (s.rank() < 1) ctx.fail_here("a Scan-8 state must have a batch axis");
    batch = s.dim(0);
  }
  for (const Tensor& s : scans) {
    if (s.rank() < 2) ctx.fail_here("a Scan-8 scan input must have rank >= 2");
    if (batch >= 0 && s.dim(0) != batch) ctx.fail_here("batch sizes differ");
    batch = s.dim(0);
    if (max_len >= 0 && s.dim(1) != max_len) ctx.fail_here("sequence lengths differ");
    max_len = s.dim(1);
  }
  if (batch < 0) batch = 0;
  if (max_len < 0) max_len = 0;
  std::vector<int64_t> lens(batch, max_len);
  if (ctx.has_input(0)) {
    const Tensor& sl = ctx.input(0);
    if (sl.numel() != batch) ctx.fail_here("sequence_lens must have one entry per batch item");
    for (int64_t b = 0; b < batch; ++b) {
      lens[b] = sl.get_i64(b);
      if (lens[b] < 0 || lens[b] > max_len)
        ctx.fail_here(fmt::format("sequence length {} out of range [0, {}]", lens[b], max_len));
    }
  }
  std::vector<int> in_axes(a.n_scan_in, 0), out_axes(a.n_scan_out, 0);
  std::vector<Tensor> final_states(a.n_state), scan_outs(a.n_scan_out);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Tensor> st, sc;
    for (const Tensor& s : states) st.push_back(take_along(s, 0, b));
    for (const Tensor& s : scans) {
      Tensor item = take_along(s, 0, b);
      if (lens[b] != max_len) {
        // keep the first lens[b] steps
        std::vector<int64_t> d = item.dims();
        d[0] = lens[b];
        Tensor cut(item.dtype(), d);
        copy_elements(cut, 0, item, 0, cut.numel());
        item = std::move(cut);
      }
      sc.push_back(std::move(item));
    }
    std::vector<Tensor> fin, outs;
    scan_once(ctx, body, a, st, sc, in_axes, lens[b], fin, outs, out_axes);
    for (int k = 0; k < a.n_state; ++k) {
      if (!final_states[k].defined()) {
        std::vector<int64_t> d = fin[k].dims();
        d.insert(d.begin(), batch);
        final_states[k] = Tensor(fin[k].dtype(), d);
      }
      put_along(final_states[k], 0, b, fin[k]);
    }
    for (int j = 0; j < a.n_scan_out; ++j) {
      if (!outs[j].defined()) continue;  // zero steps: stays zero-padded
      if (!scan_outs[j].defined()) {
        std::vector<int64_t> d = outs[j].dims();
        d[0] = max_len;
        d.insert(d.begin(), batch);
        scan_outs[j] = Tensor(outs[j].dtype(), d);
      }
      // outs[j] is [lens[b], ...]; padded with zeros to max_len
      Tensor padded = outs[j];
      if (lens[b] != max_len) {
        std::vector<int64_t> d = outs[j].dims();
        d[0] = max_len;
        padded = Tensor(outs[j].dtype(), d);
        copy_elements(padded, 0, outs[j], 0, outs[j].numel());
      }
      put_along(scan_outs[j], 0, b, padded);
    }
  }
  for (int k = 0; k < a.n_state; ++k) {
    if (!final_states[k].defined()) final_states[k] = states[k];
    ctx.set_output(k, std::move(final_states[k]));
  }
  for (int j = 0; j < a.n_scan_out; ++j) {
    if (!scan_outs[j].defined()) scan_outs[j] = empty_scan_output(n, a.n_state + j, 1, 1);
    ctx.set_output(a.n_state + j, std::move(scan_outs[j]));
  }
}

}  // namespace

void register_control_flow_ops(OpRegistry& r) {
  r.add("", "If")
      .versions(1)
      .inputs(1, 1)
      .outputs(1, -1)
      .attr("then_branch", AttrKind::kGraph, true)
      .attr("else_branch", AttrKind::kGraph, true)
      .shape(infer_if)
      .run(run_if);
  r.add("", "Loop")
      .versions(1)
      .inputs(0, -1)  // M and cond are optional (and may be empty names)
      .outputs(1, -1)
      .attr("body", AttrKind::kGraph, true)
      .shape(infer_loop)
      .run(run_loop);
  r.add("", "Scan")
      .versions(8)
      .inputs(0, -1)  // Scan-8's first input (sequence_lens) may be empty
      .outputs(1, -1)
      .attr("body", AttrKind::kGraph, true)
      .attr("num_scan_inputs", AttrKind::kInt, true)
      .attr("directions", AttrKind::kInts)
      .attr("scan_input_axes", AttrKind::kInts)
      .attr("scan_input_directions", AttrKind::kInts)
      .attr("scan_output_axes", AttrKind::kInts)
      .attr("scan_output_directions", AttrKind::kInts)
      .shape(infer_scan)
      .run(run_scan);
}

}  // namespace kiln
