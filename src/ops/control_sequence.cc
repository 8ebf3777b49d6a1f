// Sequences and optionals: SequenceEmpty/Construct/Insert/At/Erase/Length, SplitToSequence,
// ConcatFromSequence, SequenceMap, Optional, OptionalHasElement, OptionalGetElement.
//
// At run time a sequence is an RtValue of kind kSequence; an optional holding a value is that value
// itself, and an empty optional is kNone.
#include "ops/control_common.h"
#include "ops/kernel_util.h"
#include "support/error.h"

namespace kiln {

using namespace control;

namespace {

// The element type of a sequence type (unknown when not known).
TypeInfo elem_of(const TypeInfo& t) {
  if ((t.kind == TypeInfo::Kind::kSequence || t.kind == TypeInfo::Kind::kOptional) && t.inner)
    return *t.inner;
  return TypeInfo{};
}

const std::vector<Tensor>& seq_input(const KernelContext& ctx, int i) {
  const RtValue& v = ctx.input_value(i);
  if (!v.is_sequence())
    ctx.fail_here(fmt::format("input {} is {}, expected a sequence", i, v.describe()));
  return v.sequence;
}

// A position input (scalar int32/int64) normalized against a sequence of n items.
// insert: valid range [-n, n]; otherwise [-n, n-1].
int64_t position(const KernelContext& ctx, int i, int64_t n, bool insert) {
  const Tensor& p = ctx.input(i);
  if (p.numel() != 1) ctx.fail_here("position must be a scalar");
  int64_t pos = p.get_i64(0);
  const int64_t hi = insert ? n : n - 1;
  if (pos < -n || pos > hi)
    ctx.fail_here(fmt::format("position {} out of range [{}, {}]", pos, -n, hi));
  if (pos < 0) pos += n;
  return pos;
}

void check_same_dtype(const KernelContext& ctx, const std::vector<Tensor>& seq, const Tensor& t) {
  if (!seq.empty() && seq[0].dtype() != t.dtype())
    ctx.fail_here(fmt::format("tensor of type {} does not fit a sequence of {}",
                              dtype_name(t.dtype()), dtype_name(seq[0].dtype())));
}

// ---------------------------------------------------------------------------------------------

void infer_sequence_empty(InferContext& ctx) {
  const auto dt = static_cast<DataType>(attr_int(ctx.node(), "dtype", int64_t(DataType::kFloat)));
  if (!is_valid_dtype(static_cast<int32_t>(dt)) || dt == DataType::kUndefined)
    ctx.fail_here(fmt::format("invalid dtype {}", static_cast<int>(dt)));
  ctx.set_output(0, TypeInfo::sequence(TypeInfo::tensor(dt)));
}

void run_sequence_empty(KernelContext& ctx) { ctx.set_output(0, RtValue::of_sequence({})); }

void infer_sequence_construct(InferContext& ctx) {
  TypeInfo e = ctx.input_type(0);
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    const TypeInfo& t = ctx.input_type(i);
    if (t.elem != DataType::kUndefined && e.elem != DataType::kUndefined && t.elem != e.elem)
      ctx.fail_here(fmt::format("inputs have different types: {} and {}", dtype_name(e.elem),
                                dtype_name(t.elem)));
    e = merge_types(e, t);
  }
  ctx.set_output(0, TypeInfo::sequence(e));
}

void run_sequence_construct(KernelContext& ctx) {
  std::vector<Tensor> seq;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& t = ctx.input(i);
    check_same_dtype(ctx, seq, t);
    seq.push_back(t);
  }
  ctx.set_output(0, RtValue::of_sequence(std::move(seq)));
}

// Union of a sequence's element type with a tensor type being added. An element type that is not
// known at all (no dtype, no shape) takes the tensor's.
TypeInfo add_to_elem(const TypeInfo& elem, const TypeInfo& t) {
  if (elem.kind == TypeInfo::Kind::kUnknown || (elem.elem == DataType::kUndefined && !elem.shape))
    return t;
  return merge_types(elem, t);
}

