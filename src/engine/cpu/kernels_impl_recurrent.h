// The gates of one step of LSTM and GRU cells (lstm.h, gru.h), a register of hidden units at a
// time: included by kernels_impl.h inside its ISA namespace (no include guard, once per ISA).
// The products with W and R come from sgemm; what is left per step is elementwise, and with
// scalar exp and tanh it cost more than the products (a 256-unit LSTM spent about twice as long
// in its gates as in its recurrent product).

void lstm_cell_kernel(const float* gx, const float* gh, const float* peep, float* c, float* h,
                      int64_t n, int64_t x_stride, int64_t h_stride) {
  for_lanes(n, [&](int64_t k, int lanes) {
    auto gate = [&](int g) {
      return load_lanes(gx + g * x_stride, k, lanes) + load_lanes(gh + g * h_stride, k, lanes);
    };
    const Vec c0 = load_lanes(c, k, lanes);
    Vec i = gate(0), o = gate(1), f = gate(2);
    if (peep) {
      i = fma(load_lanes(peep, k, lanes), c0, i);
      f = fma(load_lanes(peep + 2 * x_stride, k, lanes), c0, f);
    }
    const Vec c1 = fma(sigmoid(f), c0, sigmoid(i) * tanh(gate(3)));
    if (peep) o = fma(load_lanes(peep + x_stride, k, lanes), c1, o);
    store_lanes(c1, c, k, lanes);
    store_lanes(sigmoid(o) * tanh(c1), h, k, lanes);
  });
}

void gru_cell_kernel(const float* gx, const float* gh, const float* rbh, float* h, int64_t n,
                     int64_t x_stride, int64_t h_stride) {
  for_lanes(n, [&](int64_t k, int lanes) {
    const Vec z = sigmoid(load_lanes(gx, k, lanes) + load_lanes(gh, k, lanes));
    Vec a = load_lanes(gh + 2 * h_stride, k, lanes);
    if (rbh) {  // linear_before_reset: the reset gate scales h Rh^T + Rbh
      const Vec r = sigmoid(load_lanes(gx + x_stride, k, lanes) + load_lanes(gh + h_stride, k, lanes));
      a = r * (a + load_lanes(rbh, k, lanes));
    }
    const Vec cand = tanh(load_lanes(gx + 2 * x_stride, k, lanes) + a);
    const Vec h0 = load_lanes(h, k, lanes);
    store_lanes(fma(z, h0 - cand, cand), h, k, lanes);  // (1 - z) cand + z h
  });
}

void gru_reset_kernel(const float* gx, const float* gh, const float* h, float* rh, int64_t n) {
  for_lanes(n, [&](int64_t k, int lanes) {
    const Vec r = sigmoid(load_lanes(gx, k, lanes) + load_lanes(gh, k, lanes));
    store_lanes(r * load_lanes(h, k, lanes), rh, k, lanes);
  });
}
