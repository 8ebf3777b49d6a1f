#include "spec/tensor_data.h"

#include <climits>
#include <cstring>

#include "ir/graph.h"
#include "support/checked_math.h"
#include "support/error.h"
#include "support/limits.h"

namespace kiln {

namespace {

int64_t packed_bytes(DataType t, int64_t numel) {
  const int bits = dtype_file_bits(t);
  return (numel * bits + 7) / 8;
}

// Unpacks sub-byte elements (low bits first) into one byte each, sign-extending signed kinds.
void unpack_subbyte(DataType t, const uint8_t* src, int64_t numel, uint8_t* dst) {
  const int bits = dtype_file_bits(t);
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1 << bits) - 1);
  const bool sign = t == DataType::kInt4 || t == DataType::kInt2;
  for (int64_t i = 0; i < numel; ++i) {
    uint8_t v = (src[i / per_byte] >> ((i % per_byte) * bits)) & mask;
    if (sign && (v & (1 << (bits - 1)))) v |= static_cast<uint8_t>(~mask);
    dst[i] = v;
  }
}

std::string pack_subbyte(DataType t, const uint8_t* src, int64_t numel) {
  const int bits = dtype_file_bits(t);
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1 << bits) - 1);
  std::string out(static_cast<size_t>(packed_bytes(t, numel)), '\0');
  for (int64_t i = 0; i < numel; ++i)
    out[i / per_byte] = static_cast<char>(out[i / per_byte] | ((src[i] & mask) << ((i % per_byte) * bits)));
  return out;
}

bool is_sub_byte(DataType t) { return dtype_file_bits(t) < 8; }

int count_data_fields(const TensorFields& p) {
  return int(p.raw != nullptr) + int(!p.float_data.empty()) + int(!p.int32_data.empty()) +
         int(!p.string_data.empty()) + int(!p.int64_data.empty()) + int(!p.double_data.empty()) +
         int(!p.uint64_data.empty());
}

// Fills t from raw little-endian bytes laid out as in an ONNX file.
void fill_from_raw(Tensor& t, const uint8_t* bytes, int64_t size, const std::string& what) {
  const DataType dt = t.dtype();
  const int64_t need = packed_bytes(dt, t.numel());
  KILN_CHECK(size == need, ErrorKind::kBadModel, "{}: {} bytes of data, {} {} needs {}", what, size,
             dtype_name(dt), dims_to_string(t.dims()), need);
  if (is_sub_byte(dt)) unpack_subbyte(dt, bytes, t.numel(), static_cast<uint8_t*>(t.raw()));
  else if (need > 0) std::memcpy(t.raw(), bytes, static_cast<size_t>(need));
}

// The values a typed data field holds for n elements: two per complex element, one per packed
// byte of a sub-byte type, else one per element.
int64_t values_needed(DataType dt, int64_t n) {
  if (is_complex(dt)) return 2 * n;
  if (is_sub_byte(dt)) return packed_bytes(dt, n);
  return n;
}

template <typename T>
void fill_from_field(Tensor& t, std::span<const T> field, const std::string& what) {
  const DataType dt = t.dtype();
  const int64_t n = t.numel();
  const bool complex = is_complex(dt);
  const int64_t expect = complex ? 2 * n : (is_sub_byte(dt) ? packed_bytes(dt, n) : n);
  // int4/uint4 in int32_data: two per element; int2: four per element
  const int64_t expect_elems = is_sub_byte(dt) ? (n * dtype_file_bits(dt) + 7) / 8 : expect;
  KILN_CHECK(static_cast<int64_t>(field.size()) == expect_elems, ErrorKind::kBadModel,
             "{}: {} values stored, {} {} needs {}", what, field.size(), dtype_name(dt),
             dims_to_string(t.dims()), expect_elems);
  if (is_sub_byte(dt)) {
    std::string packed(static_cast<size_t>(expect_elems), '\0');
    for (int64_t i = 0; i < expect_elems; ++i)
      packed[i] = static_cast<char>(static_cast<int64_t>(field[i]) & 0xff);
    unpack_subbyte(dt, reinterpret_cast<const uint8_t*>(packed.data()), n,
                   static_cast<uint8_t*>(t.raw()));
    return;
  }
  for (int64_t i = 0; i < expect; ++i) {
    const auto v = field[i];
    switch (dt) {
      case DataType::kFloat: t.data<float>()[i] = static_cast<float>(v); break;
      case DataType::kComplex64: t.data<float>()[i] = static_cast<float>(v); break;
      case DataType::kDouble: case DataType::kComplex128:
        t.data<double>()[i] = static_cast<double>(v); break;
      case DataType::kInt64: t.data<int64_t>()[i] = static_cast<int64_t>(v); break;
      case DataType::kUInt64: t.data<uint64_t>()[i] = static_cast<uint64_t>(v); break;
      case DataType::kUInt32: t.data<uint32_t>()[i] = static_cast<uint32_t>(v); break;
      case DataType::kInt32: t.data<int32_t>()[i] = static_cast<int32_t>(v); break;
      case DataType::kInt16: t.data<int16_t>()[i] = static_cast<int16_t>(v); break;
      case DataType::kUInt16: case DataType::kFloat16: case DataType::kBFloat16:
        t.data<uint16_t>()[i] = static_cast<uint16_t>(v); break;
      case DataType::kBool: t.data<bool>()[i] = v != 0; break;
      default: t.data<uint8_t>()[i] = static_cast<uint8_t>(v); break;  // int8, uint8, float8s
    }
  }
}

