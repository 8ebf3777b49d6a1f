// Little-endian byte streams for the artifact format: a writer that appends, and a reader over
// untrusted bytes that checks every read against the end (kBadModel, naming the section and offset).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.h"

namespace kiln::artifact {

class ByteWriter {
 public:
  void u8(uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) { put(&v, sizeof v); }
  void i32(int32_t v) { put(&v, sizeof v); }
  void u64(uint64_t v) { put(&v, sizeof v); }
  void i64(int64_t v) { put(&v, sizeof v); }
  void f32(float v) { put(&v, sizeof v); }
  void str(std::string_view s) {
    u64(s.size());
    bytes_.append(s);
  }
  void raw(const void* p, size_t n) { put(p, n); }
  // Zero bytes up to the next multiple of `alignment` (a power of two).
  void pad_to(size_t alignment) {
    while (bytes_.size() % alignment) bytes_.push_back('\0');
  }
  size_t size() const { return bytes_.size(); }
  std::string& bytes() { return bytes_; }

 private:
  void put(const void* p, size_t n) { bytes_.append(static_cast<const char*>(p), n); }
  std::string bytes_;
};

class ByteReader {
 public:
  // `what` names the bytes in errors ("graph section").
  ByteReader(std::span<const uint8_t> bytes, std::string what) : bytes_(bytes), what_(std::move(what)) {}

  uint8_t u8() { return get<uint8_t>(); }
  uint32_t u32() { return get<uint32_t>(); }
  int32_t i32() { return get<int32_t>(); }
  uint64_t u64() { return get<uint64_t>(); }
  int64_t i64() { return get<int64_t>(); }
  float f32() { return get<float>(); }
  std::string str() {
    const uint64_t n = u64();
    need(n, "a string");
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  // A count of items that each take at least `min_item_bytes`: more than the bytes left could hold
  // is refused before anything is allocated for them.
  uint64_t count(size_t min_item_bytes, std::string_view of) {
    const uint64_t n = u64();
    const uint64_t left = bytes_.size() - pos_;
    KILN_CHECK(min_item_bytes == 0 || n <= left / min_item_bytes, ErrorKind::kBadModel,
               "{}: offset {}: {} {} cannot fit in the {} bytes left", what_, pos_, n, of, left);
    return n;
  }
  std::span<const uint8_t> take(uint64_t n, std::string_view of) {
    need(n, of);
    auto s = bytes_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  size_t pos() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }
  bool at_end() const { return pos_ == bytes_.size(); }
  const std::string& what() const { return what_; }
  [[noreturn]] void bad(std::string_view msg) const {
    fail(ErrorKind::kBadModel, "{}: offset {}: {}", what_, pos_, msg);
  }

 private:
  void need(uint64_t n, std::string_view of) const {
    KILN_CHECK(n <= bytes_.size() - pos_, ErrorKind::kBadModel,
               "{}: offset {}: {} of {} bytes runs past the end ({} bytes left)", what_, pos_, of, n,
               bytes_.size() - pos_);
  }
  template <typename T>
  T get() {
    need(sizeof(T), "a field");
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
  std::string what_;
};

}  // namespace kiln::artifact
