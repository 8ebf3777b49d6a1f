// Every pass kiln has, by name. A new pass: one file here and one line in pipeline.cc's table.
#pragma once

#include <memory>

#include "opt/pass.h"

namespace kiln::opt {

std::unique_ptr<Pass> make_fold_constants();     // pass_fold.cc
std::unique_ptr<Pass> make_simplify_shapes();    // pass_fold.cc
std::unique_ptr<Pass> make_dce();                // pass_cleanup.cc
std::unique_ptr<Pass> make_dedupe_initializers();// pass_cleanup.cc
std::unique_ptr<Pass> make_cse();                // pass_cleanup.cc
std::unique_ptr<Pass> make_eliminate_noops();    // pass_noop.cc
std::unique_ptr<Pass> make_merge_chains();       // pass_chains.cc
std::unique_ptr<Pass> make_fuse_conv_bn();       // pass_fuse_linear.cc
std::unique_ptr<Pass> make_fuse_linear_affine(); // pass_fuse_linear.cc: Mul/Add into Conv/Gemm/MatMul
std::unique_ptr<Pass> make_fuse_pad();           // pass_fuse_linear.cc
std::unique_ptr<Pass> make_fuse_gemm();          // pass_fuse_linear.cc: MatMul+Add, Transpose into Gemm
std::unique_ptr<Pass> make_fuse_layernorm();     // pass_fuse_transformer.cc
std::unique_ptr<Pass> make_fuse_gelu();          // pass_fuse_transformer.cc
std::unique_ptr<Pass> make_fuse_rmsnorm();       // pass_fuse_transformer.cc
std::unique_ptr<Pass> make_fuse_attention();     // pass_fuse_attention.cc
std::unique_ptr<Pass> make_raise_opset();        // pass_opset.cc

// Why a node decoding constant weights (DequantizeLinear; Cast of bf16/fp16 to float32) is kept
// unevaluated: the optimizer's inference does not compute it (its output is no constant to any
// pass, so nothing folds the weights back to float32, and the weights are not decoded again
// before every pass); empty for any other node. pass_fold.cc.
std::string kept_weight_decoding(const Node& n);

}  // namespace kiln::opt
