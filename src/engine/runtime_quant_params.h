// The quantization parameters a step reads at run time from slots (DynamicQuantizeLinear's scale
// and zero point, MatMulInteger's scale product): which slots, and their values checked.
#pragma once

#include <cstdint>
#include <string_view>

#include "engine/step.h"
#include "support/error.h"

namespace kiln::engine {

class RuntimeQuantParams {
 public:
  // Reads the scale from slot `scale` and the zero point from slot `zero_point` (-1: none, 0) in
  // step s, which then also reads both.
  void read_by(Step& s, int scale, int zero_point) {
    scale_slot_ = scale;
    zp_slot_ = zero_point;
    s.also_reads.push_back(scale);
    if (zero_point >= 0) s.also_reads.push_back(zero_point);
  }
  bool present() const { return scale_slot_ >= 0; }
  // The float scale, 1 value or `values` (one per column); `kernel` names the step in errors.
  const Tensor& scale(const RunState& st, int64_t values, std::string_view kernel) const {
    const Tensor& s = st.slots[scale_slot_].tensor;
    KILN_CHECK(s.dtype() == DataType::kFloat && (s.numel() == 1 || s.numel() == values),
               ErrorKind::kRuntime, "{}: a scale of {} values for {}", kernel, s.numel(), values);
    return s;
  }
  // The zero point, one value (0 without a slot).
  int32_t zero_point(const RunState& st, std::string_view kernel) const {
    if (zp_slot_ < 0) return 0;
    const Tensor& z = st.slots[zp_slot_].tensor;
    KILN_CHECK(z.numel() == 1, ErrorKind::kRuntime, "{}: a zero point of {} values", kernel, z.numel());
    return static_cast<int32_t>(z.get_i64(0));
  }

 private:
  int scale_slot_ = -1, zp_slot_ = -1;
};

}  // namespace kiln::engine
