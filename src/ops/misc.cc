// Op family: misc (see docs/ops.md for the contract every op follows).
//   misc_string.cc    StringConcat, StringSplit, StringNormalizer, RegexFullMatch
//   misc_signal.cc    Hann/Hamming/BlackmanWindow, DFT, STFT, MelWeightMatrix
//   misc_random.cc    RandomNormal/Uniform(Like), Bernoulli, Multinomial
//   misc_text.cc      TfIdfVectorizer, ImageDecoder
//   misc_training.cc  ai.onnx.preview.training: Adagrad, Adam, Momentum
//   misc_ml.cc        ai.onnx.ml: ArrayFeatureExtractor, Binarizer, LabelEncoder, TreeEnsemble
#include "ops/kernel_util.h"
#include "ops/op.h"

namespace kiln {

void register_misc_string_ops(OpRegistry& r);
void register_misc_signal_ops(OpRegistry& r);
void register_misc_random_ops(OpRegistry& r);
void register_misc_text_ops(OpRegistry& r);
void register_misc_training_ops(OpRegistry& r);
void register_misc_ml_ops(OpRegistry& r);

void register_misc_ops(OpRegistry& r) {
  register_misc_string_ops(r);
  register_misc_signal_ops(r);
  register_misc_random_ops(r);
  register_misc_text_ops(r);
  register_misc_training_ops(r);
  register_misc_ml_ops(r);
}

}  // namespace kiln
