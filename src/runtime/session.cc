#include "runtime/session.h"

#include <iostream>

#include "ops/check.h"
#include "ops/infer.h"
#include "runtime/inline_functions.h"
#include "runtime/interpreter.h"
#include "spec/type_constraints.h"
#include "support/error.h"

namespace kiln {

void prepare_model(Model& model, const SessionOptions& opts) {
  AllocationCapScope cap(opts.allocation_cap);  // inference evaluates constant nodes
  // The warnings are what the caller allowed in opts: said where a person reads them.
  for (const std::string& w : check_model(model, {.allow_newer_opset = opts.allow_newer_opset}))
    std::cerr << "kiln: warning: " << w << "\n";
  inline_functions(model);
  if (opts.infer) infer_shapes(model);
  check_type_constraints(model);  // judges the types inference found
}

Session::Session(Model model, const SessionOptions& opts) : model_(std::move(model)), opts_(opts) {
  prepare_model(model_, opts_);
  for (const Value* v : model_.graph->inputs)
    if (!v->is_constant()) inputs_.push_back(v);
  for (const Value* v : model_.graph->outputs) outputs_.push_back(v);
}

Session::~Session() = default;

namespace {

void check_feed(const Value& in, const RtValue& v) {
  const TypeInfo& t = in.type;
  if (v.is_none()) {
    KILN_CHECK(in.is_constant() || t.kind == TypeInfo::Kind::kOptional, ErrorKind::kBadInput,
               "input '{}': no value given", in.name);
    return;
  }
  if (t.kind == TypeInfo::Kind::kSequence) {
    KILN_CHECK(v.is_sequence(), ErrorKind::kBadInput, "input '{}': expected a sequence, got {}",
               in.name, v.describe());
    return;
  }
  if (t.kind != TypeInfo::Kind::kTensor) return;
  KILN_CHECK(v.is_tensor(), ErrorKind::kBadInput, "input '{}': expected a tensor, got {}", in.name,
             v.describe());
  KILN_CHECK(t.elem == DataType::kUndefined || v.tensor.dtype() == t.elem, ErrorKind::kBadInput,
             "input '{}': dtype {}, the model expects {}", in.name, dtype_name(v.tensor.dtype()),
             dtype_name(t.elem));
  if (!t.shape) return;
  KILN_CHECK(v.tensor.rank() == static_cast<int>(t.shape->size()), ErrorKind::kBadInput,
             "input '{}': shape {}, the model expects rank {} {}", in.name,
             dims_to_string(v.tensor.dims()), t.shape->size(), shape_to_string(*t.shape));
  for (int i = 0; i < v.tensor.rank(); ++i) {
    const Dim& d = (*t.shape)[i];
    KILN_CHECK(!d.is_known() || d.value() == v.tensor.dim(i), ErrorKind::kBadInput,
               "input '{}': shape {}, the model expects {}", in.name,
               dims_to_string(v.tensor.dims()), shape_to_string(*t.shape));
  }
}

}  // namespace

void check_feeds(const std::vector<const Value*>& inputs, const std::vector<RtValue>& feeds) {
  KILN_CHECK(feeds.size() <= inputs.size(), ErrorKind::kBadInput,
             "{} inputs given, the model has {}", feeds.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    KILN_CHECK(i < feeds.size() || inputs[i]->type.kind == TypeInfo::Kind::kOptional,
               ErrorKind::kBadInput, "input '{}' was not given", inputs[i]->name);
    if (i < feeds.size()) check_feed(*inputs[i], feeds[i]);
  }
}

std::vector<RtValue> Session::run(const std::vector<RtValue>& feeds, RunObserver* observer) {
  AllocationCapScope cap(opts_.allocation_cap);
  check_feeds(inputs_, feeds);
  // Graph inputs with an initializer keep it (kNone) unless fed.
  std::vector<RtValue> all;
  size_t k = 0;
  for (const Value* v : model_.graph->inputs)
    all.push_back(v->is_constant() ? RtValue{} : (k < feeds.size() ? feeds[k++] : RtValue{}));
  return run_graph(*model_.graph, all, nullptr, observer);
}

std::map<std::string, RtValue> Session::run(const std::map<std::string, RtValue>& feeds,
                                            RunObserver* observer) {
  std::vector<RtValue> ordered(inputs_.size());
  size_t matched = 0;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    auto it = feeds.find(inputs_[i]->name);
    if (it != feeds.end()) {
      ordered[i] = it->second;
      ++matched;
    }
  }
  KILN_CHECK(matched == feeds.size(), ErrorKind::kBadInput,
             "some inputs given are not inputs of the model");
  auto results = run(ordered, observer);
  std::map<std::string, RtValue> out;
  for (size_t i = 0; i < outputs_.size(); ++i) out[outputs_[i]->name] = std::move(results[i]);
  return out;
}

}  // namespace kiln
