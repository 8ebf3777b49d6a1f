// The roofline model: what a kernel of a given arithmetic intensity can reach on a machine whose
// peaks are `gflops` (compute) and `gbps` (memory bandwidth).
#pragma once

namespace kiln {

struct Roofline {
  double gflops = 0;  // peak compute, GFLOP/s
  double gbps = 0;    // peak memory bandwidth, GB/s

  // FLOP per byte where the two roofs meet.
  double ridge() const { return gbps > 0 ? gflops / gbps : 0; }
  // The attainable GFLOP/s at `intensity` FLOP/byte.
  double attainable(double intensity) const;
  bool compute_bound(double intensity) const { return intensity >= ridge(); }
  // How close work doing `flops` and moving `bytes` in `seconds` came to its roof, in [0, 1] when
  // the peaks hold: the larger of its share of peak compute and of peak bandwidth.
  double peak_share(double flops, double bytes, double seconds) const;
};

}  // namespace kiln
