// kiln's own wire-format codec of test data files (spec/tensor_file.h, no protobuf) against
// protobuf's classes of the same messages: what one writes the other reads, byte for byte where
// both write, and on damaged bytes both call the same messages valid or not.
#include "spec/tensor_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "onnx/proto.h"
#include "onnx/tensor_proto.h"
#include "support/error.h"

namespace kiln {
namespace {

Tensor filled(DataType dt, std::vector<int64_t> dims, uint32_t seed) {
  Tensor t(dt, std::move(dims));
  std::mt19937 rng(seed);
  if (dt == DataType::kString) {
    for (int64_t i = 0; i < t.numel(); ++i) t.strings()[i] = std::string(i % 5, static_cast<char>('a' + i % 26));
    return t;
  }
  auto* bytes = static_cast<uint8_t*>(t.raw());
  for (size_t i = 0; i < t.nbytes(); ++i) bytes[i] = static_cast<uint8_t>(rng());
  if (dt == DataType::kBool)
    for (size_t i = 0; i < t.nbytes(); ++i) bytes[i] &= 1;
  if (dt == DataType::kInt4)  // one byte per element in memory, sign-extended
    for (size_t i = 0; i < t.nbytes(); ++i) bytes[i] = static_cast<uint8_t>(static_cast<int8_t>(bytes[i] << 4) >> 4);
  return t;
}

void expect_same(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.dims(), b.dims());
  if (a.dtype() == DataType::kString) {
    for (int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(a.strings()[i], b.strings()[i]);
    return;
  }
  ASSERT_EQ(a.nbytes(), b.nbytes());
  EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0);
}

std::vector<Tensor> cases() {
  return {filled(DataType::kFloat, {2, 3}, 1),   filled(DataType::kInt64, {4}, 2),
          filled(DataType::kFloat16, {3, 1, 2}, 3), filled(DataType::kBool, {5}, 4),
          filled(DataType::kInt4, {7}, 5),       filled(DataType::kString, {2, 2}, 6),
          filled(DataType::kDouble, {}, 7),      filled(DataType::kUInt8, {0, 3}, 8)};
}

TEST(TensorFile, WritesWhatProtobufWritesAndReadsItBack) {
  for (const Tensor& t : cases()) {
    onnx::TensorProto p;
    tensor_to_proto(t, p);
    p.set_name("x");
    EXPECT_EQ(serialize_value(RtValue::of(t), "x"), p.SerializeAsString()) << dtype_name(t.dtype());
    std::string name;
    const RtValue back = parse_value(p.SerializeAsString(), TypeInfo::Kind::kTensor, "t", &name);
    EXPECT_EQ(name, "x");
    expect_same(back.tensor, t);
  }
  onnx::SequenceProto sp;
  sp.set_name("s");
  sp.set_elem_type(onnx::SequenceProto::TENSOR);
  std::vector<Tensor> items = {filled(DataType::kFloat, {2}, 9), filled(DataType::kFloat, {3}, 10)};
  for (const Tensor& t : items) tensor_to_proto(t, *sp.add_tensor_values());
  EXPECT_EQ(serialize_value(RtValue::of_sequence(items), "s"), sp.SerializeAsString());
  const RtValue seq = parse_value(sp.SerializeAsString(), TypeInfo::Kind::kSequence, "s");
  ASSERT_TRUE(seq.is_sequence());
  ASSERT_EQ(seq.sequence.size(), 2u);
  expect_same(seq.sequence[1], items[1]);
  onnx::OptionalProto op;
  op.set_name("o");
  op.set_elem_type(onnx::OptionalProto::UNDEFINED);
  EXPECT_EQ(serialize_value(RtValue{}, "o"), op.SerializeAsString());
  op.set_elem_type(onnx::OptionalProto::TENSOR);
  tensor_to_proto(items[0], *op.mutable_tensor_value());
  expect_same(parse_value(op.SerializeAsString(), TypeInfo::Kind::kOptional, "o").tensor, items[0]);
}

// Typed data fields, packed (as protobuf writes onnx.proto's) and not, as src/onnx reads them.
TEST(TensorFile, ReadsTheTypedFieldsAsTheProtobufReaderDoes) {
  onnx::TensorProto f;
  f.set_data_type(onnx::TensorProto::FLOAT);
  f.add_dims(3);
  for (float v : {1.5f, -2.f, 3.25f}) f.add_float_data(v);
  onnx::TensorProto i32;
  i32.set_data_type(onnx::TensorProto::INT8);
  i32.add_dims(3);
  for (int v : {-1, 2, -128}) i32.add_int32_data(v);
  onnx::TensorProto i64;
  i64.set_data_type(onnx::TensorProto::INT64);
  for (int64_t v : {int64_t{-5}, int64_t{1} << 40}) i64.add_int64_data(v);
  i64.add_dims(2);
  onnx::TensorProto d;
  d.set_data_type(onnx::TensorProto::COMPLEX128);
  d.add_dims(1);
  d.add_double_data(0.5);
  d.add_double_data(-0.25);
  onnx::TensorProto u;
  u.set_data_type(onnx::TensorProto::UINT32);
  u.add_dims(2);
  u.add_uint64_data(7);
  u.add_uint64_data(4000000000u);
  onnx::TensorProto s;
  s.set_data_type(onnx::TensorProto::STRING);
  s.add_string_data("ab");
  s.add_string_data("");
  s.add_dims(2);
  for (onnx::TensorProto* p : {&f, &i32, &i64, &d, &u, &s}) {
    const std::string bytes = p->SerializeAsString();
    onnx::TensorProto copy = *p;
    expect_same(parse_value(bytes, TypeInfo::Kind::kTensor, "t").tensor, tensor_from_proto(copy, nullptr, "t"));
  }
  // Unpacked repeated numbers (protobuf accepts both forms): dims 2 written as two tags.
  const std::string unpacked = std::string("\x08\x02\x10\x07", 4) + "\x38\x09" + "\x38\x0a";
  const Tensor t = parse_value(unpacked, TypeInfo::Kind::kTensor, "t").tensor;
  ASSERT_EQ(t.dims(), std::vector<int64_t>{2});
  EXPECT_EQ(t.data<int64_t>()[1], 10);
}

// The same errors for what the data does not fit, and external data refused in a test data file.
TEST(TensorFile, RefusesWhatTheProtobufReaderRefuses) {
  onnx::TensorProto short_data;
  short_data.set_data_type(onnx::TensorProto::FLOAT);
  short_data.add_dims(4);
  short_data.set_raw_data(std::string(12, '\0'));
  onnx::TensorProto external;
  external.set_data_type(onnx::TensorProto::FLOAT);
  external.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = external.add_external_data();
  kv->set_key("location");
  kv->set_value("w.bin");
  onnx::TensorProto segmented;
  segmented.set_data_type(onnx::TensorProto::FLOAT);
  segmented.mutable_segment()->set_begin(0);
  for (onnx::TensorProto* p : {&short_data, &external, &segmented}) {
    std::string ours, theirs;
    ErrorKind our_kind{}, their_kind{};
    try {
      parse_value(p->SerializeAsString(), TypeInfo::Kind::kTensor, "t");
    } catch (const Error& e) {
      ours = e.what();
      our_kind = e.kind();
    }
    try {
      onnx::TensorProto copy = *p;
      with_context("t: ", [&] { return tensor_from_proto(copy, nullptr, "tensor"); });
    } catch (const Error& e) {
      theirs = e.what();
      their_kind = e.kind();
    }
    EXPECT_FALSE(ours.empty());
    EXPECT_EQ(ours, theirs);
    EXPECT_EQ(our_kind, their_kind);
  }
}

// Every prefix and 3000 random byte edits of a message: kiln's reader calls it a message exactly
// when protobuf's parser does.
std::string hex(const std::string& b) {
  std::string out;
  for (unsigned char c : b) out += fmt::format("{:02x}", c);
  return out;
}

TEST(TensorFile, DamagedBytesAreJudgedAsProtobufJudgesThem) {
  onnx::TensorProto p;
  tensor_to_proto(filled(DataType::kFloat, {2, 2}, 11), p);
  p.set_name("input");
  p.add_external_data()->set_key("k");
  p.set_doc_string("doc");
  const std::string good = p.SerializeAsString();
  auto valid_for_protobuf = [](const std::string& b) {
    onnx::TensorProto q;
    return q.ParseFromString(b);
  };
  auto valid_for_kiln = [](const std::string& b) {
    try {
      parse_value(b, TypeInfo::Kind::kTensor, "t");
    } catch (const Error& e) {
      return std::string(e.what()).find("is not a valid serialized") == std::string::npos;
    }
    return true;
  };
  for (size_t n = 0; n <= good.size(); ++n) {
    const std::string prefix = good.substr(0, n);
    EXPECT_EQ(valid_for_kiln(prefix), valid_for_protobuf(prefix)) << "prefix of " << n << " bytes";
  }
  std::mt19937 rng(12);
  for (int i = 0; i < 3000; ++i) {
    std::string b = good;
    for (int k = 0, edits = 1 + static_cast<int>(rng() % 3); k < edits; ++k)
      b[rng() % b.size()] = static_cast<char>(rng());
    EXPECT_EQ(valid_for_kiln(b), valid_for_protobuf(b)) << "edit " << i << ": " << hex(b);
  }
}

}  // namespace
}  // namespace kiln
