// Tensor ops that rearrange or select single elements: DepthToSpace SpaceToDepth Trilu
// ReverseSequence Compress NonZero.
#include <algorithm>
#include <climits>

#include "ops/tensor_common.h"

namespace kiln {
namespace {
using namespace tensor_ops;

// ---------------------------------------------------------------------------------------------
// DepthToSpace, SpaceToDepth

void infer_depth_space(InferContext& ctx, bool to_space) {
  const DataType dt = ctx.input_dtype(0);
  const int64_t b = attr_int_req(ctx.node(), "blocksize");
  if (b <= 0) ctx.fail_here(fmt::format("blocksize {} must be positive", b));
  const Shape* in = input_shape_ptr(ctx, 0);
  if (!in) {
    ctx.set_output(0, dt, unknown_shape(4));
    return;
  }
  if (in->size() != 4) ctx.fail_here(fmt::format("input must be 4-D, has rank {}", in->size()));
  const Dim bb(b), b2 = dim_mul(bb, bb);
  const Shape& s = *in;
  if (to_space)
    ctx.set_output(0, dt, Shape{s[0], Dim::floor_div(s[1], b2), dim_mul(s[2], bb), dim_mul(s[3], bb)});
  else
    ctx.set_output(0, dt, Shape{s[0], dim_mul(s[1], b2), Dim::floor_div(s[2], bb), Dim::floor_div(s[3], bb)});
}

void run_depth_to_space(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t b = attr_int_req(ctx.node(), "blocksize");
  if (b <= 0) ctx.fail_here(fmt::format("blocksize {} must be positive", b));
  if (x.rank() != 4) ctx.fail_here(fmt::format("input must be 4-D, has rank {}", x.rank()));
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  auto bb = checked_mul(b, b), hb = checked_mul(H, b), wb = checked_mul(W, b);
  if (!bb || !hb || !wb) ctx.fail_here(fmt::format("blocksize {} is too large", b));
  if (C % *bb != 0) ctx.fail_here(fmt::format("channels {} not divisible by blocksize^2", C));
  const int64_t c = C / *bb;
  const int64_t sn = C * H * W, sc = H * W, sh = W;
  // Read as [N, c, H, b, W, b]; the channel of (c', b1, b2) depends on the mode.
  const bool crd = attr_string(ctx.node(), "mode", "DCR") == "CRD";
  const std::vector<int64_t> dims{N, c, H, b, W, b};
  const std::vector<int64_t> strides = crd ? std::vector<int64_t>{sn, b * b * sc, sh, b * sc, 1, sc}
                                           : std::vector<int64_t>{sn, sc, sh, b * c * sc, 1, c * sc};
  ctx.set_output(0, strided_tensor(ctx, x, dims, strides, 0).reshaped({N, c, *hb, *wb}));
}

void run_space_to_depth(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t b = attr_int_req(ctx.node(), "blocksize");
  if (b <= 0) ctx.fail_here(fmt::format("blocksize {} must be positive", b));
  if (x.rank() != 4) ctx.fail_here(fmt::format("input must be 4-D, has rank {}", x.rank()));
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  if (H % b != 0 || W % b != 0)
    ctx.fail_here(fmt::format("spatial dims {}x{} not divisible by blocksize {}", H, W, b));
  const int64_t h = H / b, w = W / b;
  const int64_t sn = C * H * W, sc = H * W, sh = W;
  // Output channel (b1 * b + b2) * C + c reads input (c, h' * b + b1, w' * b + b2).
  const std::vector<int64_t> dims{N, b, b, C, h, w};
  const std::vector<int64_t> strides{sn, sh, 1, sc, b * sh, b};
  auto bb = checked_mul(b, b);
  auto out_c = bb ? checked_mul(C, *bb) : std::nullopt;
  if (!out_c) ctx.fail_here("output channels overflow");
  ctx.set_output(0, strided_tensor(ctx, x, dims, strides, 0).reshaped({N, *out_c, h, w}));
}

// ---------------------------------------------------------------------------------------------
// Trilu

void run_trilu(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) ctx.fail_here(fmt::format("input must have rank >= 2, has {}", x.rank()));
  const int64_t k = ctx.has_input(1) ? input_scalar_int(ctx, 1, "k") : 0;
  const bool upper = attr_int(ctx.node(), "upper", 1) != 0;
  const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
  const int64_t mats = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  Tensor out = new_tensor(ctx, x.dtype(), x.dims());
  visit_storage(ctx.node(), x.dtype(), [&]<typename S>() {
    const S* in = x.data<S>();
    S* o = out.data<S>();
    for (int64_t m = 0; m < mats; ++m)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          // Compare j - i with k without overflow (k may be huge).
          const __int128 diff = static_cast<__int128>(j) - i;
          const bool keep = upper ? diff >= k : diff <= k;
          const int64_t at = (m * rows + i) * cols + j;
          if (keep) o[at] = in[at];
        }
  });
  ctx.set_output(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// ReverseSequence

void run_reverse_sequence(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) ctx.fail_here(fmt::format("input must have rank >= 2, has {}", x.rank()));
  const int64_t batch_axis = attr_int(ctx.node(), "batch_axis", 1);
  const int64_t time_axis = attr_int(ctx.node(), "time_axis", 0);
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0)))
    ctx.fail_here(fmt::format("batch_axis {} and time_axis {} must be 0 and 1", batch_axis, time_axis));
  const auto lens = input_ints(ctx, 1, "sequence_lens");
  const int64_t batch = x.dim(static_cast<int>(batch_axis)), time = x.dim(static_cast<int>(time_axis));
  if (static_cast<int64_t>(lens.size()) != batch)
    ctx.fail_here(fmt::format("sequence_lens has {} entries for a batch of {}", lens.size(), batch));
  for (int64_t l : lens)
    if (l < 0 || l > time) ctx.fail_here(fmt::format("sequence length {} out of range [0, {}]", l, time));
  const int64_t inner = dims_product(x.dims(), 2, x.rank());
  Tensor out = new_tensor(ctx, x.dtype(), x.dims());
  for (int64_t i0 = 0; i0 < x.dim(0); ++i0)
    for (int64_t i1 = 0; i1 < x.dim(1); ++i1) {
      const int64_t b = batch_axis == 0 ? i0 : i1, t = batch_axis == 0 ? i1 : i0;
      const int64_t src_t = t < lens[b] ? lens[b] - 1 - t : t;
      const int64_t s0 = batch_axis == 0 ? i0 : src_t, s1 = batch_axis == 0 ? src_t : i1;
      copy_elems(out, (i0 * x.dim(1) + i1) * inner, x, (s0 * x.dim(1) + s1) * inner, inner);
    }
  ctx.set_output(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// Compress

void infer_compress(InferContext& ctx) {
  const DataType dt = ctx.input_dtype(0);
  auto axis = attr_int_opt(ctx.node(), "axis");
  if (!axis) {
    ctx.set_output(0, dt, Shape{Dim()});
    return;
  }
  const Shape* in = input_shape_ptr(ctx, 0);
  if (!in) {
    ctx.set_output(0, dt, std::nullopt);
    return;
  }
  Shape out = *in;
  out[infer_axis(ctx, *axis, static_cast<int>(in->size()))] = Dim();
  ctx.set_output(0, dt, std::move(out));
}

void run_compress(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& cond = ctx.input(1);
  if (cond.dtype() != DataType::kBool) ctx.fail_here("condition must be bool");
  if (cond.rank() != 1) ctx.fail_here(fmt::format("condition must be 1-D, has rank {}", cond.rank()));
  auto axis_attr = attr_int_opt(ctx.node(), "axis");
  if (axis_attr && x.rank() == 0) ctx.fail_here("axis given for a scalar input");
  const int axis = axis_attr ? kernel_axis(ctx, *axis_attr, x.rank()) : 0;
  const std::vector<int64_t> dims = axis_attr ? x.dims() : std::vector<int64_t>{x.numel()};
  const int rank = static_cast<int>(dims.size());
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < cond.numel(); ++i) {
    if (!cond.data<bool>()[i]) continue;
    if (i >= dims[axis])
      ctx.fail_here(fmt::format("condition selects index {} of an axis of size {}", i, dims[axis]));
    picked.push_back(i);
  }
  std::vector<int64_t> out_dims = dims;
  out_dims[axis] = static_cast<int64_t>(picked.size());
  Tensor out = new_tensor(ctx, x.dtype(), out_dims);
  const int64_t outer = dims_product(dims, 0, axis), inner = dims_product(dims, axis + 1, rank);
  int64_t at = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t p : picked) {
      copy_elems(out, at, x, (o * dims[axis] + p) * inner, inner);
      at += inner;
    }
  ctx.set_output(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// NonZero

template <typename T>
bool is_nonzero(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) return !v.empty();
  else if constexpr (is_float_like_v<T> && std::is_class_v<T>) return static_cast<float>(v) != 0.0f;
  else if constexpr (is_small_int_v<T>) return static_cast<int64_t>(v) != 0;
  else return v != T{};
}