void infer_sequence_insert(InferContext& ctx) {
  const TypeInfo e = elem_of(ctx.input_type(0));
  const TypeInfo& t = ctx.input_type(1);
  if (e.elem != DataType::kUndefined && t.elem != DataType::kUndefined && e.elem != t.elem)
    ctx.fail_here(
        fmt::format("inserting {} into a sequence of {}", dtype_name(t.elem), dtype_name(e.elem)));
  ctx.set_output(0, TypeInfo::sequence(add_to_elem(e, t)));
}

void run_sequence_insert(KernelContext& ctx) {
  std::vector<Tensor> seq = seq_input(ctx, 0);
  const Tensor& t = ctx.input(1);
  check_same_dtype(ctx, seq, t);
  const int64_t n = static_cast<int64_t>(seq.size());
  const int64_t pos = ctx.has_input(2) ? position(ctx, 2, n, true) : n;
  seq.insert(seq.begin() + pos, t);
  ctx.set_output(0, RtValue::of_sequence(std::move(seq)));
}

void infer_sequence_at(InferContext& ctx) {
  TypeInfo e = elem_of(ctx.input_type(0));
  if (e.kind == TypeInfo::Kind::kUnknown) e = TypeInfo::tensor(DataType::kUndefined);
  ctx.set_output(0, e);
}

void run_sequence_at(KernelContext& ctx) {
  const auto& seq = seq_input(ctx, 0);
  const int64_t pos = position(ctx, 1, static_cast<int64_t>(seq.size()), false);
  ctx.set_output(0, seq[pos]);
}

void infer_sequence_erase(InferContext& ctx) { ctx.set_output(0, ctx.input_type(0)); }

void run_sequence_erase(KernelContext& ctx) {
  std::vector<Tensor> seq = seq_input(ctx, 0);
  const int64_t n = static_cast<int64_t>(seq.size());
  if (n == 0) ctx.fail_here("erasing from an empty sequence");
  const int64_t pos = ctx.has_input(1) ? position(ctx, 1, n, false) : n - 1;
  seq.erase(seq.begin() + pos);
  ctx.set_output(0, RtValue::of_sequence(std::move(seq)));
}

void infer_sequence_length(InferContext& ctx) { ctx.set_output(0, DataType::kInt64, Shape{}); }

void run_sequence_length(KernelContext& ctx) {
  ctx.set_output(0, scalar_int64(static_cast<int64_t>(seq_input(ctx, 0).size())));
}

// ---------------------------------------------------------------------------------------------
// SplitToSequence(input, split?) axis=0 keepdims=1

void infer_split_to_sequence(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  std::optional<Shape> es;
  if (in.shape) {
    const int rank = static_cast<int>(in.shape->size());
    if (rank == 0) ctx.fail_here("cannot split a scalar");
    const int axis = normalize_axis(ctx.node(), attr_int(ctx.node(), "axis", 0), rank);
    Shape s = *in.shape;
    if (!ctx.has_input(1)) {
      if (attr_int(ctx.node(), "keepdims", 1))
        s[axis] = 1;
      else
        s.erase(s.begin() + axis);
    } else {
      Dim d;  // the chunk size when all chunks are equal for sure
      if (const Tensor* c = ctx.input_constant(1)) {
        if (c->rank() == 0) {
          const int64_t k = c->get_i64(0);
          if ((*in.shape)[axis].is_known() && k > 0 && (*in.shape)[axis].value() % k == 0) d = k;
        } else if (c->numel() > 0) {
          bool eq = true;
          for (int64_t i = 1; i < c->numel(); ++i) eq = eq && c->get_i64(i) == c->get_i64(0);
          if (eq) d = c->get_i64(0);
        }
      }
      s[axis] = d;
    }
    es = std::move(s);
  }
  ctx.set_output(0, TypeInfo::sequence(TypeInfo::tensor(in.elem, es)));
}

