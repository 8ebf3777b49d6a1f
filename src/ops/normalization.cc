// Op family: normalization (see docs/ops.md for the contract every op follows).
//
// The family spans several files (normalization_*.cc, resize.cc, sampling.cc, nms.cc); this one
// registers them all and holds the
// helpers they share (normalization_util.h).
#include "ops/kernel_util.h"
#include "ops/normalization_util.h"
#include "ops/op.h"
#include "support/checked_math.h"

namespace kiln {

namespace norm {

std::vector<double> to_doubles(const Node& n, const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  visit<KILN_FLOAT_TYPES>(n, t.dtype(), [&]<typename T>() {
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i)
      out[i] = static_cast<double>(static_cast<compute_t<T>>(p[i]));
  });
  return out;
}

Tensor from_doubles(const Node& n, DataType dtype, std::vector<int64_t> dims,
                    const std::vector<double>& v) {
  Tensor t(dtype, std::move(dims));
  visit<KILN_FLOAT_TYPES>(n, dtype, [&]<typename T>() {
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = T(static_cast<compute_t<T>>(v[i]));
  });
  return t;
}

void check_work(const Node& n, const std::vector<int64_t>& dims) {
  const int64_t cap = allocation_cap() / static_cast<int64_t>(sizeof(double));
  auto total = checked_product(dims);
  bool ok = total.has_value() && *total <= cap;
  for (int64_t d : dims) ok = ok && d <= cap;
  KILN_CHECK(ok, ErrorKind::kRuntime,
             "{}a result of dims {} needs more than the allocation cap of {} bytes", n.where(),
             dims_to_string(dims), allocation_cap());
}

std::vector<double> broadcast_to(const Node& n, const Tensor& t,
                                 const std::vector<int64_t>& out_dims) {
  KILN_CHECK(t.rank() <= static_cast<int>(out_dims.size()), ErrorKind::kRuntime,
             "{}shape {} does not broadcast to {}", n.where(), dims_to_string(t.dims()),
             dims_to_string(out_dims));
  const size_t shift = out_dims.size() - t.dims().size();
  for (size_t i = 0; i < t.dims().size(); ++i)
    KILN_CHECK(t.dims()[i] == 1 || t.dims()[i] == out_dims[i + shift], ErrorKind::kRuntime,
               "{}shape {} does not broadcast to {}", n.where(), dims_to_string(t.dims()),
               dims_to_string(out_dims));
  std::vector<double> src(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) src[i] = t.get_f64(i);
  std::vector<double> out(static_cast<size_t>(prod(out_dims)));
  for_each_broadcast(out_dims, {t.dims()},
                     [&](int64_t i, const int64_t* off) { out[i] = src[off[0]]; });
  return out;
}

std::optional<Shape> keep_leading(const std::optional<Shape>& s, int axis) {
  if (!s) return std::nullopt;
  Shape r = *s;
  for (size_t i = static_cast<size_t>(axis); i < r.size(); ++i) r[i] = Dim(1);
  return r;
}

}  // namespace norm

void register_normalization_ops(OpRegistry& r) {
  norm::register_norms(r);
  norm::register_softmax(r);
  norm::register_reduce(r);
  norm::register_resize(r);
  norm::register_sampling(r);
  norm::register_nms(r);
  norm::register_losses(r);
  norm::register_sequence(r);
}

}  // namespace kiln
