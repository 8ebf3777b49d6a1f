// A structure-aware mutator for fuzz_model: it parses the input as an ONNX ModelProto,
// changes one thing inside it and serializes it again, so the lengths of the messages around the
// change stay right. libFuzzer's byte mutations alone rarely survive that: an inserted or erased
// byte inside a node breaks the length prefix of the graph and the model around it, and the loader
// stops at the parse. Inputs that do not parse, and one mutation in eight, still get libFuzzer's
// own byte mutations (with the dictionary), so the parser's refusals stay fuzzed too.
//
// Mutations, on a message chosen at random among all the model's messages (nodes, attributes,
// tensors, types, dims, subgraphs, functions ...):
//   - libFuzzer's byte mutations on that message's own serialization, parsed back into it;
//   - one field set to a value chosen to reach edges: integers near 0, the limits and the sizes
//     of the model, floats such as NaN and infinity, names taken from the model (so a node reads
//     another value, a cycle or a dangling name), op types and domains from libonnx's schemas;
//   - an element of a repeated field removed, duplicated or moved (a node, an input, a dim).
// The crossover grafts a message of one input (a node, an initializer, a subgraph) into another.
//
// KILN_FUZZ_MUTATOR=bytes turns it off (libFuzzer's mutations only), to measure what it brings.
#include <onnx/defs/schema.h>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "onnx/proto.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

namespace pb = google::protobuf;
using Field = pb::FieldDescriptor;
using Rng = std::minstd_rand;

bool structured() {
  static const bool on = [] {
    const char* e = std::getenv("KILN_FUZZ_MUTATOR");
    return !(e && std::string(e) == "bytes");
  }();
  return on;
}

size_t pick(Rng& rng, size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); }

// A message field slot: the message and one of its message-typed fields (set or not).
struct Slot {
  pb::Message* parent;
  const Field* field;
};

// Every message of the tree under m (m first), and every slot that can hold a message.
void collect(pb::Message* m, std::vector<pb::Message*>& msgs, std::vector<Slot>* slots, int depth = 0) {
  msgs.push_back(m);
  if (depth > 32) return;  // subgraphs nest; the loader stops at 64, deep enough to mutate here
  const pb::Reflection* r = m->GetReflection();
  const pb::Descriptor* d = m->GetDescriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const Field* f = d->field(i);
    if (f->cpp_type() != Field::CPPTYPE_MESSAGE) continue;
    if (slots) slots->push_back({m, f});
    if (f->is_repeated()) {
      for (int k = 0; k < r->FieldSize(*m, f); ++k)
        collect(r->MutableRepeatedMessage(m, f, k), msgs, slots, depth + 1);
    } else if (r->HasField(*m, f)) {
      collect(r->MutableMessage(m, f), msgs, slots, depth + 1);
    }
  }
}

// Every string of the model (names, op types, domains), the values a name field can be given.
void collect_strings(const pb::Message& m, std::set<std::string>& out) {
  const pb::Reflection* r = m.GetReflection();
  std::vector<const Field*> fields;
  r->ListFields(m, &fields);
  for (const Field* f : fields) {
    if (f->cpp_type() == Field::CPPTYPE_STRING && f->type() == Field::TYPE_STRING) {
      if (f->is_repeated()) {
        for (int k = 0; k < r->FieldSize(m, f); ++k) out.insert(r->GetRepeatedString(m, f, k));
      } else {
        out.insert(r->GetString(m, f));
      }
    } else if (f->cpp_type() == Field::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) {
        for (int k = 0; k < r->FieldSize(m, f); ++k) collect_strings(r->GetRepeatedMessage(m, f, k), out);
      } else {
        collect_strings(r->GetMessage(m, f), out);
      }
    }
  }
}

const std::vector<std::string>& op_types() {
  static const std::vector<std::string> names = [] {
    std::set<std::string> s;
    for (const auto& schema : onnx::OpSchemaRegistry::get_all_schemas()) s.insert(schema.Name());
    return std::vector<std::string>(s.begin(), s.end());
  }();
  return names;
}