void run_split_to_sequence(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() == 0) ctx.fail_here("cannot split a scalar");
  const int axis = normalize_axis(ctx.node(), attr_int(ctx.node(), "axis", 0), x.rank());
  const int64_t len = x.dim(axis);
  std::vector<int64_t> sizes;
  bool squeeze = false;
  if (!ctx.has_input(1)) {
    sizes.assign(len, 1);
    squeeze = attr_int(ctx.node(), "keepdims", 1) == 0;
  } else {
    const Tensor& sp = ctx.input(1);
    if (sp.rank() == 0) {
      const int64_t k = sp.get_i64(0);
      if (k <= 0) ctx.fail_here(fmt::format("split size {} must be positive", k));
      for (int64_t off = 0; off < len; off += k) sizes.push_back(std::min(k, len - off));
    } else if (sp.rank() == 1) {
      int64_t sum = 0;
      for (int64_t i = 0; i < sp.numel(); ++i) {
        const int64_t k = sp.get_i64(i);
        if (k < 0) ctx.fail_here(fmt::format("split size {} is negative", k));
        sizes.push_back(k);
        sum += k;
      }
      if (sum != len)
        ctx.fail_here(fmt::format("split sizes sum to {}, the axis has {}", sum, len));
    } else {
      ctx.fail_here("split must be a scalar or 1-D");
    }
  }
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  std::vector<Tensor> seq;
  int64_t start = 0;
  for (int64_t k : sizes) {
    std::vector<int64_t> dims = x.dims();
    dims[axis] = k;
    Tensor part(x.dtype(), dims);
    for (int64_t o = 0; o < outer; ++o)
      copy_elements(part, o * k * inner, x, (o * len + start) * inner, k * inner);
    if (squeeze) {
      dims.erase(dims.begin() + axis);
      part = part.reshaped(dims);
    }
    seq.push_back(std::move(part));
    start += k;
  }
  ctx.set_output(0, RtValue::of_sequence(std::move(seq)));
}

// ---------------------------------------------------------------------------------------------
// ConcatFromSequence(seq) axis (required), new_axis=0

void infer_concat_from_sequence(InferContext& ctx) {
  const TypeInfo e = elem_of(ctx.input_type(0));
  const bool new_axis = attr_int(ctx.node(), "new_axis", 0) != 0;
  const int64_t axis_attr = attr_int_req(ctx.node(), "axis");
  std::optional<Shape> s;
  if (e.shape) {
    const int rank = static_cast<int>(e.shape->size());
    s = *e.shape;
    if (new_axis) {
      const int ax = normalize_axis(ctx.node(), axis_attr, rank + 1);
      s->insert(s->begin() + ax, Dim());
    } else {
      if (rank == 0) ctx.fail_here("cannot concatenate scalars without new_axis");
      const int ax = normalize_axis(ctx.node(), axis_attr, rank);
      (*s)[ax] = Dim();
    }
  }
  ctx.set_output(0, e.elem, s);
}

