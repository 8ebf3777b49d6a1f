// kiln's own serialization of its IR (the artifact's graph section): the model, its graphs and
// subgraphs, nodes, every attribute kind, values with their inferred types (symbolic dims
// included), and tensors whose bytes sit in the weights section (64-byte aligned, viewed in place
// at load). The reader treats the bytes as untrusted: every count, id, offset and length is checked.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "ir/graph.h"

namespace kiln::artifact {

struct EncodedModel {
  std::string graph;    // the graph section
  std::string weights;  // the weights section
  // Where each tensor buffer went in the weights section (by its data pointer).
  std::map<const void*, uint64_t> weight_offsets;
};
EncodedModel encode_model(const Model& m);

struct DecodedModel {
  Model model;
  // The tensors viewing the weights section, by offset (the packed index refers to them so).
  std::map<uint64_t, Tensor> weights_by_offset;
};
// `owner` keeps `weights` alive for the tensors that view it. Fails with kBadModel naming what is
// wrong and where (the byte offset in the graph section).
DecodedModel decode_model(std::span<const uint8_t> graph, std::span<const uint8_t> weights,
                          std::shared_ptr<void> owner);

}  // namespace kiln::artifact
