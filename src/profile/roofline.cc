#include "profile/roofline.h"

#include <algorithm>

namespace kiln {

double Roofline::attainable(double intensity) const {
  return std::min(gflops, intensity * gbps);
}

// achieved / min(P, I*B) = max(achieved / P, achieved / (I*B)), and achieved / I is the byte rate,
// so this needs no intensity and works for work without FLOPs.
double Roofline::peak_share(double flops, double bytes, double seconds) const {
  if (seconds <= 0) return 0;
  const double compute = gflops > 0 ? flops / seconds / 1e9 / gflops : 0;
  const double memory = gbps > 0 ? bytes / seconds / 1e9 / gbps : 0;
  return std::max(compute, memory);
}

}  // namespace kiln
