"""The Python surface: numpy in and out, tinygrad's constructor and scalar rules, indexing and
setitem against numpy, autograd handles, nn.state, the optimizers and the module helpers."""
import numpy as np
import pytest

import maroon
from maroon import Context, Tensor, TinyJit, dtypes, nn
from maroon.nn import optim, state

NP_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32",
             "float64"]


@pytest.mark.parametrize("dt", NP_DTYPES)
def test_numpy_round_trip_keeps_every_bit(dt):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, 96, dtype=np.uint8).view(np.dtype(dt).newbyteorder("=")) if dt != "bool" else \
        rng.integers(0, 2, 96).astype(bool)
    a = a.reshape(2, -1, 3)
    t = Tensor(a)
    assert t.dtype == getattr(dtypes, dt) and t.shape == a.shape
    out = t.numpy()
    assert out.dtype == a.dtype and out.tobytes() == a.tobytes()  # NaN payloads included


def test_strided_numpy_and_bfloat16():
    a = np.arange(12, dtype=np.float32).reshape(3, 4).T  # not C-contiguous
    assert Tensor(a).tolist() == a.tolist()
    b = Tensor([1.5, -2.25, 3.0]).cast(dtypes.bfloat16)
    assert b.numpy().dtype == np.float32 and b.tolist() == [1.5, -2.25, 3.0]


def test_numpy_out_owns_a_single_buffer():
    t = Tensor.arange(6).reshape(2, 3)
    a = t.numpy()
    a[0, 0] = 99  # a private copy: the tensor is unchanged
    assert t.tolist()[0][0] == 0 and a.flags["C_CONTIGUOUS"] and a.flags["WRITEABLE"]


def test_constructor_defaults_follow_tinygrad():
    assert Tensor([1, 2, 3]).dtype == dtypes.int32
    assert Tensor([1.0, 2.0]).dtype == dtypes.float32
    assert Tensor([True, False]).dtype == dtypes.bool
    assert Tensor([1, 2.5]).dtype == dtypes.float32
    assert Tensor(3).dtype == dtypes.int32 and Tensor(3).shape == ()
    assert Tensor(2.5).item() == 2.5 and Tensor(True).item() is True
    assert Tensor(b"\x01\x02").dtype == dtypes.uint8
    assert Tensor([]).shape == (0,) and Tensor(None).shape == (0,)
    assert Tensor([0.1], dtype=dtypes.float64).item() == 0.1  # never through float32
    assert Tensor([0.1], dtype="float16").dtype == dtypes.float16
    assert Tensor([300, -1], dtype=dtypes.uint8).tolist() == [44, 255]  # wraps, as a cast does
    assert Tensor(Tensor([1, 2]), dtype=dtypes.float32).tolist() == [1.0, 2.0]
    assert Tensor(np.float64(1.5)).dtype == dtypes.float32  # a Python float, as in tinygrad


def test_python_scalars_are_weak():
    x = Tensor(np.array([1, 2], dtype=np.int8))
    assert (x * 300).dtype == dtypes.int8 and (x * 300).tolist() == [44, 88]
    assert (x + 1.5).dtype == dtypes.float32
    assert (Tensor([True]) + 1).dtype == dtypes.int32
    h = Tensor([1.0], dtype=dtypes.float16)
    assert (h * 2.0).dtype == dtypes.float16 and (2 - h).dtype == dtypes.float16
    assert (x < 1.5).dtype == dtypes.bool and (1 < x).tolist() == [False, True]
    assert (Tensor([7, -7]) // 2).tolist() == [3, -4] and (Tensor([7, -7]) % 3).tolist() == [1, 2]
    assert (2 ** Tensor([1.0, 3.0])).tolist() == [2.0, 8.0]
    assert (1 << Tensor([1, 2])).tolist() == [2, 4]


def test_item_and_tolist_give_python_types():
    assert type(Tensor([3]).sum().item()) is int
    assert type(Tensor([3.0]).sum().item()) is float
    assert type(Tensor([True]).any().item()) is bool
    assert Tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]


