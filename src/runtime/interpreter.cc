#include "runtime/interpreter.h"

#include <unordered_map>

#include "ir/walk.h"
#include "ops/op.h"
#include "support/error.h"

namespace kiln {

const RtValue* Frame::find(const Value* v) const {
  for (const Frame* f = this; f; f = f->parent_) {
    auto it = f->values_.find(v);
    if (it != f->values_.end()) return &it->second;
  }
  return nullptr;
}

namespace {

class Runner : public SubgraphRunner {
 public:
  explicit Runner(const Frame* frame) : frame_(frame) {}
  std::vector<RtValue> run(const Graph& g, std::vector<RtValue> inputs) override {
    return run_graph(g, inputs, frame_);
  }

 private:
  const Frame* frame_;
};

// Index of the last node of g that reads each value of g (values read by no node: absent).
std::unordered_map<const Value*, size_t> last_uses(const Graph& g) {
  std::unordered_map<const Value*, size_t> last;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = *g.nodes()[i];
    for (const Value* v : n.inputs)
      if (v) last[v] = i;
    // values read inside this node's subgraphs live until the node is done
    for_each_subgraph(n, [&](const Graph& body) {
      for_each_nested_graph(body, [&](const Graph& sg) {
        for (const auto& sn : sg.nodes())
          for (const Value* v : sn->inputs)
            if (v) last[v] = i;
        for (const Value* v : sg.outputs) last[v] = i;
      });
    });
  }
  return last;
}

}  // namespace

std::vector<RtValue> run_graph(const Graph& g, const std::vector<RtValue>& inputs,
                               const Frame* outer, RunObserver* observer) {
  Frame frame(outer, observer);
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value* v = g.inputs[i];
    if (i < inputs.size() && !(inputs[i].is_none() && v->is_constant()))
      frame.bind(v, inputs[i]);
    else if (v->is_constant())
      frame.bind(v, RtValue::of(v->data));
    else if (i >= inputs.size())
      fail(ErrorKind::kBadInput, "graph '{}': input '{}' was not given", g.name, v->name);
    else
      frame.bind(v, inputs[i]);
  }
  // Every run plans the same way; the cost is small next to the reference kernels.
  const auto last = last_uses(g);
  std::unordered_map<const Value*, bool> keep;
  for (const Value* v : g.outputs) keep[v] = true;

  std::vector<const RtValue*> in_ptrs;
  std::vector<RtValue> constants;
  Runner runner(&frame);
  const auto& nodes = g.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = *nodes[i];
    const OpSchema* schema = OpRegistry::global().find(n.domain, n.op_type);
    KILN_CHECK(schema && schema->kernel, ErrorKind::kUnsupported, "{}no kernel for this op",
               n.where());
    constants.assign(n.inputs.size(), RtValue{});
    in_ptrs.assign(n.inputs.size(), nullptr);
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const Value* v = n.inputs[k];
      if (!v) continue;
      const RtValue* x = frame.find(v);
      if (!x && v->is_constant()) {
        constants[k] = RtValue::of(v->data);
        x = &constants[k];
      }
      KILN_CHECK(x, ErrorKind::kRuntime, "{}input '{}' has no value", n.where(), v->name);
      in_ptrs[k] = x;
    }
    std::vector<RtValue> outs;
    KernelContext ctx(n, in_ptrs, outs, &runner);
    RunObserver* obs = frame.observer();
    const int64_t start = obs ? steady_now_ns() : 0;
    KernelOverrides::Choice chosen{&schema->kernel, "reference"};
    if (const KernelOverrides* o = frame.overrides())
      if (const auto c = o->find(n); c.kernel) chosen = c;
    try {
      (*chosen.kernel)(ctx);
    } catch (const Error& e) {
      const std::string msg = e.what();
      if (msg.find(n.where()) != std::string::npos) throw;
      throw Error(e.kind(), n.where() + msg);
    }
    if (obs)
      obs->on_node({.node = &n, .kernel = chosen.name, .depth = frame.depth(), .inputs = in_ptrs,
                    .outputs = outs, .start_ns = start, .end_ns = steady_now_ns()});
    for (int k = 0; k < n.num_outputs(); ++k) {
      const Value* out = n.outputs[k];
      if (!out) continue;
      KILN_CHECK(k < static_cast<int>(outs.size()), ErrorKind::kRuntime,
                 "{}kernel did not produce output {}", n.where(), k);
      frame.bind(out, std::move(outs[k]));
    }
    // Free what no later node reads.
    for (const Value* v : n.inputs) {
      if (!v || v->owner != &g || keep.contains(v)) continue;
      auto it = last.find(v);
      if (it != last.end() && it->second == i) frame.release(v);
    }
  }
  std::vector<RtValue> results;
  for (const Value* v : g.outputs) {
    const RtValue* x = frame.find(v);
    if (!x && v->is_constant()) {
      results.push_back(RtValue::of(v->data));
      continue;
    }
    KILN_CHECK(x, ErrorKind::kRuntime, "graph '{}': output '{}' was not computed", g.name, v->name);
    results.push_back(*x);
  }
  return results;
}

}  // namespace kiln
