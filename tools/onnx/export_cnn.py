"""Exports a small CNN (conv-BN-ReLU-pool twice, then a linear layer) from Debian's PyTorch 1.13
with torch.onnx.export, opset 13, a dynamic batch; writes OUT/cnn.onnx and OUT/x.npy (a batch of
inputs). Weights and inputs come from fixed seeds, so every run writes the same files.
usage: /usr/bin/python3 tools/onnx/export_cnn.py OUT_DIR [BATCH]"""
import os
import sys

import numpy as np
import torch
from torch import nn

out, batch = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 32
torch.manual_seed(0)
net = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(32 * 8 * 8, 10), nn.LogSoftmax(dim=1))
for m in net:  # non-trivial running statistics, so BatchNormalization does something
    if isinstance(m, nn.BatchNorm2d):
        m.running_mean.uniform_(-0.5, 0.5)
        m.running_var.uniform_(0.5, 1.5)
net.eval()
x = torch.from_numpy(np.random.default_rng(0).standard_normal((batch, 3, 32, 32)).astype(np.float32))
os.makedirs(out, exist_ok=True)
torch.onnx.export(net, x, os.path.join(out, "cnn.onnx"), opset_version=13, input_names=["x"], output_names=["y"],
                  dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
np.save(os.path.join(out, "x.npy"), x.numpy())
