#include "spec/tensor_file.h"

#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "spec/tensor_data.h"
#include "support/error.h"
#include "support/limits.h"
#include "support/mapped_file.h"
#include "support/read_file.h"

namespace kiln {

namespace {

// -- protobuf's wire format, read

enum Wire { kVarint = 0, kFixed64 = 1, kLength = 2, kStartGroup = 3, kEndGroup = 4, kFixed32 = 5 };

struct Malformed {};  // the bytes are not a message; the caller names the file

class Reader {
 public:
  explicit Reader(std::string_view bytes) : p_(bytes.data()), end_(bytes.data() + bytes.size()) {}

  bool done() const { return p_ == end_; }

  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (p_ == end_) throw Malformed{};
      const auto byte = static_cast<uint8_t>(*p_++);
      if (shift == 63 && byte > 1) throw Malformed{};
      v |= uint64_t{byte & 0x7fu} << shift;
      if (!(byte & 0x80)) return v;
    }
    throw Malformed{};
  }
  template <typename T>
  T fixed() {
    if (end_ - p_ < static_cast<ptrdiff_t>(sizeof(T))) throw Malformed{};
    T v;
    std::memcpy(&v, p_, sizeof v);
    p_ += sizeof v;
    return v;
  }
  std::string_view bytes() {
    const uint64_t n = varint();
    if (n > static_cast<uint64_t>(end_ - p_)) throw Malformed{};
    std::string_view s(p_, static_cast<size_t>(n));
    p_ += n;
    return s;
  }
  // The next field's number and wire type; false at the end.
  bool next(uint32_t& field, int& wire) {
    if (done()) return false;
    const uint64_t tag = varint();
    field = static_cast<uint32_t>(tag >> 3);
    wire = static_cast<int>(tag & 7);
    if (tag > 0xffffffffu || field == 0 || wire > kFixed32 || wire == kEndGroup) throw Malformed{};
    return true;
  }
  // Skips a field of a number kiln does not read (or read with another wire type).
  void skip(uint32_t field, int wire, int depth = 0) {
    switch (wire) {
      case kVarint: varint(); return;
      case kFixed64: fixed<uint64_t>(); return;
      case kLength: bytes(); return;
      case kFixed32: fixed<uint32_t>(); return;
      case kStartGroup: {
        if (depth > limits::kMaxGraphNesting * 4) throw Malformed{};
        for (;;) {
          if (done()) throw Malformed{};
          const uint64_t tag = varint();
          const auto f = static_cast<uint32_t>(tag >> 3);
          const int w = static_cast<int>(tag & 7);
          if (w == kEndGroup) {
            if (f != field) throw Malformed{};
            return;
          }
          if (f == 0 || w > kFixed32) throw Malformed{};
          skip(f, w, depth + 1);
        }
      }
      default: throw Malformed{};
    }
  }

 private:
  const char* p_;
  const char* end_;
};

// Walks a message none of whose fields kiln reads (TensorProto's Segment: two numbers), so that
// it is judged a message as protobuf judges it.
void walk_message(std::string_view bytes) {
  Reader r(bytes);
  uint32_t field;
  int wire;
  while (r.next(field, wire)) r.skip(field, wire);
}

// A repeated number field, packed (one length-delimited run) or not (one value per tag).
template <typename T>
bool read_repeated(Reader& r, int wire, int want, std::vector<T>& out) {
  auto one = [&](Reader& from) -> T {
    if constexpr (std::is_same_v<T, float>) return from.fixed<float>();
    else if constexpr (std::is_same_v<T, double>) return from.fixed<double>();
    else return static_cast<T>(from.varint());
  };
  if (wire == kLength) {
    Reader packed(r.bytes());
    while (!packed.done()) out.push_back(one(packed));
    return true;
  }
  if (wire != want) return false;
  out.push_back(one(r));
  return true;
}

// A TensorProto's fields (onnx.proto's numbers); strings view the file's bytes.
struct TensorMessage {
  int32_t data_type = 0;
  std::vector<int64_t> dims;
  bool segmented = false;
  int32_t data_location = 0;
  std::optional<std::string> raw;
  std::vector<float> float_data;
  std::vector<int32_t> int32_data;
  std::vector<int64_t> int64_data;
  std::vector<double> double_data;
  std::vector<uint64_t> uint64_data;
  std::vector<std::string_view> string_data;
  std::vector<std::pair<std::string_view, std::string_view>> external_data;
  std::string name;
};

