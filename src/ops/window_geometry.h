// The window geometry of convolutions and pools: kernel, strides, dilations, pads (explicit or
// auto_pad) and the output size they give. The reference kernels (nn_conv.cc, nn_pool.cc) and
// shape inference read it with the throwing functions; the fast engine, which only asks whether a
// node fits a kernel of its own, reads it with fit_window (the reference kernel then reports what
// is wrong).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/shape.h"
#include "support/error.h"

namespace kiln::nn {

struct Window {
  int nsp = 0;                       // spatial rank
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> k, s, d;      // kernel, strides, dilations
  std::vector<int64_t> pb, pe;       // pads at the start / end (SAME: resolved per input size)
  bool ceil = false;                 // ceil_mode of pools
  int64_t eff_k(int i) const { return (k[i] - 1) * d[i] + 1; }
};

// Reads the window attributes of node n for nsp spatial dims; `kernel` is the kernel size from the
// weight (conv) when known; kernel_shape takes precedence when set. Returns nullopt when the kernel
// size is not known. Fails (kBadModel) on malformed attributes.
std::optional<Window> read_window(const Node& n, int nsp, const std::optional<std::vector<int64_t>>& kernel,
                                  bool ceil_mode_attr = false);
// The output size of spatial dim i for input size `in`; resolves the SAME pads into w.pb / w.pe.
// Fails with `kind` when the window does not fit.
int64_t window_out(const Node& n, Window& w, int i, int64_t in, ErrorKind kind);
// The same on a possibly symbolic dim.
Dim window_out_dim(const Node& n, const Window& w, int i, const Dim& in);

// A window and the output sizes it gives on known spatial input sizes (SAME pads resolved).
struct WindowFit {
  Window window;
  std::vector<int64_t> out;
};
// The non-throwing form of read_window + window_out over every spatial dim of `in`: nullopt when
// the kernel size is not known, an attribute is malformed or the window does not fit.
std::optional<WindowFit> fit_window(const Node& n, const std::vector<int64_t>& in,
                                    const std::optional<std::vector<int64_t>>& kernel,
                                    bool ceil_mode_attr = false);

// A window geometry lifted to 3 spatial dims (leading dims of size 1), for the kernels.
struct Geom3 {
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
};
Geom3 lift3(const Node& n, const Window& w, const std::vector<int64_t>& in,
            const std::vector<int64_t>& out);

// Range [lo, hi) of output positions o with 0 <= o*s + off < in.
inline void valid_range(int64_t off, int64_t s, int64_t in, int64_t out, int64_t& lo, int64_t& hi) {
  lo = off >= 0 ? 0 : (-off + s - 1) / s;
  hi = in - 1 - off < 0 ? 0 : (in - 1 - off) / s + 1;
  if (hi > out) hi = out;
  if (lo > hi) lo = hi;
}

}  // namespace kiln::nn
