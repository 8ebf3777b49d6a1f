// Reshape, Flatten, Squeeze, Unsqueeze, Identity and a Dropout that drops nothing, on a row-major
// tensor: the output is a view of the input's buffer with the dims inference found (no bytes move).
#include "engine/kernel_table.h"
#include "engine/lowering.h"
#include "engine/native/native_kernels.h"
#include "support/checked_math.h"
#include "support/error.h"

namespace kiln::engine {

namespace {

class ViewStep : public Step {
 public:
  ViewStep(const Node& n, int in, int out, std::vector<int64_t> dims) : dims_(std::move(dims)) {
    node = &n;
    kernel = "engine.view";
    threads = 1;  // no loop: a view takes no thread but the caller's
    inputs = {in};
    outputs = {{out, OutputMemory::kAlias, in}};
  }
  void run(RunState& st) override {
    const RtValue& in = st.slots[inputs[0]];
    KILN_CHECK(in.is_tensor(), ErrorKind::kRuntime, "the input is not a tensor");
    st.slots[outputs[0].slot] = RtValue::of(in.tensor.reshaped(dims_));
  }

 private:
  std::vector<int64_t> dims_;
};

// A Dropout that drops nothing: at inference (training_mode absent or false), or of ratio 0, and
// whose mask nobody reads.
bool identity_dropout(const Node& n, const GraphFacts& f) {
  for (int i = 1; i < n.num_outputs(); ++i)
    if (n.outputs[i] && (f.is_graph_output(n.outputs[i]) || !f.consumers(n.outputs[i]).empty()))
      return false;
  auto constant_zero = [&](int i) {
    const Tensor* t = n.has_input(i) ? f.constant(n.inputs[i]) : nullptr;
    return t && t->numel() == 1 && t->get_f64(0) == 0;
  };
  const bool inference = n.opset < 12 || !n.has_input(2) || constant_zero(2);
  return inference || constant_zero(1);
}

bool match_view(const Node& n, const MatchContext& ctx, Group& g) {
  if (n.op_type == "Dropout") {
    if (!n.has_input(0) || !n.outputs[0] || !identity_dropout(n, ctx.facts)) return false;
  } else if (!n.has_input(0) || n.num_outputs() != 1 || !n.outputs[0]) {
    return false;
  }
  const auto* in = ctx.facts.dims(n.inputs[0]);
  const auto* out = ctx.facts.dims(n.outputs[0]);
  if (!in || !out || n.inputs[0]->type.kind != TypeInfo::Kind::kTensor) return false;
  // (Checked: a hostile file's dims may overflow; such a node goes to the reference kernel, which
  // refuses it with the error its op gives.)
  const auto a = checked_product(*in), b = checked_product(*out);
  return a && b && *a == *b && ctx.facts.dtype(n.inputs[0]) != DataType::kString;
}

bool build_view(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const int in = lw.plain(n.inputs[0]);
  const int out = lw.define(n.outputs[0]);
  lw.add(std::make_unique<ViewStep>(n, in, out, *lw.facts().dims(n.outputs[0])));
  return true;
}

}  // namespace

constinit const KernelImpl kEngineView{.name = "engine.view", .match = match_view,
                                       .build = build_view};

}  // namespace kiln::engine