void run_concat_from_sequence(KernelContext& ctx) {
  const auto& seq = seq_input(ctx, 0);
  if (seq.empty()) ctx.fail_here("cannot concatenate an empty sequence");
  const bool new_axis = attr_int(ctx.node(), "new_axis", 0) != 0;
  const int64_t axis_attr = attr_int_req(ctx.node(), "axis");
  const Tensor& first = seq[0];
  if (new_axis) {
    const int ax = normalize_axis(ctx.node(), axis_attr, first.rank() + 1);
    ctx.set_output(0, stack_along(ctx.node(), seq, ax));
    return;
  }
  if (first.rank() == 0) ctx.fail_here("cannot concatenate scalars without new_axis");
  const int ax = normalize_axis(ctx.node(), axis_attr, first.rank());
  std::vector<int64_t> dims = first.dims();
  int64_t total = 0;
  for (const Tensor& t : seq) {
    bool ok = t.dtype() == first.dtype() && t.rank() == first.rank();
    for (int d = 0; ok && d < t.rank(); ++d) ok = d == ax || t.dim(d) == first.dim(d);
    if (!ok)
      ctx.fail_here(fmt::format("cannot concatenate {} {} with {} {} on axis {}",
                                dtype_name(first.dtype()), dims_to_string(first.dims()),
                                dtype_name(t.dtype()), dims_to_string(t.dims()), ax));
    total += t.dim(ax);
  }
  dims[ax] = total;
  Tensor out(first.dtype(), dims);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < ax; ++d) outer *= dims[d];
  for (int d = ax + 1; d < first.rank(); ++d) inner *= dims[d];
  int64_t start = 0;
  for (const Tensor& t : seq) {
    const int64_t k = t.dim(ax);
    for (int64_t o = 0; o < outer; ++o)
      copy_elements(out, (o * total + start) * inner, t, o * k * inner, k * inner);
    start += k;
  }
  ctx.set_output(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// SequenceMap(seq, extra...) body: one iteration per element of seq; extra sequences are walked
// alongside, extra tensors are passed whole every time.

void infer_sequence_map(InferContext& ctx) {
  const Graph& body = attr_graph_req(ctx.node(), "body");
  std::vector<TypeInfo> in;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const TypeInfo& t = ctx.input_type(i);
    in.push_back(t.kind == TypeInfo::Kind::kSequence ? elem_of(t) : t);
  }
  const auto out = ctx.infer_subgraph(body, in);
  if (static_cast<int>(out.size()) != ctx.num_outputs())
    ctx.fail_here(fmt::format("body has {} outputs, the node {}", out.size(), ctx.num_outputs()));
  for (int k = 0; k < ctx.num_outputs(); ++k) ctx.set_output(k, TypeInfo::sequence(out[k]));
}

void run_sequence_map(KernelContext& ctx) {
  const Graph& body = attr_graph_req(ctx.node(), "body");
  const auto& seq0 = seq_input(ctx, 0);
  const size_t n = seq0.size();
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    const RtValue& v = ctx.input_value(i);
    if (v.is_sequence() && v.sequence.size() != n)
      ctx.fail_here(fmt::format("input {} has {} items, input 0 has {}", i, v.sequence.size(), n));
  }
  std::vector<std::vector<Tensor>> outs(ctx.num_outputs());
  for (size_t it = 0; it < n; ++it) {
    std::vector<RtValue> in;
    in.push_back(RtValue::of(seq0[it]));
    for (int i = 1; i < ctx.num_inputs(); ++i) {
      const RtValue& v = ctx.input_value(i);
      in.push_back(v.is_sequence() ? RtValue::of(v.sequence[it]) : v);
    }
    auto out = ctx.run_subgraph(body, std::move(in));
    if (static_cast<int>(out.size()) != ctx.num_outputs())
      ctx.fail_here(
          fmt::format("body gave {} outputs, expected {}", out.size(), ctx.num_outputs()));
    for (int k = 0; k < ctx.num_outputs(); ++k) {
      if (!out[k].is_tensor())
        ctx.fail_here(fmt::format("body output {} is {}, expected a tensor", k, out[k].describe()));
      outs[k].push_back(std::move(out[k].tensor));
    }
  }
  for (int k = 0; k < ctx.num_outputs(); ++k)
    ctx.set_output(k, RtValue::of_sequence(std::move(outs[k])));
}

// ---------------------------------------------------------------------------------------------
// Optionals

void infer_optional(InferContext& ctx) {
  if (ctx.has_input(0)) {
    ctx.set_output(0, TypeInfo::optional(ctx.input_type(0)));
    return;
  }
  const Attribute* a = ctx.node().attr("type");
  if (!a || a->kind != AttrKind::kTypeProto)
    ctx.fail_here("an Optional without input needs the 'type' attribute");
  ctx.set_output(0, TypeInfo::optional(a->tp));
}