int64_t interesting_int(Rng& rng, int64_t current, int64_t model_size) {
  static constexpr int64_t kValues[] = {
      0, 1, -1, 2, 3, 4, 7, 8, 16, 17, 18, 21, 23, 64, 65, 255, 256, 1024, 65536,
      int64_t(1) << 31, (int64_t(1) << 31) - 1, int64_t(1) << 32, int64_t(1) << 40, int64_t(1) << 62,
      std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
      std::numeric_limits<int32_t>::min(), -2, -64};
  switch (pick(rng, 4)) {
    case 0: return static_cast<int64_t>(static_cast<uint64_t>(current) + (pick(rng, 2) ? 1 : -1));  // wraps
    case 1: return static_cast<int64_t>(pick(rng, 17)) - 8;
    case 2: return static_cast<int64_t>(pick(rng, static_cast<size_t>(model_size) + 1));
    default: return kValues[pick(rng, std::size(kValues))];
  }
}

double interesting_float(Rng& rng) {
  static constexpr double kValues[] = {
      0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-45, 1e-7, 1e38, 3.5e38, -3.5e38, 1e308,
      std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
      -std::numeric_limits<double>::infinity()};
  return kValues[pick(rng, std::size(kValues))];
}

std::string mutate_bytes(const std::string& s, size_t max_size) {
  std::string buf = s;
  buf.resize(std::max(max_size, s.size()));
  const size_t n = LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(buf.data()), s.size(), buf.size());
  buf.resize(n);
  return buf;
}

struct Mutator {
  Rng rng;
  std::vector<std::string> strings;  // of the model
  int64_t size;

  std::string a_string(const Field* f, const std::string& current) {
    const std::string& name = f->name();
    if (name == "op_type" || (pick(rng, 8) == 0 && !op_types().empty()))
      return op_types()[pick(rng, op_types().size())];
    if (name == "domain") {
      static const char* kDomains[] = {"", "ai.onnx", "ai.onnx.ml", "com.microsoft", "local", "ai.onnx.preview.training"};
      return kDomains[pick(rng, std::size(kDomains))];
    }
    switch (pick(rng, 3)) {
      case 0:
      case 1:
        if (!strings.empty()) return strings[pick(rng, strings.size())];
        [[fallthrough]];
      default: return mutate_bytes(current, current.size() + 16);
    }
  }