INDEXES = [1, -1, slice(None), slice(1, None), slice(None, None, 2), slice(None, None, -1), slice(3, 0, -2),
           (0, 1), (slice(None), 2), (None, 1), (Ellipsis, 0), (1, Ellipsis, None), (None, Ellipsis, None),
           ([0, 2],), ([1, 0], slice(None), [3, 1]), (slice(None), [[0, 1], [1, 0]]), (slice(1, 3), -1, [0, 0, 3])]


@pytest.mark.parametrize("idx", INDEXES, ids=[repr(i) for i in INDEXES])
def test_getitem_and_setitem_match_numpy(idx):
    a = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    np_idx = tuple(np.array(i) if isinstance(i, list) else i for i in idx) if isinstance(idx, tuple) else idx
    assert Tensor(a)[idx].numpy().tobytes() == a[np_idx].tobytes()
    assert Tensor(a)[idx].shape == a[np_idx].shape
    t, b = Tensor(a), a.copy()
    t[idx] = -1.0
    b[np_idx] = -1.0
    assert t.numpy().tobytes() == b.tobytes()


def test_setitem_with_a_tensor_and_every_handle_sees_it():
    t = Tensor.zeros(3, 4)
    alias = t
    t[1:, ::2] = Tensor([[1.0, 2.0], [3.0, 4.0]])
    assert alias.tolist() == [[0, 0, 0, 0], [1, 0, 2, 0], [3, 0, 4, 0]]
    t += 1
    assert alias.tolist()[0] == [1, 1, 1, 1]


def test_iteration_len_and_properties():
    t = Tensor([[1, 2], [3, 4], [5, 6]])
    assert len(t) == 3 and [r.tolist() for r in t] == [[1, 2], [3, 4], [5, 6]]
    assert t.ndim == 2 and t.numel() == 6 and t.size() == (3, 2) and t.size(1) == 2
    assert t.element_size() == 4 and t.nbytes() == 24 and t.device == "CPU" and t.T.shape == (2, 3)
    assert np.asarray(t).tolist() == t.tolist()


def test_autograd_handles():
    x = Tensor([1.0, 2.0, 3.0])
    assert x.grad is None and x.requires_grad
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    (x * 2).sum().backward()  # accumulates
    assert x.grad.tolist() == [4.0, 6.0, 8.0]
    x.grad = None
    y = Tensor([2.0])
    (y.detach() * y).sum().backward()
    assert y.grad.tolist() == [2.0]
    g, = (x ** 2).sum().gradient(x)
    assert g.tolist() == [2.0, 4.0, 6.0]


def test_training_switch_and_context():
    assert Tensor.training is False
    with Context(TRAINING=1):
        assert Tensor.training is True
        assert (Tensor.ones(100).dropout(0.5) == 0).any().item()
    assert Tensor.training is False and Tensor.ones(4).dropout(0.5).tolist() == [1.0] * 4


class Net:
    def __init__(self):
        self.l1 = nn.Linear(4, 3)
        self.blocks = [nn.BatchNorm(3), {"ln": nn.LayerNorm(3)}]
        self.scale = Tensor([2.0])


def test_state_dict_names_and_parameters_follow_tinygrad():
    Tensor.manual_seed(0)
    sd = state.get_state_dict(Net())
    assert list(sd) == ["l1.weight", "l1.bias", "blocks.0.weight", "blocks.0.bias", "blocks.0.num_batches_tracked",
                        "blocks.0.running_mean", "blocks.0.running_var", "blocks.1.ln.weight", "blocks.1.ln.bias",
                        "scale"]
    assert len(state.get_parameters(Net())) == 7  # no running statistics


def test_load_state_dict_and_safetensors_round_trip(tmp_path):
    Tensor.manual_seed(1)
    a, b = Net(), Net()
    assert a.l1.weight.numpy().tobytes() != b.l1.weight.numpy().tobytes()
    path = tmp_path / "net.safetensors"
    state.safe_save(state.get_state_dict(a), path, metadata={"epoch": 3})
    loaded = state.safe_load(str(path))
    assert state.safe_load_metadata(str(path)) == {"epoch": "3"}
    state.load_state_dict(b, loaded)
    for k, v in state.get_state_dict(a).items():
        assert state.get_state_dict(b)[k].numpy().tobytes() == v.numpy().tobytes(), k
    with pytest.raises(ValueError):
        state.load_state_dict(b, {**loaded, "l1.weight": Tensor.zeros(2, 2)})
    with pytest.raises(ValueError):
        state.load_state_dict(b, {"l1.weight": loaded["l1.weight"]})  # strict: keys missing
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(ValueError, match=r"\[safe_load\]"):
        state.safe_load(path)


