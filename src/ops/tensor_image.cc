// Col2Im: rebuilds images from sliding-window columns (the inverse of im2col), summing overlaps.
#include "ops/tensor_common.h"

namespace kiln {
namespace {
using namespace tensor_ops;

// Attribute of n spatial entries, or `dflt` repeated.
std::vector<int64_t> spatial_attr(const Node& node, const char* name, size_t n, int64_t dflt,
                                  size_t count_factor = 1) {
  auto v = attr_ints(node, name, std::vector<int64_t>(n * count_factor, dflt));
  KILN_CHECK(v.size() == n * count_factor, ErrorKind::kBadModel, "{}{} has {} entries, expected {}",
             node.where(), name, v.size(), n * count_factor);
  return v;
}

void infer_col2im(InferContext& ctx) {
  const DataType dt = ctx.input_dtype(0);
  const Shape* in = input_shape_ptr(ctx, 0);
  if (in && in->size() != 3) ctx.fail_here(fmt::format("input must be 3-D, has rank {}", in->size()));
  auto image = input_sym_ints(ctx, 1);
  auto block = input_exact_ints(ctx, 2);
  if (!image) {
    ctx.set_output(0, dt, std::nullopt);
    return;
  }
  Shape out{in ? (*in)[0] : Dim(), Dim()};
  for (const SymInt& s : *image) out.push_back(s.dim());
  if (in && block) {
    int64_t k = 1;
    for (int64_t b : *block) k = b > 0 && checked_mul(k, b) ? k * b : 0;
    if (k > 0) out[1] = Dim::floor_div((*in)[1], Dim(k));
  }
  ctx.set_output(0, dt, std::move(out));
}

template <typename T>
void col2im_kernel(KernelContext& ctx, const Tensor& x, const std::vector<int64_t>& image,
                   const std::vector<int64_t>& block, int64_t channels) {
  const Node& node = ctx.node();
  const size_t n = image.size();
  const auto dil = spatial_attr(node, "dilations", n, 1);
  const auto str = spatial_attr(node, "strides", n, 1);
  const auto pads = spatial_attr(node, "pads", n, 0, 2);
  std::vector<int64_t> blocks(n);  // sliding positions per spatial dim
  int64_t positions = 1, kernel = 1;
  for (size_t d = 0; d < n; ++d) {
    if (dil[d] <= 0 || str[d] <= 0 || pads[d] < 0 || pads[d + n] < 0)
      ctx.fail_here("dilations and strides must be positive, pads non-negative");
    const __int128 span = static_cast<__int128>(dil[d]) * (block[d] - 1) + 1;
    const __int128 room = static_cast<__int128>(image[d]) + pads[d] + pads[d + n] - span;
    blocks[d] = room < 0 ? 0 : static_cast<int64_t>(room / str[d] + 1);
    auto p = checked_mul(positions, blocks[d]);
    if (!p) ctx.fail_here("the number of block positions overflows");
    positions = *p;
    kernel *= block[d];  // checked by the caller
  }
  if (x.dim(2) != positions)
    ctx.fail_here(fmt::format("input has {} columns, the image and block shapes give {}", x.dim(2), positions));
  std::vector<int64_t> out_dims{x.dim(0), channels};
  out_dims.insert(out_dims.end(), image.begin(), image.end());
  Tensor out = new_tensor(ctx, x.dtype(), out_dims);
  const int64_t image_size = dims_product(image, 0, static_cast<int>(n));
  const T* in = x.data<T>();
  T* o = out.data<T>();
  const auto img_strides = strides_of(image);
  std::vector<int64_t> kpos(n), bpos(n);
  for (int64_t b = 0; b < x.dim(0); ++b)
    for (int64_t c = 0; c < channels; ++c) {
      T* img = o + (b * channels + c) * image_size;
      for (int64_t kk = 0; kk < kernel; ++kk) {
        for (int64_t r = kk, d = static_cast<int64_t>(n) - 1; d >= 0; --d) {
          kpos[d] = r % block[d];
          r /= block[d];
        }
        const T* col = in + ((b * channels + c) * kernel + kk) * positions;
        for (int64_t p = 0; p < positions; ++p) {
          int64_t off = 0;
          bool inside = true;
          for (int64_t r = p, d = static_cast<int64_t>(n) - 1; d >= 0; --d) {
            bpos[d] = r % blocks[d];
            r /= blocks[d];
          }
          for (size_t d = 0; d < n && inside; ++d) {
            const int64_t at = bpos[d] * str[d] - pads[d] + kpos[d] * dil[d];
            inside = at >= 0 && at < image[d];
            off += at * img_strides[d];
          }
          if (inside)
            img[off] = static_cast<T>(static_cast<compute_t<T>>(img[off]) + static_cast<compute_t<T>>(col[p]));
        }
      }
    }
  ctx.set_output(0, std::move(out));
}

void run_col2im(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() != 3) ctx.fail_here(fmt::format("input must be 3-D, has rank {}", x.rank()));
  const auto image = input_ints(ctx, 1, "image_shape");
  const auto block = input_ints(ctx, 2, "block_shape");
  if (image.empty() || image.size() != block.size())
    ctx.fail_here("image_shape and block_shape must have one equal, non-zero length");
  int64_t kernel = 1;
  for (size_t d = 0; d < image.size(); ++d) {
    if (image[d] < 0 || block[d] <= 0) ctx.fail_here("image and block dims must be positive");
    auto k = checked_mul(kernel, block[d]);
    if (!k) ctx.fail_here("block_shape overflows");
    kernel = *k;
  }
  if (x.dim(1) % kernel != 0)
    ctx.fail_here(fmt::format("input dim 1 ({}) is not a multiple of the block size {}", x.dim(1), kernel));
  visit<KILN_NUMERIC_TYPES>(ctx.node(), x.dtype(), [&]<typename T>() {
    col2im_kernel<T>(ctx, x, image, block, x.dim(1) / kernel);
  });
}

}  // namespace

void register_tensor_image_ops(OpRegistry& r) {
  r.add("", "Col2Im")
      .versions(18)
      .inputs(3, 3)
      .outputs(1, 1)
      .attr("dilations", AttrKind::kInts)
      .attr("pads", AttrKind::kInts)
      .attr("strides", AttrKind::kInts)
      .shape(infer_col2im)
      .run(run_col2im);
}

}  // namespace kiln
