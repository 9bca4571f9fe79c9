"""nn.state.torch_load reads what torch.save writes, bit for bit, and refuses a checkpoint that
names a class a state dict does not use, or whose storages do not hold what its tensors claim."""
import io
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

from maroon import Tensor, dtypes
from maroon.nn.state import torch_load

torch = pytest.importorskip("torch")


def saved(obj, tmp_path, name="ck.pt"):
    path = tmp_path / name
    torch.save(obj, path)
    return path


def bits(t):
    return t.numpy().tobytes()


def test_every_dtype_and_view_comes_back_bit_for_bit(tmp_path):
    g = torch.Generator().manual_seed(0)
    base = torch.randn(5, 7, generator=g)
    sd = OrderedDict([
        ("f32", base), ("f64", base.double()), ("f16", base.half()),
        ("i64", torch.arange(-3, 9)), ("i32", torch.arange(6, dtype=torch.int32).reshape(2, 3)),
        ("i16", torch.tensor([-2, 7], dtype=torch.int16)), ("i8", torch.tensor([-128, 127], dtype=torch.int8)),
        ("u8", torch.tensor([0, 255], dtype=torch.uint8)), ("b", torch.tensor([True, False, True])),
        ("transposed", base.t()), ("sliced", base[1:4, ::2]), ("scalar", torch.tensor(2.5)),
        ("empty", torch.zeros(0, 3)), ("nan_negzero", torch.tensor([float("nan"), -0.0, float("inf")])),
    ])
    out = torch_load(saved(sd, tmp_path))
    assert list(out) == list(sd)
    for k, v in sd.items():
        assert out[k].shape == tuple(v.shape), k
        assert bits(out[k]) == v.contiguous().numpy().tobytes(), k
    assert out["f16"].dtype == dtypes.float16 and out["i8"].dtype == dtypes.int8 and out["b"].dtype == dtypes.bool


def test_bfloat16_and_a_module_state_dict_and_nested_objects(tmp_path):
    lin = torch.nn.Linear(3, 2)
    ck = {"model": lin.state_dict(), "epoch": 4, "bf": torch.tensor([1.5, -2.0], dtype=torch.bfloat16),
          "params": list(lin.parameters())}
    out = torch_load(saved(ck, tmp_path))
    assert out["epoch"] == 4
    assert bits(out["model"]["weight"]) == lin.weight.detach().numpy().tobytes()
    assert bits(out["params"][1]) == lin.bias.detach().numpy().tobytes()
    assert out["bf"].dtype == dtypes.bfloat16
    assert out["bf"].bitcast(dtypes.uint16).numpy().tolist() == lin_bf16_bits([1.5, -2.0])


def lin_bf16_bits(values):
    return torch.tensor(values, dtype=torch.bfloat16).view(torch.int16).numpy().astype(np.uint16).tolist()


def test_a_tensor_or_bytes_of_the_file_read_the_same(tmp_path):
    path = saved({"w": torch.arange(4.0)}, tmp_path)
    raw = path.read_bytes()
    for src in (raw, Tensor(np.frombuffer(raw, np.uint8))):
        assert torch_load(src)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]


class Evil:
    def __reduce__(self):
        return (print, ("pwned",))


def rewrite(path, name, data, compress=zipfile.ZIP_STORED):
    """A copy of the archive at `path` with entry `name` (suffix) replaced by `data`."""
    buf = io.BytesIO()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(buf, "w") as dst:
        for info in src.infolist():
            body = data if info.filename.endswith(name) else src.read(info.filename)
            dst.writestr(info.filename, body, compress_type=compress if info.filename.endswith(name) else info.compress_type)
    return buf.getvalue()


def test_a_class_outside_the_state_dict_vocabulary_is_refused_not_run(tmp_path, capsys):
    path = saved({"w": torch.ones(2)}, tmp_path)
    evil = rewrite(path, "data.pkl", pickle.dumps({"x": Evil()}, protocol=2))
    with pytest.raises(ValueError, match=r"builtin__?\.print"):
        torch_load(evil)
    assert "pwned" not in capsys.readouterr().out


def test_storages_that_do_not_hold_what_the_tensors_claim_are_refused(tmp_path):
    path = saved({"w": torch.arange(6.0)}, tmp_path)
    with zipfile.ZipFile(path) as z:
        key = [n for n in z.namelist() if "/data/" in n][0].rsplit("/", 1)[1]
        pkl = z.read([n for n in z.namelist() if n.endswith("data.pkl")][0])
    with pytest.raises(ValueError, match="holds 8 bytes"):
        torch_load(rewrite(path, f"data/{key}", b"\0" * 8))
    with pytest.raises(ValueError, match="compressed"):
        torch_load(rewrite(path, f"data/{key}", b"\0" * 24, zipfile.ZIP_DEFLATED))
    # size 6 -> 7: the view would read past the storage's 6 elements
    grown = pkl.replace(b"K\x06\x85", b"K\x07\x85", 1)
    assert grown != pkl
    with pytest.raises(ValueError, match="reads element 6"):
        torch_load(rewrite(path, "data.pkl", grown))


@pytest.mark.parametrize("damage", ["truncated", "not_zip", "legacy"])
def test_damaged_and_legacy_files_give_a_clear_error(tmp_path, damage):
    path = saved({"w": torch.ones(3)}, tmp_path)
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:200])
    elif damage == "not_zip":
        path.write_bytes(b"hello")
    else:
        torch.save({"w": torch.ones(3)}, path, _use_new_zipfile_serialization=False)
    with pytest.raises(ValueError, match=r"\[torch_load\]"):
        torch_load(path)
    with pytest.raises(ValueError, match="not a regular file"):
        torch_load(tmp_path)