// Which typed field ONNX uses for a data type.
enum class Field { kFloat, kInt32, kInt64, kDouble, kUInt64, kString };
Field field_for(DataType t) {
  switch (t) {
    case DataType::kFloat: case DataType::kComplex64: return Field::kFloat;
    case DataType::kDouble: case DataType::kComplex128: return Field::kDouble;
    case DataType::kInt64: return Field::kInt64;
    case DataType::kUInt32: case DataType::kUInt64: return Field::kUInt64;
    case DataType::kString: return Field::kString;
    default: return Field::kInt32;
  }
}

Tensor read_external(const TensorFields& p, DataType dt, std::vector<int64_t> dims,
                     ExternalData* external, const std::string& what) {
  KILN_CHECK(external != nullptr, ErrorKind::kBadModel,
             "{}: external data is not allowed here", what);
  std::string location;
  int64_t offset = 0, length = -1;
  bool has_offset = false;
  for (const auto& [key, value] : p.external_data) {
    if (key == "location") location = value;
    else if (key == "offset" || key == "length") {
      int64_t v = 0;
      try {
        size_t used = 0;
        v = std::stoll(std::string(value), &used);
        KILN_CHECK(used == value.size(), ErrorKind::kBadModel, "");
      } catch (const std::exception&) {
        fail(ErrorKind::kBadModel, "{}: external data {} '{}' is not a number", what, key, value);
      }
      KILN_CHECK(v >= 0, ErrorKind::kBadModel, "{}: external data {} {} is negative", what, key, v);
      if (key == "offset") { offset = v; has_offset = true; }
      else length = v;
    }
  }
  (void)has_offset;
  KILN_CHECK(dt != DataType::kString, ErrorKind::kBadModel,
             "{}: string tensors cannot use external data", what);
  const auto path = with_context(what + ": ", [&] { return safe_external_path(external->model_dir, location); });
  auto& file = external->files[path];
  if (!file) file = MappedFile::open(path);
  // The dims' product was checked by the caller; a Tensor is made only when the bytes must be
  // copied (allocating first would zero a buffer the size of the weights and then drop it).
  const int64_t need = packed_bytes(dt, *checked_product(dims));
  if (length < 0) length = file->size() - std::min(offset, file->size());
  KILN_CHECK(offset <= file->size() && length <= file->size() - offset, ErrorKind::kBadModel,
             "{}: external data offset {} + length {} is past the end of '{}' ({} bytes)", what,
             offset, length, location, file->size());
  KILN_CHECK(length == need, ErrorKind::kBadModel,
             "{}: external data length {} but {} {} needs {} bytes", what, length, dtype_name(dt),
             dims_to_string(dims), need);
  uint8_t* src = file->data() + offset;
  const bool aligned = reinterpret_cast<uintptr_t>(src) % std::max<size_t>(dtype_size(dt), 1) == 0;
  if (!is_sub_byte(dt) && aligned && need > 0) {  // view in place: no copy of large weights
    return Tensor::view(dt, std::move(dims), std::shared_ptr<void>(file, file.get()), src);
  }
  Tensor t(dt, std::move(dims));
  fill_from_raw(t, src, length, what);
  return t;
}

}  // namespace