@pytest.mark.parametrize("make", [lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
                                  lambda p: optim.Adam(p), lambda p: optim.AdamW(p, weight_decay=0.1),
                                  lambda p: optim.LAMB(p), lambda p: optim.LARS(p)],
                         ids=["SGD", "Adam", "AdamW", "LAMB", "LARS"])
def test_optimizers_step_deterministically(make):
    def run():
        Tensor.manual_seed(5)
        layer = nn.Linear(3, 2)
        opt = make(state.get_parameters(layer))
        with Context(TRAINING=1):
            for _ in range(3):
                opt.zero_grad()
                layer(Tensor.rand(4, 3)).square().mean().backward()
                opt.step()
        return layer.weight.numpy().tobytes()
    first = run()
    assert first == run()
    Tensor.manual_seed(5)
    assert nn.Linear(3, 2).weight.numpy().tobytes() != first  # it moved


def test_layers_and_module_helpers():
    Tensor.manual_seed(2)
    x = Tensor.rand(2, 3, 8, 8)
    assert nn.Conv2d(3, 4, 3, padding=1)(x).shape == (2, 4, 8, 8)
    assert nn.GroupNorm(1, 3)(x).shape == x.shape and nn.BatchNorm2d(3)(x).shape == x.shape
    assert nn.Embedding(10, 4)(Tensor([[1, 2]])).shape == (1, 2, 4)
    step = TinyJit(lambda t: t * 2)
    assert step(Tensor([1.0])).tolist() == [2.0]
    assert maroon.Device.DEFAULT == "CPU" and maroon.getenv("MAROON_NO_SUCH_VAR", 3) == 3
    assert dtypes.is_float(dtypes.half) and dtypes.is_unsigned(dtypes.uint8) and not dtypes.is_int(dtypes.bool)
    assert dtypes.from_py([1, 2.0]) == dtypes.float32 and dtypes.float.itemsize == 4 and repr(dtypes.int8) == "dtypes.char"  # tinygrad's spelling
    assert Tensor.cat(Tensor([1]), Tensor([2]), Tensor([3])).tolist() == [1, 2, 3]
    assert Tensor([1, 2]).stack(Tensor([3, 4]), dim=1).tolist() == [[1, 3], [2, 4]]
    assert Tensor.ones(2, 2).sequential([lambda t: t + 1, lambda t: t * 3]).tolist() == [[6, 6], [6, 6]]


def test_shape_properties_data_and_empty():
    t = Tensor([[1, 2], [3, 4]], dtype=dtypes.int16)
    assert bytes(t.data()) == np.array([[1, 2], [3, 4]], np.int16).tobytes()
    assert t.is_floating_point() is False and Tensor([1.0]).is_floating_point() is True
    assert t.shape == (2, 2) and t.ndim == 2 and t.max_shape == (2, 2) and t.max_numel() == 4
    assert Tensor.empty(2, 3).shape == (2, 3) and t.empty_like().shape == (2, 2) and t.empty_like().dtype == dtypes.int16


def test_fused_option_and_switch_agree():
    rng = np.random.default_rng(9)
    a, b = (Tensor(rng.uniform(-1, 1, s).astype(np.float32)) for s in ((6, 40), (40, 5)))
    fused = a.matmul(b, fused=True).numpy().tobytes()
    plain = a.matmul(b, fused=False).numpy().tobytes()
    try:
        maroon.set_fused(True)
        assert maroon.fused() and (a @ b).numpy().tobytes() == fused
        assert nn.Linear(40, 5)(a).shape == (6, 5)
    finally:
        maroon.set_fused(False)
    assert (a @ b).numpy().tobytes() == plain
