// Linear quantization a register at a time (quantize.h): included by kernels_impl.h inside its ISA
// namespace (no include guard, once per ISA). Every lane computes what the ONNX ops define, in
// float, in the same order as the reference kernels (src/ops/nn_quant.cc), so results agree bit
// for bit: the division stays a division, the clamp comes before the rounding (ties to even).
// (GCC's own vectorization of these loops, with target_clones, kept them 4 floats wide: it sizes
// the vectors by the byte type.)

// Lanes [k, k + lanes) of the bytes at p, as floats.
template <class Q>
inline Vec load_byte_lanes(const Q* p, int64_t k, int lanes) {
  if (lanes == W) return Vec::load_bytes(p + k);
  Q part[W] = {};
  std::memcpy(part, p + k, static_cast<size_t>(lanes));
  return Vec::load_bytes(part);
}

template <class Q>
inline void store_byte_lanes(Vec v, Q* p, int64_t k, int lanes) {
  if (lanes == W) return v.store_bytes(p + k);
  Q part[W];
  v.store_bytes(part);
  std::memcpy(p + k, part, static_cast<size_t>(lanes));
}

// x / scale, NaN to 0, clamped to the type's range less the zero point, rounded to the nearest
// (ties to even), plus the zero point: QuantizeLinear's formula.
template <class Q>
struct Requantize {
  Vec scale, lo, hi, zero_point;

  explicit Requantize(const QuantScale& p)
      : scale(Vec::all(p.scale)),
        lo(Vec::all(static_cast<float>(std::numeric_limits<Q>::min() - p.zero_point))),
        hi(Vec::all(static_cast<float>(std::numeric_limits<Q>::max() - p.zero_point))),
        zero_point(Vec::all(static_cast<float>(p.zero_point))) {}

  Vec operator()(Vec x) const {
    Vec v = x / scale;
    v = select(is_nan(v), Vec::zero(), v);
    v = min(max(v, lo), hi);
    return round_nearest(v) + zero_point;
  }
};

// (q - zero_point) * scale.
struct Dequantize {
  Vec scale, zero_point;
  explicit Dequantize(const QuantScale& p)
      : scale(Vec::all(p.scale)), zero_point(Vec::all(static_cast<float>(p.zero_point))) {}
  Vec operator()(Vec q) const { return (q - zero_point) * scale; }
};

// f(typed pointer) for a pointer to the bytes of type t (kInt8 or kUInt8).
template <class P, class F>
inline void with_byte_type(P* p, DataType t, F f) {
  using S = std::conditional_t<std::is_const_v<P>, const int8_t, int8_t>;
  using U = std::conditional_t<std::is_const_v<P>, const uint8_t, uint8_t>;
  if (t == DataType::kInt8)
    f(static_cast<S*>(p));
  else
    f(static_cast<U*>(p));
}

void quantize_kernel(const float* x, int64_t n, const QuantScale& p, void* q) {
  with_byte_type(q, p.type, [&](auto* out) {
    const Requantize<std::remove_pointer_t<decltype(out)>> r(p);
    for_lanes(n, [&](int64_t k, int lanes) { store_byte_lanes(r(load_lanes(x, k, lanes)), out, k, lanes); });
  });
}

void dequantize_kernel(const void* q, int64_t n, const QuantScale& p, float* x) {
  const Dequantize d(p);
  with_byte_type(q, p.type, [&](auto* in) {
    for_lanes(n, [&](int64_t k, int lanes) { store_lanes(d(load_byte_lanes(in, k, lanes)), x, k, lanes); });
  });
}

template <bool kRelu, class A, class B, class Y>
void quantized_add_lanes(const A* a, const Dequantize& da, const B* b, const Dequantize& db, int64_t n,
                         const Requantize<Y>& r, Y* y) {
  for_lanes(n, [&](int64_t k, int lanes) {
    Vec s = da(load_byte_lanes(a, k, lanes)) + db(load_byte_lanes(b, k, lanes));
    if constexpr (kRelu) s = select(lt(s, Vec::zero()), Vec::zero(), s);  // NaN stays
    store_byte_lanes(r(s), y, k, lanes);
  });
}

void quantized_add_kernel(const void* a, const QuantScale& pa, const void* b, const QuantScale& pb,
                          bool relu, int64_t n, const QuantScale& py, void* y) {
  const Dequantize da(pa), db(pb);
  with_byte_type(a, pa.type, [&](auto* qa) {
    with_byte_type(b, pb.type, [&](auto* qb) {
      with_byte_type(y, py.type, [&](auto* qy) {
        const Requantize<std::remove_pointer_t<decltype(qy)>> r(py);
        if (relu)
          quantized_add_lanes<true>(qa, da, qb, db, n, r, qy);
        else
          quantized_add_lanes<false>(qa, da, qb, db, n, r, qy);
      });
    });
  });
}

void range_kernel(const float* x, int64_t n, float* lo, float* hi) {
  Vec l = Vec::zero(), h = Vec::zero();
  for_lanes(n, [&](int64_t k, int lanes) {
    const Vec v = load_lanes(x, k, lanes);  // zeros above a partial register
    l = min(v, l);                          // the second operand when v is NaN
    h = max(v, h);
  });
  *lo = -max_lanes(neg(l));
  *hi = max_lanes(h);
}
