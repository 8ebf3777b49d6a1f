// A fused elementwise chain: a short program of unary and binary ops run in one pass over the
// output, block by block, so intermediate tensors never reach memory. For example Gelu written out
// as ops,
//
//   EwProgram p;
//   auto x = p.input(0);
//   auto e = p.unary(UnaryOp::kErf, p.binary(BinaryOp::kMul, x, p.constant(0.70710678f)));
//   p.set_result(p.binary(BinaryOp::kMul, p.binary(BinaryOp::kMul, x, p.constant(0.5f)),
//                         p.binary(BinaryOp::kAdd, e, p.constant(1.0f))));
//   run_fused(p, {{x_data, x_dims}}, y_data, y_dims);
//
// or Add -> Relu with a bias broadcast along the channels. Inputs broadcast to the output's dims
// (numpy rules). Build the program and its FusedKernel once (at session creation), run it many
// times.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/cpu/broadcast.h"
#include "engine/cpu/elementwise.h"

namespace kiln::cpu {

// A value in the program: an input tensor, a constant, or the result of an earlier instruction.
struct EwValue {
  enum class Kind : uint8_t { kInput, kConst, kTemp };
  Kind kind = Kind::kConst;
  int index = 0;     // input number, or instruction number for kTemp
  float value = 0;   // kConst
};

struct EwInstr {
  bool is_unary = true;
  UnaryOp unary = UnaryOp::kIdentity;
  BinaryOp binary = BinaryOp::kAdd;
  UnaryParams params;
  EwValue a, b;  // b: binary only
  int reg = 0;   // the block buffer the result goes to (assigned by set_result)
};

class EwProgram {
 public:
  EwValue input(int i);  // input i of run_fused
  static EwValue constant(float v);
  EwValue unary(UnaryOp op, EwValue a, UnaryParams p);
  EwValue unary(UnaryOp op, EwValue a) { return unary(op, a, default_params(op)); }
  EwValue binary(BinaryOp op, EwValue a, EwValue b);
  // Ends the program: r is what run_fused writes. Assigns block buffers by liveness.
  void set_result(EwValue r);

  bool finished() const { return finished_; }
  int num_inputs() const { return num_inputs_; }
  int num_regs() const { return num_regs_; }
  const std::vector<EwInstr>& code() const { return code_; }
  const EwValue& result() const { return result_; }
  std::string to_string() const;  // one line per instruction, for logs and test messages

 private:
  EwValue push(const EwInstr& in);  // checks the operands, appends, returns its temp

  std::vector<EwInstr> code_;
  EwValue result_;
  int num_inputs_ = 0;
  int num_regs_ = 0;
  bool finished_ = false;
};

// One input of a fused run: data and dims that broadcast to the output's dims.
struct EwInput {
  const float* data = nullptr;
  std::span<const int64_t> dims;
};

// A finished program bound to the dims of its inputs and of its output: the broadcast plan is
// made once (at session creation), and run() allocates nothing.
class FusedKernel {
 public:
  FusedKernel(EwProgram program, std::span<const std::vector<int64_t>> input_dims,
              std::vector<int64_t> y_dims);
  // y = the program's result over y_dims; inputs[i] holds input i (of the dims given above).
  // y may be an input that has y's dims.
  void run(std::span<const float* const> inputs, float* y) const;
  const EwProgram& program() const { return program_; }
  const std::vector<int64_t>& y_dims() const { return y_dims_; }

 private:
  enum class Mode : uint8_t { kFull, kScalar, kStaged };  // how a block reads an input
  EwProgram program_;
  std::vector<int64_t> y_dims_;
  BroadcastPlan plan_;
  std::vector<Mode> mode_;
  std::vector<int> stage_slot_;  // the block buffer a kStaged input is copied into
  std::vector<bool> tiled_;      // a kStaged input that repeats a short row: copied once a group
  int staged_ = 0;
};

// The same in one call (plans every time): y = the program's result, elementwise over y_dims.
void run_fused(const EwProgram& program, std::span<const EwInput> inputs, float* y,
               std::span<const int64_t> y_dims);

}  // namespace kiln::cpu