  // Sets (or adds to) one scalar field of m.
  void scalar(pb::Message* m, const Field* f) {
    const pb::Reflection* r = m->GetReflection();
    const int n = f->is_repeated() ? r->FieldSize(*m, f) : 0;
    // A repeated field: change an element, or add one (an element of several, removed below).
    const int k = f->is_repeated() && n > 0 && pick(rng, 3) ? static_cast<int>(pick(rng, n)) : -1;
    auto current_int = [&]() -> int64_t {
      if (f->is_repeated() && k < 0) return 0;
      switch (f->cpp_type()) {
        case Field::CPPTYPE_INT32: return k >= 0 ? r->GetRepeatedInt32(*m, f, k) : r->GetInt32(*m, f);
        case Field::CPPTYPE_INT64: return k >= 0 ? r->GetRepeatedInt64(*m, f, k) : r->GetInt64(*m, f);
        case Field::CPPTYPE_UINT32: return k >= 0 ? r->GetRepeatedUInt32(*m, f, k) : r->GetUInt32(*m, f);
        case Field::CPPTYPE_UINT64:
          return static_cast<int64_t>(k >= 0 ? r->GetRepeatedUInt64(*m, f, k) : r->GetUInt64(*m, f));
        default: return 0;
      }
    };
    switch (f->cpp_type()) {
      case Field::CPPTYPE_INT32: {
        const auto v = static_cast<int32_t>(interesting_int(rng, current_int(), size));
        if (k >= 0) r->SetRepeatedInt32(m, f, k, v);
        else if (f->is_repeated()) r->AddInt32(m, f, v);
        else r->SetInt32(m, f, v);
        break;
      }
      case Field::CPPTYPE_INT64: {
        const int64_t v = interesting_int(rng, current_int(), size);
        if (k >= 0) r->SetRepeatedInt64(m, f, k, v);
        else if (f->is_repeated()) r->AddInt64(m, f, v);
        else r->SetInt64(m, f, v);
        break;
      }
      case Field::CPPTYPE_UINT32: {
        const auto v = static_cast<uint32_t>(interesting_int(rng, current_int(), size));
        if (k >= 0) r->SetRepeatedUInt32(m, f, k, v);
        else if (f->is_repeated()) r->AddUInt32(m, f, v);
        else r->SetUInt32(m, f, v);
        break;
      }
      case Field::CPPTYPE_UINT64: {
        const auto v = static_cast<uint64_t>(interesting_int(rng, current_int(), size));
        if (k >= 0) r->SetRepeatedUInt64(m, f, k, v);
        else if (f->is_repeated()) r->AddUInt64(m, f, v);
        else r->SetUInt64(m, f, v);
        break;
      }
      case Field::CPPTYPE_FLOAT: {
        const auto v = static_cast<float>(interesting_float(rng));
        if (k >= 0) r->SetRepeatedFloat(m, f, k, v);
        else if (f->is_repeated()) r->AddFloat(m, f, v);
        else r->SetFloat(m, f, v);
        break;
      }
      case Field::CPPTYPE_DOUBLE: {
        const double v = interesting_float(rng);
        if (k >= 0) r->SetRepeatedDouble(m, f, k, v);
        else if (f->is_repeated()) r->AddDouble(m, f, v);
        else r->SetDouble(m, f, v);
        break;
      }
      case Field::CPPTYPE_BOOL:
        if (!f->is_repeated()) r->SetBool(m, f, !r->GetBool(*m, f));
        break;
      case Field::CPPTYPE_ENUM: {
        // Proto2 enums (AttributeType, DataType) take any number the file holds: out-of-range
        // values are the interesting ones, and reflection would refuse them, so stay in range
        // here and let the byte mutations make the others.
        const pb::EnumDescriptor* e = f->enum_type();
        const pb::EnumValueDescriptor* v = e->value(static_cast<int>(pick(rng, e->value_count())));
        if (k >= 0) r->SetRepeatedEnum(m, f, k, v);
        else if (f->is_repeated()) r->AddEnum(m, f, v);
        else r->SetEnum(m, f, v);
        break;
      }
      case Field::CPPTYPE_STRING: {
        if (k >= 0) r->SetRepeatedString(m, f, k, a_string(f, r->GetRepeatedString(*m, f, k)));
        else if (f->is_repeated()) r->AddString(m, f, a_string(f, ""));
        else r->SetString(m, f, a_string(f, r->GetString(*m, f)));
        break;
      }
      case Field::CPPTYPE_MESSAGE: break;
    }
  }

  // Removes, duplicates or moves an element of a repeated field; clears a singular one.
  void reshape(pb::Message* m, const Field* f) {
    const pb::Reflection* r = m->GetReflection();
    if (!f->is_repeated()) {
      r->ClearField(m, f);
      return;
    }
    const int n = r->FieldSize(*m, f);
    if (n == 0) return;
    const int k = static_cast<int>(pick(rng, n));
    switch (pick(rng, 3)) {
      case 0:  // remove element k
        r->SwapElements(m, f, k, n - 1);
        r->RemoveLast(m, f);
        break;
      case 1:  // duplicate element k (at the end)
        if (f->cpp_type() == Field::CPPTYPE_MESSAGE) {
          r->AddMessage(m, f)->CopyFrom(r->GetRepeatedMessage(*m, f, k));
        } else if (f->cpp_type() == Field::CPPTYPE_STRING) {
          r->AddString(m, f, r->GetRepeatedString(*m, f, k));
        } else {
          scalar(m, f);
        }
        break;
      default:  // swap two elements (nodes out of order, inputs exchanged)
        r->SwapElements(m, f, k, static_cast<int>(pick(rng, n)));
        break;
    }
  }