void run_nonzero(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<int64_t> dims = x.rank() == 0 ? std::vector<int64_t>{1} : x.dims();
  const int rank = static_cast<int>(dims.size());
  std::vector<int64_t> hits;
  bool ok = visit_dtype(x.dtype(), [&]<typename T>() {
    const T* p = x.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i)
      if (is_nonzero(p[i])) hits.push_back(i);
  });
  if (!ok) ctx.fail_here(fmt::format("type {} is not supported", dtype_name(x.dtype())));
  const int64_t nnz = static_cast<int64_t>(hits.size());
  Tensor out = new_tensor(ctx, DataType::kInt64, {rank, nnz});
  int64_t* o = out.data<int64_t>();
  const auto strides = strides_of(dims);
  for (int64_t j = 0; j < nnz; ++j)
    for (int k = 0; k < rank; ++k) o[k * nnz + j] = hits[j] / strides[k] % dims[k];
  ctx.set_output(0, std::move(out));
}

}  // namespace

void register_tensor_rearrange_ops(OpRegistry& r) {
  r.add("", "DepthToSpace")
      .versions(1)
      .inputs(1, 1)
      .outputs(1, 1)
      .attr("blocksize", AttrKind::kInt, true)
      .attr("mode", AttrKind::kString)
      .shape([](InferContext& ctx) { infer_depth_space(ctx, true); })
      .run(run_depth_to_space);

  r.add("", "SpaceToDepth")
      .versions(1)
      .inputs(1, 1)
      .outputs(1, 1)
      .attr("blocksize", AttrKind::kInt, true)
      .shape([](InferContext& ctx) { infer_depth_space(ctx, false); })
      .run(run_space_to_depth);

  r.add("", "Trilu")
      .versions(14)
      .inputs(1, 2)
      .outputs(1, 1)
      .attr("upper", AttrKind::kInt)
      .shape([](InferContext& ctx) {
        const int rank = ctx.input_rank(0);
        if (rank >= 0 && rank < 2) ctx.fail_here(fmt::format("input must have rank >= 2, has {}", rank));
        infer_same_as_input(ctx);
      })
      .run(run_trilu);

  r.add("", "ReverseSequence")
      .versions(10)
      .inputs(2, 2)
      .outputs(1, 1)
      .attr("batch_axis", AttrKind::kInt)
      .attr("time_axis", AttrKind::kInt)
      .shape([](InferContext& ctx) { infer_same_as_input(ctx); })
      .run(run_reverse_sequence);

  r.add("", "Compress")
      .versions(9)
      .inputs(2, 2)
      .outputs(1, 1)
      .attr("axis", AttrKind::kInt)
      .shape(infer_compress)
      .run(run_compress);

  r.add("", "NonZero")
      .versions(9)
      .inputs(1, 1)
      .outputs(1, 1)
      .shape([](InferContext& ctx) {
        const int rank = ctx.input_rank(0);
        ctx.set_output(0, DataType::kInt64,
                       rank < 0 ? Shape{Dim(), Dim()} : Shape{Dim(std::max(rank, 1)), Dim()});
      })
      .run(run_nonzero);
}

}  // namespace kiln
