// Op family: control (see docs/ops.md for the contract every op follows).
//   control_flow.cc      If, Loop, Scan
//   control_sequence.cc  sequence and optional ops, SequenceMap
//   rnn.cc               RNN, GRU, LSTM
#include "ops/kernel_util.h"
#include "ops/op.h"

namespace kiln {

void register_control_flow_ops(OpRegistry& r);
void register_control_sequence_ops(OpRegistry& r);
void register_control_rnn_ops(OpRegistry& r);

void register_control_ops(OpRegistry& r) {
  register_control_flow_ops(r);
  register_control_sequence_ops(r);
  register_control_rnn_ops(r);
}

}  // namespace kiln
