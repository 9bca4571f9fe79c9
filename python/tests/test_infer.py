"""maroon.infer: one digest for a model's outputs from Python, the C ABI (examples/infer.c) and
the `maroon infer` command; every input form of the same images gives it; the digest is the
spec's serialisation (rebuilt here with struct and hashlib); bad input raises, naming the file."""
import hashlib
import os
import pathlib
import struct
import subprocess

import numpy as np
import pytest

import maroon
from maroon import Tensor, nn
from maroon.nn.state import get_state_dict, safe_save

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = ROOT / os.environ.get("MAROON_BUILD_DIR", "build")


class MLP:
    """The MNIST MLP written in Python; its state names (l1.weight ...) are the C++ model's."""

    def __init__(self):
        Tensor.manual_seed(5)
        self.l1, self.l2, self.l3 = nn.Linear(784, 512), nn.Linear(512, 512), nn.Linear(512, 10)

    def __call__(self, x):
        return self.l3(self.l2(self.l1(x.flatten(1)).relu()).relu())


def pixels(n, seed=2):
    return np.random.default_rng(seed).integers(0, 256, size=(n, 28, 28), dtype=np.uint8)


def idx_bytes(px):
    return bytes([0, 0, 8, 3]) + struct.pack(">III", *px.shape) + px.tobytes()


def spec_digest(outputs):
    """docs/spec-model.md: tag, u64 count, then per tensor u64 len(dtype), dtype, u64 rank, u64
    dims, u64 byte count, the little-endian bytes."""
    h = hashlib.sha256(b"maroon-inference/1\0" + struct.pack("<Q", len(outputs)))
    for a in outputs:
        name = {np.dtype("float32"): b"float32", np.dtype("uint8"): b"uint8"}[a.dtype]
        data = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()
        h.update(struct.pack("<Q", len(name)) + name + struct.pack("<Q", a.ndim))
        h.update(struct.pack(f"<{a.ndim}Q", *a.shape) + struct.pack("<Q", len(data)) + data)
    return h.hexdigest()


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "mlp.safetensors"
    net = MLP()
    safe_save(get_state_dict(net), str(path))
    return net, path


def test_the_digest_is_the_specs_serialisation_of_the_python_models_outputs(model):
    net, path = model
    px = pixels(6)
    r = maroon.infer(path, px)
    # The same model run by hand with the Tensor API, on the spec's conversion x.float() / 255.
    logits = net(Tensor(px).float().div(255).reshape(6, 1, 28, 28)).numpy()
    assert r.digest == spec_digest([logits]) == maroon.inference_digest([Tensor(logits)])
    assert r.classes == list(np.argmax(logits, axis=1))
    assert np.array_equal(r.outputs[0].numpy().view(np.uint32), logits.view(np.uint32))


def test_every_input_form_gives_one_digest(model, tmp_path):
    _, path = model
    px = pixels(4)
    (tmp_path / "x-ubyte").write_bytes(idx_bytes(px))
    (tmp_path / "x.raw").write_bytes(px.tobytes())
    np.save(tmp_path / "x.npy", px)
    # float32 input is used as given: here the spec's conversion RNE(p * RNE(1/255)) by numpy.
    np.save(tmp_path / "f.npy", px.reshape(4, 784).astype(np.float32) * np.float32(1 / 255))
    want = maroon.infer(path, px).digest
    for name in ("x-ubyte", "x.raw", "x.npy", "f.npy"):
        assert maroon.infer(path, tmp_path / name).digest == want, name
    assert maroon.infer(path, str(tmp_path / "x.raw"), format="raw").digest == want
    assert maroon.infer(path, px.tobytes()).digest == want
    assert maroon.infer(maroon.load_model(path), px[1:3]).digest == maroon.infer(path, px, start=1, count=2).digest
    # An array is read as the file numpy.save writes for it: the same JSON document.
    assert maroon.infer(path, px).json == maroon.infer(path, tmp_path / "x.npy").json


def test_cli_c_and_python_print_the_same_document(model, tmp_path):
    _, path = model
    inp = tmp_path / "x.npy"
    np.save(inp, pixels(5, seed=7))
    want = maroon.infer(path, inp).json
    c = subprocess.run([BUILD / "maroon-infer-c", path, inp, "--json"], capture_output=True, text=True, check=True)
    assert c.stdout == want
    cli = subprocess.run([BUILD / "maroon", "infer", path, "--input", inp, "--json"], capture_output=True, text=True,
                         check=True)
    assert cli.stdout == want


def test_bad_input_raises_naming_the_problem(model, tmp_path):
    _, path = model
    with pytest.raises(ValueError, match="cannot tell the format"):
        maroon.infer(path, tmp_path / "x.png")
    with pytest.raises(ValueError, match="missing.raw"):
        maroon.infer(path, tmp_path / "missing.raw")
    with pytest.raises(TypeError, match="int32"):
        maroon.infer(path, np.zeros((1, 784), np.int32))
    with pytest.raises(ValueError, match=r"\(2,27,28\)"):
        maroon.infer(path, np.zeros((2, 27, 28), np.uint8))
    with pytest.raises(ValueError, match="out of range"):
        maroon.infer(path, pixels(2), start=1, count=5)
    with pytest.raises(TypeError, match="input must be"):
        maroon.infer(path, [1, 2, 3])
    (tmp_path / "bad.safetensors").write_bytes(b"not a weights file")
    with pytest.raises(ValueError, match="bad.safetensors"):
        maroon.infer(tmp_path / "bad.safetensors", pixels(1))
