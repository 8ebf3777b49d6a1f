#include "engine/kernel_table.h"

#include "engine/reference_step.h"

namespace kiln::engine {

void KernelTable::add(std::string_view domain, std::string_view op, DataType dtype,
                      KernelImpl impl) {
  table_[{std::string(domain), std::string(op), dtype}].push_back(impl);
}

std::vector<const KernelImpl*> KernelTable::find(const Node& n, const GraphFacts& facts) const {
  const Value* key = nullptr;
  for (const Value* v : n.inputs)
    if (v) {
      key = v;
      break;
    }
  if (!key && !n.outputs.empty()) key = n.outputs[0];
  std::vector<const KernelImpl*> out;
  for (DataType t : {key ? facts.dtype(key) : DataType::kUndefined, DataType::kUndefined}) {
    auto it = table_.find({n.domain, n.op_type, t});
    if (it != table_.end())
      for (const KernelImpl& k : it->second) out.push_back(&k);
    if (t == DataType::kUndefined) break;
  }
  return out;
}

const KernelImpl& KernelTable::reference() {
  static const KernelImpl impl{.name = "reference", .match = match_reference,
                               .build = build_reference};
  return impl;
}

const KernelTable& KernelTable::global() {
  static const KernelTable table = [] {
    KernelTable t;
    register_layout_kernels(t);
    register_onednn_kernels(t);
    register_native_kernels(t);
    register_context_kernels(t);
    register_recurrent_kernels(t);
    return t;
  }();
  return table;
}

}  // namespace kiln::engine