  // One change to message m.
  void mutate(pb::Message* m) {
    const pb::Descriptor* d = m->GetDescriptor();
    if (d->field_count() == 0) return;
    switch (pick(rng, 5)) {
      case 0: {  // bytes of the message's own serialization, parsed back into it
        const std::string before = m->SerializeAsString();
        std::unique_ptr<pb::Message> after(m->New());
        if (after->ParseFromString(mutate_bytes(before, before.size() * 2 + 64))) m->CopyFrom(*after);
        break;
      }
      case 1: reshape(m, d->field(static_cast<int>(pick(rng, d->field_count())))); break;
      default: {
        const Field* f = d->field(static_cast<int>(pick(rng, d->field_count())));
        if (f->cpp_type() == Field::CPPTYPE_MESSAGE) reshape(m, f);
        else scalar(m, f);
      }
    }
  }
};

size_t write(const onnx::ModelProto& model, uint8_t* data, size_t max_size) {
  const std::string out = model.SerializeAsString();
  if (out.empty() || out.size() > max_size) return 0;
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  Rng rng(seed);
  onnx::ModelProto model;
  if (!structured() || pick(rng, 8) == 0 || !model.ParseFromArray(data, static_cast<int>(size)))
    return LLVMFuzzerMutate(data, size, max_size);
  std::set<std::string> strings;
  collect_strings(model, strings);
  Mutator mut{.rng = rng, .strings = {strings.begin(), strings.end()}, .size = static_cast<int64_t>(size)};
  const int changes = 1 + static_cast<int>(pick(mut.rng, 2));
  for (int i = 0; i < changes; ++i) {
    std::vector<pb::Message*> msgs;  // again after each change: a removal may free some
    collect(&model, msgs, nullptr);
    mut.mutate(msgs[pick(mut.rng, msgs.size())]);
  }
  if (const size_t n = write(model, data, max_size)) return n;
  return LLVMFuzzerMutate(data, size, max_size);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1, const uint8_t* data2,
                                            size_t size2, uint8_t* out, size_t max_out_size,
                                            unsigned int seed) {
  if (!structured()) return 0;  // libFuzzer then mutates another way
  Rng rng(seed);
  onnx::ModelProto a, b;
  if (!a.ParseFromArray(data1, static_cast<int>(size1)) ||
      !b.ParseFromArray(data2, static_cast<int>(size2)))
    return 0;
  std::vector<pb::Message*> a_msgs, b_msgs;
  std::vector<Slot> slots;
  collect(&a, a_msgs, &slots);
  collect(&b, b_msgs, nullptr);
  if (b_msgs.size() < 2) return 0;
  // A message of b (not b itself) into a slot of a that holds its type.
  const pb::Message* graft = b_msgs[1 + pick(rng, b_msgs.size() - 1)];
  std::vector<Slot> fits;
  for (const Slot& s : slots)
    if (s.field->message_type() == graft->GetDescriptor()) fits.push_back(s);
  if (fits.empty()) return 0;
  const Slot& s = fits[pick(rng, fits.size())];
  const pb::Reflection* r = s.parent->GetReflection();
  if (s.field->is_repeated()) {
    r->AddMessage(s.parent, s.field)->CopyFrom(*graft);
    // Move it to a random place: graph order matters (a node before what it reads).
    const int n = r->FieldSize(*s.parent, s.field);
    for (int k = n - 1, to = static_cast<int>(pick(rng, n)); k > to; --k) r->SwapElements(s.parent, s.field, k, k - 1);
  } else {
    r->MutableMessage(s.parent, s.field)->CopyFrom(*graft);
  }
  return write(a, out, max_out_size);
}
