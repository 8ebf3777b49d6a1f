#include "engine/cpu/gru.h"

#include <algorithm>
#include <vector>

#include "engine/cpu/kernels.h"
#include "engine/cpu/recurrent_gemm.h"

namespace kiln::engine::cpu {

void gru_direction(const GruDims& d, int64_t dir, bool reverse, const float* x, const float* w,
                   const float* r, const float* bias, float* h, float* y, const GruPacks& packs) {
  const int64_t S = d.seq, B = d.batch, H = d.hidden, G = 3 * H;
  const kiln::cpu::IsaKernels& k = kiln::cpu::kernels();
  // x W^T + Wb for every (step, batch) row, in X's row order, with the parts of Rb that add to
  // a gate's sum as they are: z's and r's, and the candidate's unless linear_before_reset puts it
  // inside r * (h Rh^T + Rbh).
  std::vector<float> xw(static_cast<size_t>(S * B * G));
  gemm_bt("GRU", S * B, G, d.input, x, d.input, w, xw.data(), G);
  const float* rbh = bias && d.linear_before_reset ? bias + G + 2 * H : nullptr;
  if (bias) {
    std::vector<float> b(bias, bias + G);
    k.binary_vv(kiln::cpu::BinaryOp::kAdd, b.data(), bias + G, b.data(), rbh ? 2 * H : G);
    for (int64_t row = 0; row < S * B; ++row)
      k.binary_vv(kiln::cpu::BinaryOp::kAdd, xw.data() + row * G, b.data(), xw.data() + row * G, G);
  }
  // linear_before_reset without a bias still scales by r: a zero Rbh selects that form.
  const std::vector<float> zeros(d.linear_before_reset && !rbh ? H : 0, 0.0f);
  if (d.linear_before_reset && !rbh) rbh = zeros.data();
  // The packs in use: batch 1, and the form they were made for (3 gates, or 2 and a candidate).
  const PackedRecurrent *packed = packs.gates, *packed_cand = packs.candidate;
  const bool packs_fit = packed && packed->hidden() == H &&
                         (d.linear_before_reset ? packed->gates() == 3
                                                : packed->gates() == 2 && packed_cand && packed_cand->hidden() == H);
  if (B != 1 || !packs_fit) packed = packed_cand = nullptr;
  std::vector<float> hr(static_cast<size_t>(B * G)), rh(static_cast<size_t>(B * H));
  // The state read by this step's products and the one its cells make (lstm.cc).
  std::vector<float> other(static_cast<size_t>(B * H));
  float* state[2] = {h, other.data()};
  auto y_at = [&](int64_t t, int64_t b) {
    return y + (d.batch_first ? ((b * S + t) * d.directions + dir) * H : ((t * d.directions + dir) * B + b) * H);
  };
  constexpr int64_t kPanel = PackedRecurrent::kPanel, kBlock = PackedRecurrent::kBlockUnits;
  // The blocks of a stage: the packed weights' blocks of units, or one range of units per thread.
  // A step is one stage, or two without linear_before_reset: the candidate's product reads r * h
  // of every unit.
  const int threads = recurrent_threads(G, H, B);
  const int64_t blocks = packed ? packed->blocks() : threads;
  const int64_t stages_per_step = d.linear_before_reset ? 1 : 2;
  StageScheduler stages(threads, blocks);
  // packed: per block, its gates per panel ((p * gates + g) * 16), then (without
  // linear_before_reset) the candidate's; a block's two stages may run on two threads
  std::vector<float> gh(static_cast<size_t>(packed ? blocks * kBlock * 3 : 0));
  auto block_gh = [&](int64_t blk) { return gh.data() + blk * kBlock * 3; };
  on_threads(threads, [&](int thread) {
    float panel[3 * kPanel];  // one panel's three gates put together
    for (int64_t s = 0; s < S; ++s) {
      const int64_t t = reverse ? S - 1 - s : s;
      const float* h0 = state[s % 2];
      float* h1 = state[(s + 1) % 2];
      auto x_row = [&](int64_t b) { return xw.data() + (d.batch_first ? b * S + t : t * B + b) * G; };
      // The cells of units [first, first + n) from their gates' sums g3 (z, r, h; `stride` apart).
      auto cells = [&](int64_t b, int64_t first, int64_t n, const float* g3, int64_t stride) {
        float* hb = h1 + b * H + first;
        std::copy(h0 + b * H + first, h0 + b * H + first + n, hb);  // the cell reads and writes it
        k.gru_cell(x_row(b) + first, g3, rbh ? rbh + first : nullptr, hb, n, H, stride);
        if (y) std::copy(hb, hb + n, y_at(t, b) + first);
      };
      if (!d.linear_before_reset) {  // z's and r's products, and r * h of every unit
        stages.run(thread, s * stages_per_step, [&](int64_t blk) {
          if (packed) {
            packed->product(blk, h0, block_gh(blk));
            const UnitRange bu = packed->block_units(blk);
            for (int64_t first = bu.first; first < bu.last; first += kPanel) {
              const int64_t p = (first - bu.first) / kPanel, n = std::min(kPanel, bu.last - first);
              k.gru_reset(x_row(0) + H + first, block_gh(blk) + (p * 2 + 1) * kPanel, h0 + first, rh.data() + first, n);
            }
            return;
          }
          const UnitRange u = unit_range(static_cast<int>(blk), threads, H);
          gate_products("GRU", 2, B, H, u, h0, r, hr.data(), G);
          for (int64_t b = 0; b < B; ++b)
            k.gru_reset(x_row(b) + H + u.first, hr.data() + b * G + H + u.first, h0 + b * H + u.first,
                        rh.data() + b * H + u.first, u.size());
        });
      }
      stages.run(thread, s * stages_per_step + stages_per_step - 1, [&](int64_t blk) {
        if (packed) {
          if (d.linear_before_reset) packed->product(blk, h0, block_gh(blk));
          else packed_cand->product(blk, rh.data(), block_gh(blk) + kBlock * 2);
          const UnitRange bu = packed->block_units(blk);
          const float* bg = block_gh(blk);
          for (int64_t first = bu.first; first < bu.last; first += kPanel) {
            const int64_t p = (first - bu.first) / kPanel, n = std::min(kPanel, bu.last - first);
            const float* g3 = bg + p * packed->gates() * kPanel;  // z, r, h of this panel, 16 apart
            if (!d.linear_before_reset) {  // z from the first pack, the candidate from the second
              std::copy(g3, g3 + kPanel, panel);
              std::copy(bg + kBlock * 2 + p * kPanel, bg + kBlock * 2 + (p + 1) * kPanel, panel + 2 * kPanel);
              g3 = panel;
            }
            cells(0, first, n, g3, kPanel);
          }
          return;
        }
        const UnitRange u = unit_range(static_cast<int>(blk), threads, H);
        if (d.linear_before_reset) gate_products("GRU", 3, B, H, u, h0, r, hr.data(), G);  // all three gates' h R^T
        else gate_products("GRU", 1, B, H, u, rh.data(), r + 2 * H * H, hr.data() + 2 * H, G);
        for (int64_t b = 0; b < B; ++b) cells(b, u.first, u.size(), hr.data() + b * G + u.first, H);
      });
    }
  });
  if (S % 2 == 1) std::copy(other.begin(), other.end(), h);  // the last state is h's
}

}  // namespace kiln::engine::cpu
