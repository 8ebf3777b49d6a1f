#include "ops/op.h"

#include "support/error.h"

namespace kiln {

OpSchema& OpRegistry::add(std::string domain, std::string name, const char* file) {
  KILN_ASSERT(!find(domain, name), "op registered twice: " + name);
  auto s = std::make_unique<OpSchema>();
  s->domain = std::move(domain);
  s->name = std::move(name);
  // The path below src/, whatever folder the build ran in.
  const std::string_view path = file;
  const size_t src = path.rfind("src/");
  s->file = std::string(src == std::string_view::npos ? path : path.substr(src + 4));
  by_name_[s->name].push_back(s.get());
  ops_.push_back(std::move(s));
  return *ops_.back();
}

const OpSchema* OpRegistry::find(std::string_view domain, std::string_view name) const {
  if (domain == "ai.onnx") domain = "";
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return nullptr;
  for (const OpSchema* s : it->second)
    if (s->domain == domain) return s;
  return nullptr;
}

const AttrSpec* OpSchema::find_attr(std::string_view n) const {
  for (const AttrSpec& a : attrs)
    if (a.name == n) return &a;
  return nullptr;
}

InferContext::InferContext(const Node& node, std::vector<Input> inputs, SubgraphInferFn subgraph)
    : node_(node),
      inputs_(std::move(inputs)),
      subgraph_(std::move(subgraph)),
      outputs_(node.outputs.size()),
      values_(node.outputs.size()) {}

const TypeInfo& InferContext::input_type(int i) const {
  if (!has_input(i)) fail_here(fmt::format("input {} is required", i));
  return *inputs_[i].type;
}

int InferContext::input_rank(int i) const {
  const auto& s = input_type(i).shape;
  return s ? static_cast<int>(s->size()) : -1;
}

std::optional<std::vector<Dim>> InferContext::input_dims_value(int i) const {
  if (!has_input(i)) return std::nullopt;
  // A constant is exact: it wins over a propagated value.
  const Tensor* c = inputs_[i].constant;
  if (c && is_integer(c->dtype()) && c->rank() <= 1 && c->numel() <= 64) {
    std::vector<Dim> v;
    for (int64_t k = 0; k < c->numel(); ++k) v.emplace_back(c->get_i64(k));
    return v;
  }
  if (inputs_[i].dims_value) return *inputs_[i].dims_value;
  return std::nullopt;
}

void InferContext::set_output(int i, TypeInfo t) {
  if (i < num_outputs()) outputs_[i] = std::move(t);
}

void InferContext::set_output_dims_value(int i, std::vector<Dim> v) {
  if (i < num_outputs()) values_[i] = std::move(v);
}

void InferContext::fail_here(const std::string& msg) const {
  throw Error(ErrorKind::kBadModel, node_.where() + msg);
}

KernelContext::KernelContext(const Node& node, std::span<const RtValue* const> inputs,
                             std::vector<RtValue>& outputs, SubgraphRunner* runner)
    : node_(node), inputs_(inputs), outputs_(outputs), runner_(runner) {
  outputs_.resize(node.outputs.size());
}

const RtValue& KernelContext::input_value(int i) const {
  if (i >= num_inputs() || !inputs_[i]) fail_here(fmt::format("input {} is required", i));
  return *inputs_[i];
}

const Tensor& KernelContext::input(int i) const {
  const RtValue& v = input_value(i);
  if (!v.is_tensor()) fail_here(fmt::format("input {} is {}, expected a tensor", i, v.describe()));
  return v.tensor;
}

void KernelContext::set_output(int i, Tensor t) { set_output(i, RtValue::of(std::move(t))); }

void KernelContext::set_output(int i, RtValue v) {
  if (i < static_cast<int>(outputs_.size())) outputs_[i] = std::move(v);
}

std::vector<RtValue> KernelContext::run_subgraph(const Graph& g, std::vector<RtValue> inputs) {
  KILN_ASSERT(runner_ != nullptr, "no subgraph runner");
  return runner_->run(g, std::move(inputs));
}

void KernelContext::fail_here(const std::string& msg) const {
  throw Error(ErrorKind::kRuntime, node_.where() + msg);
}

}  // namespace kiln
