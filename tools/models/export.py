#!/usr/bin/python3
"""Exports kiln's test models to ONNX (opset 17, random weights, seed 0).

Usage: /usr/bin/python3 tools/models/export.py --out DIR [names...]

With no names, exports every model. A model whose DIR/NAME.onnx already exists is skipped.
Every model has a dynamic batch axis named "batch"; the sequence models also have "seq".
Weights are random (torch.manual_seed(0)); torchvision weights are never downloaded.
Needs Debian's python3-torch and python3-torchvision (scripts/get-models.sh installs them).
"""
import argparse
import math
import os
import sys
import tempfile
import time

import torch
from torch import nn

OPSET = 17


# ---------------------------------------------------------------------------------------------
# A BERT-style encoder, written out so the export is plain ONNX ops (Erf GELU, LayerNormalization,
# MatMul attention with a mask).


class BertConfig:
    def __init__(self, vocab, hidden, layers, heads, intermediate, max_positions=512, type_vocab=2):
        self.vocab, self.hidden, self.layers, self.heads = vocab, hidden, layers, heads
        self.intermediate, self.max_positions, self.type_vocab = intermediate, max_positions, type_vocab


class BertSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads, self.head_dim = c.heads, c.hidden // c.heads
        self.query = nn.Linear(c.hidden, c.hidden)
        self.key = nn.Linear(c.hidden, c.hidden)
        self.value = nn.Linear(c.hidden, c.hidden)
        self.out = nn.Linear(c.hidden, c.hidden)

    def split(self, x):  # [b, s, h*d] -> [b, h, s, d]
        b, s = x.size(0), x.size(1)
        return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, mask_bias):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = torch.softmax(scores + mask_bias, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3)
        ctx = ctx.reshape(x.size(0), x.size(1), self.heads * self.head_dim)
        return self.out(ctx)


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BertSelfAttention(c)
        self.attention_norm = nn.LayerNorm(c.hidden, eps=1e-12)
        self.intermediate = nn.Linear(c.hidden, c.intermediate)
        self.gelu = nn.GELU()  # exact (erf) form
        self.output = nn.Linear(c.intermediate, c.hidden)
        self.output_norm = nn.LayerNorm(c.hidden, eps=1e-12)

    def forward(self, x, mask_bias):
        x = self.attention_norm(x + self.attention(x, mask_bias))
        return self.output_norm(x + self.output(self.gelu(self.intermediate(x))))


class Bert(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab, c.hidden)
        self.position_embeddings = nn.Embedding(c.max_positions, c.hidden)
        self.token_type_embeddings = nn.Embedding(c.type_vocab, c.hidden)
        self.embedding_norm = nn.LayerNorm(c.hidden, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer(c) for _ in range(c.layers)])
        self.pooler = nn.Linear(c.hidden, c.hidden)

    def forward(self, input_ids, attention_mask, token_type_ids):
        positions = torch.arange(input_ids.size(1), dtype=torch.int64).unsqueeze(0)
        x = (self.word_embeddings(input_ids) + self.position_embeddings(positions)
             + self.token_type_embeddings(token_type_ids))
        x = self.embedding_norm(x)
        # [b, s] -> [b, 1, 1, s]: 0 where attended, -10000 where masked
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_bias)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return x, pooled


def bert_spec(config):
    def build():
        return Bert(config)

    seq = 8  # tracing length; the exported graph has a symbolic "seq"
    ids = torch.randint(0, 1000, (1, seq), dtype=torch.int64)
    return dict(build=build,
                args=(ids, torch.ones(1, seq, dtype=torch.int64), torch.zeros(1, seq, dtype=torch.int64)),
                inputs=["input_ids", "attention_mask", "token_type_ids"],
                outputs=["last_hidden_state", "pooler_output"],
                dynamic={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                         "token_type_ids": {0: "batch", 1: "seq"},
                         "last_hidden_state": {0: "batch", 1: "seq"}, "pooler_output": {0: "batch"}})


# ---------------------------------------------------------------------------------------------
# Recurrent models, the MLP and a model with control flow.


class RecurrentModel(nn.Module):
    def __init__(self, cell, features=64, hidden=128, classes=10):
        super().__init__()
        self.rnn = cell(features, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):  # [batch, seq, features] -> [batch, seq, classes]
        y, _ = self.rnn(x)
        return self.head(y)


