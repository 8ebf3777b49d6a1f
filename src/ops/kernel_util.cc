#include "ops/kernel_util.h"

namespace kiln {

std::vector<int64_t> broadcast_dims(const Node& n, const std::vector<int64_t>& a,
                                    const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else
      fail(ErrorKind::kRuntime, "{}shapes {} and {} do not broadcast", n.where(),
           dims_to_string(a), dims_to_string(b));
  }
  return out;
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in,
                                       const std::vector<int64_t>& out) {
  std::vector<int64_t> s(out.size(), 0);
  const auto own = strides_of(in);
  const size_t shift = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) s[i + shift] = in[i] == 1 ? 0 : own[i];
  return s;
}

void infer_same_as_input(InferContext& ctx, int input) {
  ctx.set_output(0, ctx.input_type(input));
}

void infer_broadcast(InferContext& ctx, DataType out_dtype) {
  std::optional<Shape> shape = Shape{};
  DataType dtype = DataType::kUndefined;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    if (dtype == DataType::kUndefined) dtype = ctx.input_dtype(i);
    const auto& s = ctx.input_shape(i);
    if (!s || !shape) {
      shape.reset();
      continue;
    }
    shape = broadcast_shapes(*shape, *s);
    if (!shape)
      ctx.fail_here(fmt::format("input shapes do not broadcast ({})", shape_to_string(*s)));
  }
  ctx.set_output(0, out_dtype == DataType::kUndefined ? dtype : out_dtype, shape);
}

}  // namespace kiln
