// Fused elementwise programs: building (with block buffers assigned by liveness) and running them
// block by block.
#include "engine/cpu/fused_elementwise.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "engine/cpu/broadcast.h"
#include "engine/cpu/kernels.h"
#include "engine/cpu/parallel.h"
#include "support/error.h"

namespace kiln::cpu {
namespace {

constexpr int kBlock = 256;     // floats per block buffer: all of a block's buffers stay in L1
constexpr int kMaxRegs = 8;     // block buffers live at once
constexpr int kMaxInputs = kMaxBroadcastInputs;  // inputs a program reads
// Output elements per thread below which running on one thread is faster.
constexpr int64_t kGrain = 8 << 10;

std::string value_name(const EwValue& v) {
  switch (v.kind) {
    case EwValue::Kind::kInput: return fmt::format("in{}", v.index);
    case EwValue::Kind::kConst: return fmt::format("{}", v.value);
    case EwValue::Kind::kTemp: return fmt::format("t{}", v.index);
  }
  return "?";
}

}  // namespace

EwValue EwProgram::input(int i) {
  KILN_ASSERT(i >= 0, "negative input number");
  num_inputs_ = std::max(num_inputs_, i + 1);
  return {EwValue::Kind::kInput, i, 0};
}

EwValue EwProgram::constant(float v) { return {EwValue::Kind::kConst, 0, v}; }

EwValue EwProgram::unary(UnaryOp op, EwValue a, UnaryParams p) {
  EwInstr in;
  in.is_unary = true;
  in.unary = op;
  in.params = p;
  in.a = a;
  return push(in);
}

EwValue EwProgram::binary(BinaryOp op, EwValue a, EwValue b) {
  EwInstr in;
  in.is_unary = false;
  in.binary = op;
  in.a = a;
  in.b = b;
  return push(in);
}

EwValue EwProgram::push(const EwInstr& in) {
  KILN_ASSERT(!finished_, "instruction added after set_result");
  const int n = static_cast<int>(code_.size());
  KILN_ASSERT(in.a.kind != EwValue::Kind::kTemp || in.a.index < n,
              "operand is not an earlier instruction");
  KILN_ASSERT(in.is_unary || in.b.kind != EwValue::Kind::kTemp || in.b.index < n,
              "operand is not an earlier instruction");
  code_.push_back(in);
  return {EwValue::Kind::kTemp, n, 0};
}

void EwProgram::set_result(EwValue r) {
  KILN_ASSERT(!finished_, "set_result called twice");
  KILN_ASSERT(r.kind != EwValue::Kind::kTemp || r.index < static_cast<int>(code_.size()),
              "result is not an instruction");
  result_ = r;
  // Last use of every temp (the result lives to the end), then a linear scan: an instruction's
  // operands that die there free their buffers first, so it may write in place.
  const int n = static_cast<int>(code_.size());
  auto temps_read = [&](int i) {  // the instructions whose results instruction i reads
    std::vector<int> t;
    const EwInstr& in = code_[i];
    if (in.a.kind == EwValue::Kind::kTemp) t.push_back(in.a.index);
    if (!in.is_unary && in.b.kind == EwValue::Kind::kTemp &&
        !(in.a.kind == EwValue::Kind::kTemp && in.a.index == in.b.index))
      t.push_back(in.b.index);
    return t;
  };
  std::vector<int> last(n, -1);
  for (int i = 0; i < n; ++i)
    for (int t : temps_read(i)) last[t] = i;
  if (r.kind == EwValue::Kind::kTemp) last[r.index] = n;
  std::vector<int> free_regs;
  num_regs_ = 0;
  for (int i = 0; i < n; ++i) {
    for (int t : temps_read(i))
      if (last[t] == i) free_regs.push_back(code_[t].reg);
    if (free_regs.empty()) {
      code_[i].reg = num_regs_++;
    } else {
      code_[i].reg = free_regs.back();
      free_regs.pop_back();
    }
    if (last[i] < 0) free_regs.push_back(code_[i].reg);  // never read: dead
  }
  KILN_CHECK(num_regs_ <= kMaxRegs, ErrorKind::kUnsupported,
             "fused elementwise chain needs {} block buffers, at most {}", num_regs_, kMaxRegs);
  KILN_CHECK(num_inputs_ <= kMaxInputs, ErrorKind::kUnsupported,
             "fused elementwise chain has {} inputs, at most {}", num_inputs_, kMaxInputs);
  finished_ = true;  // only a program that fits can run
}

std::string EwProgram::to_string() const {
  std::string s;
  for (size_t i = 0; i < code_.size(); ++i) {
    const EwInstr& in = code_[i];
    if (in.is_unary)
      s += fmt::format("t{} = {}({})", i, unary_name(in.unary), value_name(in.a));
    else
      s += fmt::format("t{} = {}({}, {})", i, binary_name(in.binary), value_name(in.a),
                       value_name(in.b));
    s += fmt::format(" [r{}]\n", in.reg);
  }
  s += fmt::format("result {}\n", value_name(result_));
  return s;
}

namespace {

// One block's view of a value: a pointer to kBlock (or fewer) floats, or one number.
struct Operand {
  const float* p = nullptr;
  float value = 0;
};

// Runs one instruction on a block of len elements into dst.
void run_instr(const IsaKernels& k, const EwInstr& in, Operand a, Operand b, float* dst,
               int64_t len) {
  if (in.is_unary) {
    if (a.p) {
      k.unary(in.unary, in.params, a.p, dst, len);
    } else {  // a constant operand: compute once, then fill
      k.unary(in.unary, in.params, &a.value, dst, 1);
      std::fill(dst + 1, dst + len, dst[0]);
    }
    return;
  }
  if (a.p && b.p) k.binary_vv(in.binary, a.p, b.p, dst, len);
  else if (a.p) k.binary_vs(in.binary, a.p, b.value, dst, len);
  else if (b.p) k.binary_sv(in.binary, a.value, b.p, dst, len);
  else {
    k.binary_vs(in.binary, &a.value, b.value, dst, 1);
    std::fill(dst + 1, dst + len, dst[0]);
  }
}

}  // namespace

FusedKernel::FusedKernel(EwProgram program, std::span<const std::vector<int64_t>> input_dims,
                         std::vector<int64_t> y_dims)
    : program_(std::move(program)), y_dims_(std::move(y_dims)) {
  KILN_ASSERT(program_.finished(), "fused elementwise program used before set_result");
  const size_t n_in = static_cast<size_t>(program_.num_inputs());
  KILN_CHECK(input_dims.size() >= n_in, ErrorKind::kRuntime,
             "fused elementwise chain: {} inputs given, the program reads {}", input_dims.size(),
             n_in);
  std::vector<std::span<const int64_t>> dims(input_dims.begin(), input_dims.begin() + n_in);
  plan_ = plan_broadcast(y_dims_, dims);
  mode_.resize(n_in);
  stage_slot_.assign(n_in, -1);
  tiled_.assign(n_in, false);
  for (size_t j = 0; j < n_in; ++j) {
    mode_[j] = plan_.is_full(j) ? Mode::kFull : plan_.is_scalar(j) ? Mode::kScalar : Mode::kStaged;
    if (mode_[j] != Mode::kStaged) continue;
    stage_slot_[j] = staged_++;
    tiled_[j] = plan_.inner() < kBlock / 2 && plan_.repeats_row(j);  // short rows only
  }
}

void FusedKernel::run(std::span<const float* const> inputs, float* y) const {
  const size_t n_in = mode_.size();
  KILN_CHECK(inputs.size() >= n_in, ErrorKind::kRuntime,
             "fused elementwise chain: {} inputs given, the program reads {}", inputs.size(), n_in);
  if (plan_.numel == 0) return;
  const IsaKernels& k = kernels();
  const auto& code = program_.code();
  const int n_code = static_cast<int>(code.size());
  const EwValue result = program_.result();
  const bool result_is_last = result.kind == EwValue::Kind::kTemp && result.index == n_code - 1;

  // Long rows: blocks end where rows end, and within a row every input is a pointer (stride 1)
  // or one value (stride 0), so nothing is copied. Short rows: blocks of whole rows; a broadcast
  // input that repeats one short row (a channel scale in channels-last order) is tiled into its
  // block buffer once per group of rows, the others are copied run by run for every block.
  const int64_t inner = plan_.inner();
  const bool by_rows = inner >= kBlock / 2;
  const int64_t block = by_rows ? kBlock : kBlock / inner * inner;
  const bool any_tiled = std::find(tiled_.begin(), tiled_.end(), true) != tiled_.end();
  const bool any_copied = staged_ > std::count(tiled_.begin(), tiled_.end(), true);
  parallel_for(plan_.numel, kGrain, [&](int64_t begin, int64_t end) {
    alignas(64) float regs[kMaxRegs][kBlock];
    alignas(64) float stage[kMaxInputs][kBlock];
    Operand in_ops[kMaxInputs];
    RunWalker walker(plan_, begin);
    int64_t tiled_group = -1;
    for (int64_t blk = begin; blk < end;) {
      int64_t len = std::min<int64_t>(block, end - blk);
      if (by_rows) len = walker.step(len);
      if (any_tiled) {
        const int64_t g = blk / plan_.group();
        len = std::min(len, (g + 1) * plan_.group() - blk);
        if (g != tiled_group) {
          for (size_t j = 0; j < n_in; ++j) {
            if (!tiled_[j]) continue;
            const float* row = inputs[j] + plan_.group_offset(j, g);
            for (int64_t t = 0; t < block; t += inner)
              std::memcpy(stage[stage_slot_[j]] + t, row, inner * sizeof(float));
          }
          tiled_group = g;
        }
      }
      for (size_t j = 0; j < n_in; ++j) {
        const float* data = inputs[j];
        if (mode_[j] == Mode::kFull) in_ops[j] = {data + blk, 0};
        else if (mode_[j] == Mode::kScalar) in_ops[j] = {nullptr, data[0]};
        else if (!by_rows) in_ops[j] = {stage[stage_slot_[j]], 0};
        else if (plan_.strides[j].back() != 0) in_ops[j] = {data + walker.offsets()[j], 0};
        else in_ops[j] = {nullptr, data[walker.offsets()[j]]};
      }
      if (!by_rows && any_copied) {
        walker.walk(len, [&](int64_t out, const int64_t* off, int64_t run) {
          for (size_t j = 0; j < n_in; ++j) {
            if (stage_slot_[j] < 0 || tiled_[j]) continue;
            float* dst = stage[stage_slot_[j]] + (out - blk);
            const float* src = inputs[j] + off[j];
            if (plan_.strides[j].back() != 0) std::memcpy(dst, src, run * sizeof(float));
            else std::fill(dst, dst + run, *src);
          }
        });
      }
      auto operand = [&](const EwValue& v) -> Operand {
        switch (v.kind) {
          case EwValue::Kind::kConst: return {nullptr, v.value};
          case EwValue::Kind::kTemp: return {regs[code[v.index].reg], 0};
          case EwValue::Kind::kInput: break;
        }
        return in_ops[v.index];
      };
      for (int i = 0; i < n_code; ++i) {
        float* dst = i == n_code - 1 && result_is_last ? y + blk : regs[code[i].reg];
        run_instr(k, code[i], operand(code[i].a), code[i].is_unary ? Operand{} : operand(code[i].b),
                  dst, len);
      }
      if (!result_is_last) {
        const Operand r = operand(result);
        if (r.p) std::memmove(y + blk, r.p, len * sizeof(float));
        else std::fill(y + blk, y + blk + len, r.value);
      }
      blk += len;
    }
  }, by_rows ? 16 : inner);
}

void run_fused(const EwProgram& program, std::span<const EwInput> inputs, float* y,
               std::span<const int64_t> y_dims) {
  std::vector<std::vector<int64_t>> dims;
  std::vector<const float*> data;
  for (const EwInput& in : inputs) {
    dims.emplace_back(in.dims.begin(), in.dims.end());
    data.push_back(in.data);
  }
  FusedKernel(program, dims, std::vector<int64_t>(y_dims.begin(), y_dims.end())).run(data, y);
}

}  // namespace kiln::cpu
