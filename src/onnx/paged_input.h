// A mapped model file as protobuf's input stream, giving its pages back as the parser moves on.
#pragma once

#include <google/protobuf/io/zero_copy_stream.h>

#include <cstdint>

#include "support/mapped_file.h"

namespace kiln {

// Hands the parser the file in chunks; when it asks for the next one, the pages it has read past
// are dropped from this process (MappedFile::release). The parsed message holds its own copy of
// every byte (raw_data included), so the file's pages and that copy are not resident together:
// parsing a model of W bytes of embedded weights peaks near W instead of 2 W.
class PagedInput : public google::protobuf::io::ZeroCopyInputStream {
 public:
  explicit PagedInput(const MappedFile& file) : file_(file) {}

  bool Next(const void** data, int* size) override;
  void BackUp(int count) override { pos_ -= count; }
  bool Skip(int count) override;
  int64_t ByteCount() const override { return pos_; }

 private:
  static constexpr int64_t kChunk = int64_t{4} << 20;
  const MappedFile& file_;
  int64_t pos_ = 0;       // the next byte Next hands out
  int64_t released_ = 0;  // bytes before this were given back
};

}  // namespace kiln
