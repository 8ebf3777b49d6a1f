// Padding and cropping: Pad (constant, reflect, edge and wrap modes; negative pads crop) and
// CenterCropPad.
#include <algorithm>
#include <climits>

#include "ops/pad_geometry.h"
#include "ops/tensor_common.h"

namespace kiln {
namespace {
using namespace tensor_ops;

// d + v for a dim and an integer that may be negative.
Dim add_int(const Dim& d, int64_t v) {
  if (v == INT64_MIN) return Dim();
  return v >= 0 ? dim_add(d, Dim(v)) : d - Dim(-v);
}

// dst[dst_off + idx.dst_strides] = src[src_off + idx.src_strides] for every idx of dims.
template <typename S>
void copy_region(S* dst, const std::vector<int64_t>& dst_strides, int64_t dst_off, const S* src,
                 const std::vector<int64_t>& src_strides, int64_t src_off,
                 const std::vector<int64_t>& dims) {
  const int rank = static_cast<int>(dims.size());
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  if (total == 0) return;
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < total; ++i) {
    dst[dst_off] = src[src_off];
    for (int k = rank - 1; k >= 0; --k) {
      dst_off += dst_strides[k];
      src_off += src_strides[k];
      if (++idx[k] < dims[k]) break;
      dst_off -= dst_strides[k] * dims[k];
      src_off -= src_strides[k] * dims[k];
      idx[k] = 0;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Pad

PadMode pad_mode(const Node& n) {
  const std::string m = attr_string(n, "mode", "constant");
  const auto mode = parse_pad_mode(m);
  if (!mode) fail(ErrorKind::kBadModel, "{}unknown pad mode '{}'", n.where(), m);
  return *mode;
}

void infer_pad(InferContext& ctx) {
  const DataType dt = ctx.input_dtype(0);
  const Shape* in = input_shape_ptr(ctx, 0);
  pad_mode(ctx.node());
  if (!in) {
    ctx.set_output(0, dt, std::nullopt);
    return;
  }
  const int rank = static_cast<int>(in->size());
  auto pads = input_exact_ints(ctx, 1);
  std::optional<std::vector<int64_t>> axes;
  if (ctx.has_input(3)) axes = input_exact_ints(ctx, 3);
  if (!pads || (ctx.has_input(3) && !axes)) {
    ctx.set_output(0, dt, unknown_shape(rank));
    return;
  }
  std::string error;
  const auto per_axis = pads_per_axis(*pads, axes, rank, &error);
  if (!per_axis) ctx.fail_here(error);
  Shape out(rank);
  for (int k = 0; k < rank; ++k) {
    auto [b, e] = (*per_axis)[k];
    auto total = checked_add(b, e);
    out[k] = total ? add_int((*in)[k], *total) : Dim();
    if (out[k].is_known() && (*in)[k].is_known() && (*in)[k].value() + *total < 0)
      ctx.fail_here(fmt::format("pads make dim {} negative", k));
  }
  ctx.set_output(0, dt, std::move(out));
}

void run_pad(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int rank = x.rank();
  const PadMode mode = pad_mode(ctx.node());
  const auto pads = input_ints(ctx, 1, "pads");
  std::optional<std::vector<int64_t>> axes;
  if (ctx.has_input(3)) axes = input_ints(ctx, 3, "axes");
  std::string error;
  const auto geometry = pad_geometry(mode, x.dims(), pads, axes, &error);
  if (!geometry) ctx.fail_here(error);
  const std::vector<int64_t>& out_dims = geometry->out_dims;
  const std::vector<std::vector<int64_t>>& src = geometry->src;
  Tensor out = new_tensor(ctx, x.dtype(), out_dims);
  if (out.numel() == 0) {
    ctx.set_output(0, std::move(out));
    return;
  }
  const auto strides = strides_of(x.dims());
  const bool has_value = mode == PadMode::kConstant && ctx.has_input(2) && ctx.input(2).numel() > 0;
  if (has_value && ctx.input(2).dtype() != x.dtype())
    ctx.fail_here(fmt::format("constant_value is {}, the data {}", dtype_name(ctx.input(2).dtype()),
                              dtype_name(x.dtype())));
  visit_storage(ctx.node(), x.dtype(), [&]<typename S>() {
    const S value = has_value ? ctx.input(2).data<S>()[0] : S{};
    const S* in = x.data<S>();
    S* o = out.data<S>();
    std::vector<int64_t> idx(rank, 0);
    for (int64_t i = 0; i < out.numel(); ++i) {
      int64_t off = 0;
      bool constant = false;
      for (int k = 0; k < rank && !constant; ++k) {
        const int64_t s = src[k][idx[k]];
        if (s < 0) constant = true;
        else off += s * strides[k];
      }
      o[i] = constant ? value : in[off];
      for (int k = rank - 1; k >= 0; --k) {
        if (++idx[k] < out_dims[k]) break;
        idx[k] = 0;
      }
    }
  });
  ctx.set_output(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// CenterCropPad

std::vector<int64_t> crop_pad_axes(const Node& n, size_t count, int rank,
                                   const std::function<void(const std::string&)>& bad) {
  std::vector<int64_t> axes = attr_ints(n, "axes");
  if (axes.empty())
    for (int k = 0; k < rank; ++k) axes.push_back(k);
  if (axes.size() != count) bad(fmt::format("shape has {} entries for {} axes", count, axes.size()));
  std::vector<bool> seen(rank, false);
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) bad(fmt::format("axis {} out of range for rank {}", a, rank));
    if (a < 0) a += rank;
    if (seen[a]) bad(fmt::format("axis {} given twice", a));
    seen[a] = true;
  }
  return axes;
}

void infer_center_crop_pad(InferContext& ctx) {
  const DataType dt = ctx.input_dtype(0);
  const Shape* in = input_shape_ptr(ctx, 0);
  if (!in) {
    ctx.set_output(0, dt, std::nullopt);
    return;
  }
  const int rank = static_cast<int>(in->size());
  Shape out = *in;
  auto target = input_sym_ints(ctx, 1);
  auto bad = [&](const std::string& m) { ctx.fail_here(m); };
  if (target) {
    auto axes = crop_pad_axes(ctx.node(), target->size(), rank, bad);
    for (size_t i = 0; i < axes.size(); ++i) out[axes[i]] = (*target)[i].dim();
  } else if (auto a = attr_ints_opt(ctx.node(), "axes")) {
    for (int64_t ax : *a) out[infer_axis(ctx, ax, rank)] = Dim();
  } else {
    out = unknown_shape(rank);
  }
  ctx.set_output(0, dt, std::move(out));
}

void run_center_crop_pad(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int rank = x.rank();
  const auto target = input_ints(ctx, 1, "shape");
  auto axes = crop_pad_axes(ctx.node(), target.size(), rank, [&](const std::string& m) { ctx.fail_here(m); });
  std::vector<int64_t> out_dims = x.dims();
  for (size_t i = 0; i < axes.size(); ++i) {
    if (target[i] < 0) ctx.fail_here(fmt::format("shape entry {} is negative", target[i]));
    out_dims[axes[i]] = target[i];
  }
  Tensor out = new_tensor(ctx, x.dtype(), out_dims);
  std::vector<int64_t> region(rank);
  int64_t src_off = 0, dst_off = 0;
  const auto src_strides = strides_of(x.dims()), dst_strides = strides_of(out_dims);
  for (int k = 0; k < rank; ++k) {
    const int64_t d = x.dim(k), t = out_dims[k];
    region[k] = std::min(d, t);
    if (d > t) src_off += (d - t) / 2 * src_strides[k];  // crop the centre
    else dst_off += (t - d) / 2 * dst_strides[k];       // pad around it
  }
  visit_storage(ctx.node(), x.dtype(), [&]<typename S>() {
    copy_region(out.data<S>(), dst_strides, dst_off, x.data<S>(), src_strides, src_off, region);
  });
  ctx.set_output(0, std::move(out));
}

}  // namespace

void register_tensor_pad_ops(OpRegistry& r) {
  r.add("", "Pad")
      .versions(1)
      .inputs(2, 4)
      .outputs(1, 1)
      .attr("mode", AttrKind::kString)
      .shape(infer_pad)
      .run(run_pad);

  r.add("", "CenterCropPad")
      .versions(18)
      .inputs(2, 2)
      .outputs(1, 1)
      .attr("axes", AttrKind::kInts)
      .shape(infer_center_crop_pad)
      .run(run_center_crop_pad);
}

}  // namespace kiln