def recurrent_spec(cell):
    return dict(build=lambda: RecurrentModel(cell), args=(torch.randn(1, 5, 64),),
                inputs=["input"], outputs=["output"],
                dynamic={"input": {0: "batch", 1: "seq"}, "output": {0: "batch", 1: "seq"}})


class ControlFlow(nn.Module):
    """An `if` on the input's sum and a `for` loop; exported from TorchScript as If and Loop nodes."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(16, 16)

    def forward(self, x):
        if bool(x.sum() > 0):
            h = torch.relu(self.linear(x))
        else:
            h = -x * 2.0
        for _ in range(x.size(1) // 4):
            h = h * 0.5 + torch.tanh(h)
        return h


class SpeechModel(nn.Module):
    """A speech-recognizer-style stack: 80 mel features -> LSTM -> GRU -> 32 token scores per frame."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(80, 256, batch_first=True)
        self.gru = nn.GRU(256, 256, batch_first=True)
        self.head = nn.Linear(256, 32)

    def forward(self, x):  # [batch, seq, 80] -> [batch, seq, 32]
        h, _ = self.lstm(x)
        h, _ = self.gru(h)
        return self.head(h)


class SmallUNet(nn.Module):
    """A 3-level UNet: strided convs down, ConvTranspose up, skips joined by Concat."""

    def __init__(self, c=16):
        super().__init__()

        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU())

        self.enc1, self.enc2, self.enc3 = block(3, c), block(c, 2 * c), block(2 * c, 4 * c)
        self.down1, self.down2 = nn.Conv2d(c, c, 2, stride=2), nn.Conv2d(2 * c, 2 * c, 2, stride=2)
        self.up2, self.up1 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2), nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.dec2, self.dec1 = block(4 * c, 2 * c), block(2 * c, c)
        self.out = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.down1(e1))
        e3 = self.enc3(self.down2(e2))
        d2 = self.dec2(torch.cat([self.up2(e3), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        return self.out(d1)


def torchvision_spec(name, size=224, train_mode=False, **kwargs):
    def build():
        import torchvision
        model = getattr(torchvision.models, name)(weights=None, **kwargs)
        # Some initializers zero a layer (ViT's classifier head), which would make every output 0.
        with torch.no_grad():
            for pname, p in model.named_parameters():
                if p.dim() >= 2 and not p.any():
                    nn.init.normal_(p, std=0.02)
        # Fresh BatchNorm statistics (mean 0, variance 1) let activations shrink layer by layer
        # (efficientnet_b0's logits come out near 1e-14); set them from one random batch instead,
        # so the outputs are of order 1 and comparisons against a reference mean something.
        norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
        if norms:
            for m in norms:
                m.reset_running_stats()
                m.momentum = None  # cumulative average: exactly this batch's statistics
            model.train()
            with torch.no_grad():
                model(torch.randn(4, 3, size, size))
        return model

    return dict(build=build, args=(torch.randn(1, 3, size, size),), inputs=["input"], outputs=["output"],
                dynamic={"input": {0: "batch"}, "output": {0: "batch"}}, train_mode=train_mode)


MODELS = {
    "resnet50": lambda: torchvision_spec("resnet50"),
    "mobilenet_v2": lambda: torchvision_spec("mobilenet_v2"),
    "efficientnet_b0": lambda: torchvision_spec("efficientnet_b0"),
    "vit_b_16": lambda: torchvision_spec("vit_b_16"),
    # Classifiers of other shapes (issue 5's "models users bring"): dense blocks of concats, fire
    # modules, channel shuffles, hard-swish and SE blocks, depthwise 7x7 with LayerNorm, grouped convs.
    "densenet121": lambda: torchvision_spec("densenet121"),
    "squeezenet1_1": lambda: torchvision_spec("squeezenet1_1"),
    "shufflenet_v2_x1_0": lambda: torchvision_spec("shufflenet_v2_x1_0"),
    "mobilenet_v3_large": lambda: torchvision_spec("mobilenet_v3_large"),
    "convnext_tiny": lambda: torchvision_spec("convnext_tiny"),
    "regnet_y_400mf": lambda: torchvision_spec("regnet_y_400mf"),
    # Issue 19's models where kiln was slower than ONNX Runtime: 1x7 / 7x1 convs and Pads; a ViT
    # exported in train mode (its Dropouts of ratio 0 stay, training_mode on); LSTM + GRU; a UNet.
    "inception_v3": lambda: torchvision_spec("inception_v3", size=299, aux_logits=False, init_weights=True),
    "vit_b_16_train": lambda: torchvision_spec("vit_b_16", train_mode=True),
    "speech_lstm_gru": lambda: dict(build=SpeechModel, args=(torch.randn(1, 50, 80),), inputs=["input"],
                                    outputs=["output"],
                                    dynamic={"input": {0: "batch", 1: "seq"}, "output": {0: "batch", 1: "seq"}}),
    "unet_small": lambda: dict(build=SmallUNet, args=(torch.randn(1, 3, 128, 128),), inputs=["input"],
                               outputs=["output"], dynamic={"input": {0: "batch"}, "output": {0: "batch"}}),
    # BERT-base shape: 12 layers, hidden 768, 12 heads, FFN 3072, the usual 30522-token vocabulary.
    "bert_base": lambda: bert_spec(BertConfig(vocab=30522, hidden=768, layers=12, heads=12, intermediate=3072)),
    # Same graph structure, small: 2 layers, hidden 128, 2 heads, FFN 512, 1024 tokens.
    "bert_tiny": lambda: bert_spec(BertConfig(vocab=1024, hidden=128, layers=2, heads=2, intermediate=512)),
    "lstm": lambda: recurrent_spec(nn.LSTM),
    "gru": lambda: recurrent_spec(nn.GRU),
    "mlp": lambda: dict(build=lambda: nn.Sequential(nn.Linear(768, 256), nn.ReLU(), nn.Linear(256, 10)),
                        args=(torch.randn(1, 768),), inputs=["input"], outputs=["output"],
                        dynamic={"input": {0: "batch"}, "output": {0: "batch"}}),
    "control_flow": lambda: dict(build=lambda: torch.jit.script(ControlFlow()), args=(torch.randn(1, 16),),
                                 inputs=["input"], outputs=["output"],
                                 dynamic={"input": {0: "batch"}, "output": {0: "batch"}},
                                 require_ops={"If", "Loop"}),
}


def export(name, out_dir):
    path = os.path.join(out_dir, name + ".onnx")
    if os.path.exists(path):
        print(f"{name}: {path} exists, skipped", flush=True)
        return
    start = time.time()
    torch.manual_seed(0)
    spec = MODELS[name]()
    model = spec["build"]()
    model.eval()
    # A train-mode export keeps Dropout (training_mode on) and BatchNorm in training form, as
    # scripts that forget model.eval() get; the weights and statistics are the same.
    mode = torch.onnx.TrainingMode.TRAINING if spec.get("train_mode") else torch.onnx.TrainingMode.EVAL
    # Write beside the target, then rename: an interrupted export never leaves a half file behind.
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".onnx.tmp", dir=out_dir)
    os.close(fd)
    try:
        # Not under torch.no_grad(): with grad enabled nn.MultiheadAttention (ViT) takes its plain path
        # instead of the fused aten::_native_multi_head_attention, which has no ONNX export.
        torch.onnx.export(model, spec["args"], tmp, opset_version=OPSET, do_constant_folding=True,
                          input_names=spec["inputs"], output_names=spec["outputs"],
                          dynamic_axes=spec["dynamic"], training=mode)
        check(tmp, spec.get("require_ops", set()))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    size = os.path.getsize(path) / 1e6
    print(f"{name}: wrote {path} ({size:.1f} MB) in {time.time() - start:.1f}s", flush=True)


def check(path, require_ops):
    import onnx
    onnx.checker.check_model(path)
    if require_ops:
        model = onnx.load(path)
        ops = set()
        todo = [model.graph]
        while todo:
            g = todo.pop()
            for n in g.node:
                ops.add(n.op_type)
                todo.extend(a.g for a in n.attribute if a.HasField("g"))
        missing = require_ops - ops
        if missing:
            raise RuntimeError(f"exported graph lacks {sorted(missing)} nodes")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="output folder (created if missing); required unless --list")
    ap.add_argument("names", nargs="*", help=f"models to export (default all): {', '.join(MODELS)}")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    args = ap.parse_args()
    if args.list:
        print("\n".join(MODELS))
        return 0
    if not args.out:
        ap.error("--out is required")
    unknown = [n for n in args.names if n not in MODELS]
    if unknown:
        ap.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    failed = []
    for name in args.names or list(MODELS):
        try:
            export(name, args.out)
        except Exception as e:  # keep going; report at the end
            print(f"{name}: FAILED: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            failed.append(name)
    if failed:
        print(f"export failed for: {' '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