std::pair<std::string_view, std::string_view> read_string_pair(std::string_view bytes) {
  Reader r(bytes);
  std::pair<std::string_view, std::string_view> kv;
  uint32_t field;
  int wire;
  while (r.next(field, wire)) {
    if (field == 1 && wire == kLength) kv.first = r.bytes();
    else if (field == 2 && wire == kLength) kv.second = r.bytes();
    else r.skip(field, wire);
  }
  return kv;
}

// Reads (merges, as protobuf does for a message given twice) a TensorProto into m.
void read_tensor(std::string_view bytes, TensorMessage& m) {
  Reader r(bytes);
  uint32_t field;
  int wire;
  while (r.next(field, wire)) {
    bool taken = true;
    switch (field) {
      case 1: taken = read_repeated(r, wire, kVarint, m.dims); break;
      case 2: taken = wire == kVarint && (m.data_type = static_cast<int32_t>(r.varint()), true); break;
      case 3: taken = wire == kLength && (walk_message(r.bytes()), m.segmented = true); break;
      case 4: taken = read_repeated(r, wire, kFixed32, m.float_data); break;
      case 5: taken = read_repeated(r, wire, kVarint, m.int32_data); break;
      case 6: taken = wire == kLength && (m.string_data.push_back(r.bytes()), true); break;
      case 7: taken = read_repeated(r, wire, kVarint, m.int64_data); break;
      case 8: taken = wire == kLength && (m.name = r.bytes(), true); break;
      case 9: taken = wire == kLength && (m.raw = std::string(r.bytes()), true); break;
      case 10: taken = read_repeated(r, wire, kFixed64, m.double_data); break;
      case 11: taken = read_repeated(r, wire, kVarint, m.uint64_data); break;
      case 13: taken = wire == kLength && (m.external_data.push_back(read_string_pair(r.bytes())), true); break;
      case 14:
        if (wire == kVarint) {
          // An enum value proto2 does not know stays out of the field (DEFAULT).
          const auto v = static_cast<int32_t>(r.varint());
          if (v == 0 || v == 1) m.data_location = v;
        } else {
          taken = false;
        }
        break;
      default: taken = false;
    }
    if (!taken) r.skip(field, wire);
  }
}

Tensor to_tensor(TensorMessage& m, const std::string& what) {
  TensorFields f{.data_type = m.data_type,
                 .dims = m.dims,
                 .segmented = m.segmented,
                 .external = m.data_location == 1,
                 .raw = m.raw ? &*m.raw : nullptr,
                 .float_data = m.float_data,
                 .int32_data = m.int32_data,
                 .int64_data = m.int64_data,
                 .double_data = m.double_data,
                 .uint64_data = m.uint64_data,
                 .string_data = m.string_data,
                 .external_data = m.external_data};
  return tensor_from_fields(f, nullptr, what);
}

// A SequenceProto: its tensors, and how many values of other kinds it holds.
struct SequenceMessage {
  std::string name;
  std::vector<TensorMessage> tensors;
  int others = 0;  // sequence, map and optional values
};

void read_sequence(std::string_view bytes, SequenceMessage& m) {
  Reader r(bytes);
  uint32_t field;
  int wire;
  while (r.next(field, wire)) {
    if (field == 1 && wire == kLength) {
      m.name = r.bytes();
    } else if (field == 3 && wire == kLength) {
      read_tensor(r.bytes(), m.tensors.emplace_back());
    } else if (field >= 5 && field <= 7 && wire == kLength) {
      walk_message(r.bytes());  // refused below: only their structure is judged
      ++m.others;
    } else {
      r.skip(field, wire);
    }
  }
}

RtValue sequence_value(SequenceMessage& m, const std::string& what) {
  std::vector<Tensor> items;
  for (TensorMessage& t : m.tensors) items.push_back(to_tensor(t, what));
  KILN_CHECK(m.others == 0, ErrorKind::kUnsupported, "{}: sequences of non-tensors are not supported", what);
  return RtValue::of_sequence(std::move(items));
}

// An OptionalProto's fields (elem_type: 1 a tensor, 3 a sequence).
struct OptionalMessage {
  std::string name;
  int32_t elem_type = 0;
  std::optional<TensorMessage> tensor;
  std::optional<SequenceMessage> sequence;
};

void read_optional(std::string_view bytes, OptionalMessage& m) {
  Reader r(bytes);
  uint32_t field;
  int wire;
  while (r.next(field, wire)) {
    if (field == 1 && wire == kLength) {
      m.name = r.bytes();
    } else if (field == 2 && wire == kVarint) {
      m.elem_type = static_cast<int32_t>(r.varint());
    } else if (field == 3 && wire == kLength) {
      if (!m.tensor) m.tensor.emplace();
      read_tensor(r.bytes(), *m.tensor);
    } else if (field == 5 && wire == kLength) {
      if (!m.sequence) m.sequence.emplace();
      read_sequence(r.bytes(), *m.sequence);
    } else {
      r.skip(field, wire);
    }
  }
}