void run_optional(KernelContext& ctx) {
  if (ctx.node().has_input(0)) {
    ctx.set_output(0, ctx.input_value(0));
    return;
  }
  RtValue none;
  if (const Attribute* a = ctx.node().attr("type"); a && a->kind == AttrKind::kTypeProto)
    none.none_type = a->tp;
  ctx.set_output(0, std::move(none));
}

void infer_optional_has_element(InferContext& ctx) { ctx.set_output(0, DataType::kBool, Shape{}); }

void run_optional_has_element(KernelContext& ctx) {
  const bool has = ctx.node().has_input(0) && !input_or_none(ctx, 0).is_none();
  ctx.set_output(0, scalar_bool(has));
}

void infer_optional_get_element(InferContext& ctx) {
  const TypeInfo& t = ctx.input_type(0);
  if (t.kind == TypeInfo::Kind::kOptional) {
    ctx.set_output(0, t.inner ? *t.inner : TypeInfo{});
    return;
  }
  if (ctx.opset() < 18 && t.kind != TypeInfo::Kind::kUnknown)
    ctx.fail_here("OptionalGetElement before opset 18 takes an optional");
  ctx.set_output(0, t);
}

void run_optional_get_element(KernelContext& ctx) {
  RtValue v = input_or_none(ctx, 0);
  if (v.is_none()) ctx.fail_here("the optional is empty");
  ctx.set_output(0, std::move(v));
}

}  // namespace

void register_control_sequence_ops(OpRegistry& r) {
  r.add("", "SequenceEmpty")
      .versions(11)
      .inputs(0, 0)
      .attr("dtype", AttrKind::kInt)
      .shape(infer_sequence_empty)
      .run(run_sequence_empty);
  r.add("", "SequenceConstruct")
      .versions(11)
      .inputs(1, -1)
      .shape(infer_sequence_construct)
      .run(run_sequence_construct);
  r.add("", "SequenceInsert")
      .versions(11)
      .inputs(2, 3)
      .shape(infer_sequence_insert)
      .run(run_sequence_insert);
  r.add("", "SequenceAt").versions(11).inputs(2, 2).shape(infer_sequence_at).run(run_sequence_at);
  r.add("", "SequenceErase")
      .versions(11)
      .inputs(1, 2)
      .shape(infer_sequence_erase)
      .run(run_sequence_erase);
  r.add("", "SequenceLength")
      .versions(11)
      .inputs(1, 1)
      .shape(infer_sequence_length)
      .run(run_sequence_length);
  r.add("", "SplitToSequence")
      .versions(11)
      .inputs(1, 2)
      .attr("axis", AttrKind::kInt)
      .attr("keepdims", AttrKind::kInt)
      .shape(infer_split_to_sequence)
      .run(run_split_to_sequence);
  r.add("", "ConcatFromSequence")
      .versions(11)
      .inputs(1, 1)
      .attr("axis", AttrKind::kInt, true)
      .attr("new_axis", AttrKind::kInt)
      .shape(infer_concat_from_sequence)
      .run(run_concat_from_sequence);
  r.add("", "SequenceMap")
      .versions(17)
      .inputs(1, -1)
      .outputs(1, -1)
      .attr("body", AttrKind::kGraph, true)
      .shape(infer_sequence_map)
      .run(run_sequence_map);
  r.add("", "Optional")
      .versions(15)
      .inputs(0, 1)
      .attr("type", AttrKind::kTypeProto)
      .shape(infer_optional)
      .run(run_optional);
  r.add("", "OptionalHasElement")
      .versions(15)
      .inputs(0, 1)
      .shape(infer_optional_has_element)
      .run(run_optional_has_element);
  r.add("", "OptionalGetElement")
      .versions(15)
      .inputs(1, 1)
      .shape(infer_optional_get_element)
      .run(run_optional_get_element);
}

}  // namespace kiln
