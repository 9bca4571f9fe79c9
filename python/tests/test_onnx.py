"""maroon.onnx: a model built with python3-onnx runs with the bits of the same Tensor API calls,
binds a dynamic batch, takes lists, dicts, arrays or Tensors, and refuses bad models and inputs
with errors naming the node or input."""
import numpy as np
import pytest

import maroon
from maroon import Tensor

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

W = np.array([[1.5, -2.0], [0.25, 3.0], [1.0, -1.0]], dtype=np.float32)


def model_file(tmp_path, op="Relu"):
    g = helper.make_graph(
        [helper.make_node(op, ["X"], ["R"], name="act"), helper.make_node("MatMul", ["R", "W"], ["M"], name="mm"),
         helper.make_node("Softmax", ["M"], ["Y"], name="sm", axis=-1)],
        "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 2])], [numpy_helper.from_array(W, "W")])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return str(path)


def test_runs_with_the_bits_of_the_tensor_api(tmp_path):
    if not maroon._maroon.__dict__.get("onnx_load"):
        pytest.skip("no ONNX import in this build")
    m = maroon.onnx.load(model_file(tmp_path))
    assert m.opset == 17 and m.inputs == [("X", "float32", ("N", 3))]
    for n in (1, 4):
        x = (np.arange(n * 3, dtype=np.float32).reshape(n, 3) - 4) / 3
        want = Tensor(x).relu().matmul(Tensor(W)).softmax(-1).numpy()
        for got in (m.run([x]), m({"X": Tensor(x)}), m.run(x)):
            assert got[0].numpy().tobytes() == want.tobytes()
        np.testing.assert_allclose(want, np.exp(np.maximum(x, 0) @ W) / np.exp(np.maximum(x, 0) @ W).sum(-1, keepdims=True),
                                   rtol=1e-6)
        assert len(maroon.inference_digest(m.run([x]))) == 64


def test_errors_name_the_node_or_input(tmp_path):
    try:
        m = maroon.onnx.load(model_file(tmp_path))
    except RuntimeError as e:  # a build without ONNX import says so
        assert "no ONNX import" in str(e)
        return
    with pytest.raises(ValueError, match="node 'act' \\(FancyRelu\\)"):
        maroon.onnx.load(model_file(tmp_path, "FancyRelu"))
    with pytest.raises(ValueError, match="dimension 1 must be 3"):
        m.run([np.zeros((2, 4), np.float32)])
    with pytest.raises(ValueError, match="must be float32"):
        m.run([np.zeros((2, 3), np.float64)])
    (tmp_path / "bad.onnx").write_bytes(b"\x08\x07garbage")
    with pytest.raises(ValueError, match="malformed or truncated"):
        maroon.onnx.load(str(tmp_path / "bad.onnx"))
    with pytest.raises(TypeError, match="numpy array or a maroon.Tensor"):
        m.run(["x"])


def test_repeated_runs_replay_with_the_same_bits(tmp_path):
    if not maroon._maroon.__dict__.get("onnx_load"):
        pytest.skip("no ONNX import in this build")
    m = maroon.onnx.load(model_file(tmp_path))
    plain = maroon.onnx.load(model_file(tmp_path))
    plain.replay = False
    assert m.replay and not plain.replay
    rng = np.random.default_rng(5)
    for _ in range(5):
        x = rng.standard_normal((4, 3)).astype(np.float32)
        assert m.run([x])[0].numpy().tobytes() == plain.run([x])[0].numpy().tobytes()
    assert m.run_stats() == {"plain": 1, "captures": 1, "replays": 3, "refused": 0}
    assert plain.run_stats()["replays"] == 0


def test_threads_running_one_model_keep_the_plain_bits(tmp_path):
    """run() computes a replay without the GIL: two Python threads on one model at once, each
    output the bits of a plain run of its input."""
    if not maroon._maroon.__dict__.get("onnx_load"):
        pytest.skip("no ONNX import in this build")
    import threading
    m = maroon.onnx.load(model_file(tmp_path))
    plain = maroon.onnx.load(model_file(tmp_path))
    plain.replay = False
    xs = [np.random.default_rng(s).standard_normal((64, 3)).astype(np.float32) for s in range(16)]
    want = [plain.run([x])[0].numpy().tobytes() for x in xs]
    got = [None] * len(xs)

    def work(k):
        for i in range(k, len(xs), 2):
            got[i] = m.run([xs[i]])[0].numpy().tobytes()
    threads = [threading.Thread(target=work, args=(k,)) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == want
    assert m.run_stats()["replays"] > 0


def test_fused_products_follow_set_fused(tmp_path):
    """maroon.set_fused(True) runs the model's MatMul as REDUCE_MULACC: the bits of the fused
    Tensor API call, on 1 and 2 threads, replayed too; off again, the default bits."""
    if not maroon._maroon.__dict__.get("onnx_load"):
        pytest.skip("no ONNX import in this build")
    m = maroon.onnx.load(model_file(tmp_path))
    x = np.random.default_rng(7).standard_normal((300, 3)).astype(np.float32) / 3
    want = Tensor(x).relu().matmul(Tensor(W), fused=True).softmax(-1).numpy().tobytes()
    plain = m.run([x])[0].numpy().tobytes()
    assert want != plain
    threads = maroon.num_threads()
    try:
        maroon.set_fused(True)
        for n in (1, 2):
            maroon.set_num_threads(n)
            assert [m.run([x])[0].numpy().tobytes() for _ in range(3)] == [want] * 3
    finally:
        maroon.set_fused(False)
        maroon.set_num_threads(threads)
    assert m.run([x])[0].numpy().tobytes() == plain
    assert m.run_stats()["replays"] > 0
