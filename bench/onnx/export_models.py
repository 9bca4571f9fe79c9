"""Exports the models of the ONNX speed benchmark from Debian's PyTorch 1.13
(torch.onnx.export, opset 13, a dynamic batch), with weights and inputs from fixed seeds so every
run writes the same files:
  cnn.onnx          two conv-BN-ReLU-maxpool blocks, a linear layer, LogSoftmax (3x32x32 in)
  resnet.onnx       a ResNet-style network: a conv-BN-ReLU stem, four residual blocks (two with a
                    stride-2 1x1 projection), global average pooling, a linear layer (3x32x32 in)
  transformer.onnx  a transformer encoder: two nn.TransformerEncoderLayer (d_model 64, 4 heads,
                    feed-forward 256, GELU, batch_first), a linear head (sequence 64 of 64 features)
  mobilenet.onnx    a MobileNetV2-style network: a conv stem, five inverted residual blocks
                    (depthwise 3x3 convs, two of stride 2, ReLU6), global average pooling, a
                    linear layer (3x32x32 in)
and NAME.npy, a batch of inputs for each.
usage: /usr/bin/python3 bench/onnx/export_models.py OUT_DIR [BATCH] [MODEL...]"""
import os
import sys

import numpy as np
import torch
from torch import nn


def randomize_bn(net):
    """Non-trivial running statistics, so BatchNormalization does something."""
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.2, 0.2)


def cnn():
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 8 * 8, 10), nn.LogSoftmax(dim=1))


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)
        self.c2, self.b2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout)
        self.proj = None
        if stride != 1 or cin != cout:
            self.proj = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.b2(self.c2(torch.relu(self.b1(self.c1(x)))))
        return torch.relu(y + (x if self.proj is None else self.proj(x)))


def resnet():
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
        Block(16, 16, 1), Block(16, 32, 2), Block(32, 32, 1), Block(32, 64, 2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(64, 4, 256, dropout=0.0, activation="gelu", batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.enc(x))


class InvertedResidual(nn.Module):
    """MobileNetV2's block: a 1x1 expansion, a 3x3 depthwise conv (groups = channels), a 1x1
    projection, each with batchnorm (folded into the conv by the export), ReLU6 between them."""

    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = []
        if expand != 1:
            layers += [nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6()]
        layers += [nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False), nn.BatchNorm2d(hidden),
                   nn.ReLU6(), nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.conv = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.conv(x) if self.residual else self.conv(x)


def mobilenet():
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU6(),
        InvertedResidual(16, 16, 1, 1), InvertedResidual(16, 24, 2, 4), InvertedResidual(24, 24, 1, 4),
        InvertedResidual(24, 32, 2, 4), InvertedResidual(32, 32, 1, 4),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))


MODELS = {  # name -> (constructor, input shape without the batch)
    "cnn": (cnn, (3, 32, 32)),
    "resnet": (resnet, (3, 32, 32)),
    "transformer": (Encoder, (64, 64)),
    "mobilenet": (mobilenet, (3, 32, 32)),
}


def export(name, out, batch):
    make, shape = MODELS[name]
    torch.manual_seed(0)
    net = make()
    randomize_bn(net)
    net.eval()
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((batch,) + shape).astype(np.float32))
    # Gradients on keep PyTorch's fused inference path (_transformer_encoder_layer_fwd, which ONNX
    # cannot express) out of the trace: the export then writes the layer's plain operators.
    with torch.enable_grad():
        torch.onnx.export(net, x, os.path.join(out, name + ".onnx"), opset_version=13, input_names=["x"],
                          output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    np.save(os.path.join(out, name + ".npy"), x.numpy())


if __name__ == "__main__":
    out, batch = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 32
    os.makedirs(out, exist_ok=True)
    for name in sys.argv[3:] or MODELS:
        export(name, out, batch)