Tensor tensor_from_fields(TensorFields& p, ExternalData* external, const std::string& what) {
  KILN_CHECK(is_valid_dtype(p.data_type), ErrorKind::kBadModel, "{}: unknown data type {}", what,
             p.data_type);
  const DataType dt = static_cast<DataType>(p.data_type);
  KILN_CHECK(p.dims.size() <= size_t{limits::kMaxRank}, ErrorKind::kBadModel,
             "{}: rank {} above the limit {}", what, p.dims.size(), limits::kMaxRank);
  std::vector<int64_t> dims(p.dims.begin(), p.dims.end());
  for (int64_t d : dims)
    KILN_CHECK(d >= 0, ErrorKind::kBadModel, "{}: negative dim {} in {}", what, d,
               dims_to_string(dims));
  auto numel = checked_product(dims);
  KILN_CHECK(numel.has_value() && checked_mul(*numel, 16).has_value(), ErrorKind::kBadModel,
             "{}: dims {} overflow", what, dims_to_string(dims));
  KILN_CHECK(!p.segmented, ErrorKind::kUnsupported, "{}: segmented tensors are not supported",
             what);

  if (p.external) {
    KILN_CHECK(count_data_fields(p) == 0, ErrorKind::kBadModel,
               "{}: external data and an embedded data field both set", what);
    return read_external(p, dt, std::move(dims), external, what);
  }
  const int fields = count_data_fields(p);
  KILN_CHECK(fields <= 1, ErrorKind::kBadModel, "{}: {} data fields set, expected one", what,
             fields);

  if (p.raw) {
    KILN_CHECK(dt != DataType::kString, ErrorKind::kBadModel,
               "{}: string tensor stored in raw_data", what);
    std::string& raw = *p.raw;
    const int64_t need = packed_bytes(dt, *numel);
    KILN_CHECK(static_cast<int64_t>(raw.size()) == need, ErrorKind::kBadModel,
               "{}: raw_data has {} bytes, {} {} needs {}", what, raw.size(), dtype_name(dt),
               dims_to_string(dims), need);
    if (!is_sub_byte(dt) && need > 0) {  // take the parsed bytes over without another copy
      auto owner = std::make_shared<std::string>();
      owner->swap(raw);
      void* data = owner->data();
      return Tensor::view(dt, std::move(dims), std::move(owner), data);
    }
    Tensor t(dt, std::move(dims));
    fill_from_raw(t, reinterpret_cast<const uint8_t*>(raw.data()), need, what);
    return t;
  }

  // The values stored are counted before the tensor is allocated: dims of a few bytes must not
  // make kiln allocate (and zero) gigabytes that the data could never fill.
  if (fields == 0) {
    KILN_CHECK(*numel == 0, ErrorKind::kBadModel, "{}: no data for {} {}", what, dtype_name(dt),
               dims_to_string(dims));
    return Tensor(dt, std::move(dims));
  }
  const int64_t stored = static_cast<int64_t>(p.float_data.size() + p.int32_data.size() + p.int64_data.size() +
                                              p.double_data.size() + p.uint64_data.size() + p.string_data.size());
  const int64_t needed = dt == DataType::kString ? *numel : values_needed(dt, *numel);
  KILN_CHECK(stored == needed, ErrorKind::kBadModel, "{}: {} values stored, {} {} needs {}", what,
             stored, dtype_name(dt), dims_to_string(dims), needed);
  Tensor t(dt, std::move(dims));
  const Field want = field_for(dt);
  auto wrong = [&](const char* field) {
    fail(ErrorKind::kBadModel, "{}: {} data stored in {}", what, dtype_name(dt), field);
  };
  if (!p.float_data.empty()) {
    if (want != Field::kFloat) wrong("float_data");
    fill_from_field(t, p.float_data, what);
  } else if (!p.int32_data.empty()) {
    if (want != Field::kInt32) wrong("int32_data");
    fill_from_field(t, p.int32_data, what);
  } else if (!p.int64_data.empty()) {
    if (want != Field::kInt64) wrong("int64_data");
    fill_from_field(t, p.int64_data, what);
  } else if (!p.double_data.empty()) {
    if (want != Field::kDouble) wrong("double_data");
    fill_from_field(t, p.double_data, what);
  } else if (!p.uint64_data.empty()) {
    if (want != Field::kUInt64) wrong("uint64_data");
    fill_from_field(t, p.uint64_data, what);
  } else if (!p.string_data.empty()) {
    if (want != Field::kString) wrong("string_data");
    KILN_CHECK(static_cast<int64_t>(p.string_data.size()) == *numel, ErrorKind::kBadModel,
               "{}: {} strings stored, dims {} need {}", what, p.string_data.size(),
               dims_to_string(t.dims()), *numel);
    for (size_t i = 0; i < p.string_data.size(); ++i) t.strings()[i] = std::string(p.string_data[i]);
  }
  return t;
}

std::string raw_data_of(const Tensor& t) {
  if (is_sub_byte(t.dtype())) return pack_subbyte(t.dtype(), static_cast<const uint8_t*>(t.raw()), t.numel());
  return std::string(static_cast<const char*>(t.raw()), t.nbytes());
}

}  // namespace kiln
