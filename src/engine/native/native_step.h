// Steps that run kiln's own vectorized CPU kernels (src/engine/cpu), and what they share: inputs
// checked against the dims the plan was made for, outputs written into planned buffers.
#pragma once

#include <optional>
#include <vector>

#include "engine/kernel_table.h"
#include "engine/step.h"

namespace kiln::engine {

class Lowering;

class NativeStep : public Step {
 public:
  NativeStep(const Node& n, std::string_view kernel_name);

 protected:
  // Reads input slot `s` expecting `dims`; the tensor read at run time is checked against them.
  void read(int s, std::vector<int64_t> dims);
  // Writes output slot `s` into a planned buffer, in place of input slot `share` when >= 0.
  void write(int s, int share = -1);
  // The tensor of the k-th slot given to read(), its dims checked.
  const Tensor& in(const RunState& st, size_t k) const;
  Tensor& out(RunState& st, size_t k) const { return st.slots[outputs[k].slot].tensor; }

 private:
  std::vector<std::vector<int64_t>> expected_;
};

// The product of dims[from, to).
int64_t dims_product(const std::vector<int64_t>& dims, size_t from, size_t to);

// The slot the output of the current group may share with input slot `s` (in place): s when the
// value dies here and has the output's bytes, else -1.
int in_place_share(Lowering& lw, int s, size_t out_bytes);

// The axis of a Concat of float pieces with known positive dims, none of them constant, along an
// axis of their rank; nullopt for any other (concat_layouts.cc; onednn.concat takes the same).
std::optional<int> float_concat_axis(const Node& n, const GraphFacts& f);

// A cpu.concat step of the node: input k (slot reads[k]) viewed as [outer, lens[k] * inner] in
// memory, the output (slot out) as [outer, sum(lens) * inner]. Any dense layout works when these
// are its memory-order sizes (a channels-last concat along the channels: outer = N * H * W).
// With one row (outer 1) the memory plan may have the pieces' producers write them in place.
void add_concat_step(const Node& n, const std::vector<int>& reads, int out,
                     std::vector<int64_t> lens, int64_t outer, int64_t inner, Lowering& lw);

// A cpu.concat step of a float [N, C, H, W] node along C into slot out, channels-last (out_block
// 0) or in blocks of out_block channels: input k (slot reads[k]) channels-last (blocks[k] 0) or in
// blocks of blocks[k] channels (cpu::concat_channels says which mixes work).
void add_channel_concat_step(const Node& n, const std::vector<int>& reads,
                             std::vector<int64_t> blocks, int64_t out_block, int out, Lowering& lw);

// A cpu.concat step of a float [N, C, H, W] node along C, every piece (slot reads[k], channels[k]
// channels) and the result (slot out) in blocks of `block` channels (16 or 8), each value of the
// result then taken through y = scale[c] y + shift[c] and, with relu, max(0, y): a
// BatchNormalization (and a Relu) after the concat, applied as the pieces are copied.
void add_normalizing_concat_step(const Node& n, const std::vector<int>& reads, int out,
                                 std::vector<int64_t> channels, int64_t block,
                                 std::vector<float> scale, std::vector<float> shift, bool relu,
                                 Lowering& lw);

}  // namespace kiln::engine
