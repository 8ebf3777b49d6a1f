#!/usr/bin/python3
"""Exports a small CNN from torch for kiln's profiler tests: OUT.onnx, input float[batch,3,64,64].

Usage: /usr/bin/python3 tests/report/export_small_cnn.py OUT.onnx

Conv-BN-ReLU-MaxPool, two more conv blocks, a residual Add, global average pool and a Linear head:
enough different ops that each takes a measurable time in kiln's reference runtime.
"""
import sys

import torch
from torch import nn


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                                  nn.MaxPool2d(2))
        self.block = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                                   nn.Conv2d(16, 16, 3, padding=1), nn.BatchNorm2d(16))
        self.down = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU())
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(x + self.block(x))
        x = self.down(x)
        x = torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1)
        return torch.softmax(self.head(x), dim=-1)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    torch.manual_seed(0)
    model = SmallCnn().eval()
    torch.onnx.export(model, (torch.randn(1, 3, 64, 64),), sys.argv[1], opset_version=17,
                      input_names=["input"], output_names=["probs"],
                      dynamic_axes={"input": {0: "batch"}, "probs": {0: "batch"}},
                      do_constant_folding=True)


if __name__ == "__main__":
    main()