// -- written, in field-number order as protobuf writes them

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void put_tag(std::string& out, uint32_t field, Wire wire) { put_varint(out, (uint64_t{field} << 3) | wire); }

void put_bytes(std::string& out, uint32_t field, std::string_view bytes) {
  put_tag(out, field, kLength);
  put_varint(out, bytes.size());
  out.append(bytes);
}

// A TensorProto: dims, data_type, string_data or raw_data, and the name when given.
std::string tensor_message(const Tensor& t, const std::string* name) {
  std::string out;
  for (int64_t d : t.dims()) {
    put_tag(out, 1, kVarint);
    put_varint(out, static_cast<uint64_t>(d));
  }
  put_tag(out, 2, kVarint);
  put_varint(out, static_cast<uint64_t>(static_cast<int64_t>(t.dtype())));
  if (t.dtype() == DataType::kString)
    for (int64_t i = 0; i < t.numel(); ++i) put_bytes(out, 6, t.strings()[i]);
  if (name) put_bytes(out, 8, *name);
  if (t.dtype() != DataType::kString) put_bytes(out, 9, raw_data_of(t));
  return out;
}

template <typename F>
void parse_or_fail(const std::string& what, const char* message, F&& parse) {
  try {
    parse();
  } catch (const Malformed&) {
    fail(ErrorKind::kBadInput, "{} is not a valid serialized onnx.{}", what, message);
  }
}

// `file` names the bytes when they are not a message, `what` the tensors in them.
RtValue value_from_bytes(const std::string& bytes, TypeInfo::Kind kind, const std::string& file,
                         const std::string& what, std::string* name) {
  const std::string quoted = "'" + file + "'";
  // A test data file does not say which message it holds: the model's type of the value does.
  if (kind == TypeInfo::Kind::kSequence) {
    SequenceMessage m;
    parse_or_fail(quoted, "SequenceProto", [&] { read_sequence(bytes, m); });
    if (name) *name = m.name;
    return sequence_value(m, what);
  }
  if (kind == TypeInfo::Kind::kOptional) {
    OptionalMessage m;
    parse_or_fail(quoted, "OptionalProto", [&] { read_optional(bytes, m); });
    if (name) *name = m.name;
    if (m.elem_type == 1) {  // TENSOR: an absent value reads as an empty TensorProto
      if (!m.tensor) m.tensor.emplace();
      return RtValue::of(to_tensor(*m.tensor, what));
    }
    if (m.elem_type == 3) {  // SEQUENCE
      if (!m.sequence) m.sequence.emplace();
      return sequence_value(*m.sequence, what);
    }
    return RtValue{};
  }
  TensorMessage m;
  parse_or_fail(quoted, "TensorProto", [&] { read_tensor(bytes, m); });
  if (name) *name = m.name;
  return RtValue::of(with_context(what + ": ", [&] { return to_tensor(m, "tensor"); }));
}

}  // namespace

RtValue parse_value(std::string bytes, TypeInfo::Kind kind, const std::string& what, std::string* name) {
  return value_from_bytes(bytes, kind, what, what, name);
}

RtValue read_value_file(const std::filesystem::path& path, TypeInfo::Kind kind, std::string* name) {
  return value_from_bytes(read_file(path), kind, path.string(), path.filename().string(), name);
}

std::string serialize_value(const RtValue& v, const std::string& name) {
  if (v.is_tensor()) return tensor_message(v.tensor, &name);
  std::string out;
  put_bytes(out, 1, name);
  put_tag(out, 2, kVarint);
  if (v.is_sequence()) {
    put_varint(out, 1);  // SequenceProto.TENSOR
    for (const Tensor& t : v.sequence) put_bytes(out, 3, tensor_message(t, nullptr));
    return out;
  }
  put_varint(out, 0);  // OptionalProto.UNDEFINED: an empty optional
  return out;
}

void write_tensor_file(const std::filesystem::path& path, const Tensor& t, const std::string& name) {
  write_file_atomically(path, tensor_message(t, &name));
}

void write_value_file(const std::filesystem::path& path, const RtValue& v, const std::string& name) {
  write_file_atomically(path, serialize_value(v, name));
}

}  // namespace kiln
