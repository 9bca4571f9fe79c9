"""tinygrad's nn.state.torch_load: a PyTorch checkpoint (`torch.save`'s zip format) as Tensors,
without PyTorch.

A checkpoint is a zip archive: `<name>/data.pkl`, a pickle whose tensors refer to storages
stored as `<name>/data/<key>`. Unpickling runs code named by the file, so a checkpoint from
someone else could run anything; this reader is an allow-list (like PyTorch's
`weights_only=True`): only the classes a state dict uses are built, any other class is refused
with its name, and nothing else the pickle names is imported. Every storage reference, offset,
size and stride is checked against the bytes the archive holds before a tensor is made from
them. tinygrad's reader returns a placeholder for unknown classes and reads tar archives
(PyTorch before 1.6); this one refuses both, naming what it found.
"""
import io
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np

from .. import Tensor, dtypes

# torch's storage class -> (numpy dtype of the stored bytes, Maroon dtype). bfloat16 is read as
# its 16-bit patterns and bitcast.
_STORAGES = {
    "DoubleStorage": ("<f8", dtypes.float64), "FloatStorage": ("<f4", dtypes.float32),
    "HalfStorage": ("<f2", dtypes.float16), "BFloat16Storage": ("<u2", dtypes.bfloat16),
    "LongStorage": ("<i8", dtypes.int64), "IntStorage": ("<i4", dtypes.int32),
    "ShortStorage": ("<i2", dtypes.int16), "CharStorage": ("i1", dtypes.int8),
    "ByteStorage": ("u1", dtypes.uint8), "BoolStorage": ("?", dtypes.bool),
}
_MAX_PICKLE = 1 << 30  # data.pkl holds only structure; the tensors' bytes are separate entries


class _Storage:
    """A persistent id ('storage', torch.XStorage, key, location, numel), not yet read."""
    def __init__(self, kind, key, numel):
        self.kind, self.key, self.numel = kind, key, numel


class _StorageType:
    def __init__(self, name):
        self.name = name


def _fail(path, what):
    raise ValueError(f"[torch_load] {path}: {what}")


def _check_ints(path, name, values):
    if not isinstance(values, (tuple, list)) or not all(type(v) is int and v >= 0 for v in values):
        _fail(path, f"a tensor's {name} {values!r} is not a sequence of non-negative integers")
    return tuple(values)


class _Loader:
    def __init__(self, path, zf, base):
        self.path, self.zf, self.base = path, zf, base
        self.arrays = {}  # storage key -> numpy array of its elements

    def storage(self, st):
        if st.key not in self.arrays:
            name = f"{self.base}/data/{st.key}"
            try:
                info = self.zf.getinfo(name)
            except KeyError:
                _fail(self.path, f"storage '{st.key}' has no entry {name}")
            if info.compress_type != zipfile.ZIP_STORED:  # PyTorch stores; refuse a zip bomb
                _fail(self.path, f"entry {name} is compressed; torch.save stores entries uncompressed")
            np_dtype = np.dtype(_STORAGES[st.kind][0])
            if info.file_size < st.numel * np_dtype.itemsize:
                _fail(self.path, f"storage '{st.key}' claims {st.numel} elements of {np_dtype.itemsize} bytes "
                                 f"but {name} holds {info.file_size} bytes")
            data = self.zf.read(name)[:st.numel * np_dtype.itemsize]
            self.arrays[st.key] = np.frombuffer(data, np_dtype)
        return self.arrays[st.key]

    def rebuild(self, storage, offset, size, stride, *_rest):
        if not isinstance(storage, _Storage):
            _fail(self.path, f"a tensor's storage is {type(storage).__name__}, not a storage reference")
        if type(offset) is not int or offset < 0:
            _fail(self.path, f"a tensor's storage offset {offset!r} is not a non-negative integer")
        size, stride = _check_ints(self.path, "size", size), _check_ints(self.path, "stride", stride)
        if len(size) != len(stride):
            _fail(self.path, f"a tensor has size {size} but stride {stride}")
        arr = self.storage(storage)
        if 0 not in size:
            last = offset + sum((n - 1) * s for n, s in zip(size, stride))
            if last >= storage.numel:
                _fail(self.path, f"a tensor of size {size}, stride {stride} and offset {offset} reads element "
                                 f"{last} of storage '{storage.key}', which has {storage.numel}")
            view = np.lib.stride_tricks.as_strided(arr[offset:], size, [s * arr.itemsize for s in stride])
        else:
            view = np.zeros(size, arr.dtype)
        t = Tensor(np.array(view, order="C"))  # a copy (ascontiguousarray would make a 0-d view 1-d)
        dtype = _STORAGES[storage.kind][1]
        return t.bitcast(dtype) if dtype == dtypes.bfloat16 else t


class _Unpickler(pickle.Unpickler):
    def __init__(self, data, loader):
        super().__init__(io.BytesIO(data))
        self.loader = loader

    def find_class(self, module, name):
        allowed = {
            ("collections", "OrderedDict"): OrderedDict,
            ("torch._utils", "_rebuild_tensor"): self.loader.rebuild,
            ("torch._utils", "_rebuild_tensor_v2"): self.loader.rebuild,
            ("torch._utils", "_rebuild_parameter"): lambda data, *_: data,
            ("torch", "Size"): tuple,
        }
        if (module, name) in allowed:
            return allowed[(module, name)]
        if module == "torch" and name in _STORAGES:
            return _StorageType(name)
        _fail(self.loader.path, f"the pickle names {module}.{name}, which a state dict does not use "
                                "(only tensors, parameters, dicts, lists and numbers are read)")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage" and isinstance(pid[1], _StorageType)
                and isinstance(pid[2], str) and type(pid[4]) is int and pid[4] >= 0):
            _fail(self.loader.path, f"unexpected persistent id {pid!r}")
        return _Storage(pid[1].name, pid[2], pid[4])


def _open(path, source):
    try:
        zf = zipfile.ZipFile(source)
    except zipfile.BadZipFile:
        _fail(path, "not a zip archive: PyTorch's format since 1.6 (re-save the file with torch.save from a "
                    "newer PyTorch; the older tar format is not read)")
    names = [n for n in zf.namelist() if n.endswith("/data.pkl") and n.count("/") == 1]
    if len(names) != 1:
        _fail(path, f"expected one <name>/data.pkl in the archive, found {len(names)}")
    return zf, names[0].split("/")[0]


def torch_load(fn):
    """Reads a PyTorch checkpoint (torch.save's zip format) and returns what was saved, with each
    torch tensor as a Tensor (a copy of its elements, in torch's dtype; a view as its own
    elements). `fn` is a path or a Tensor/bytes of the file. Classes other than tensors,
    parameters and OrderedDict are refused with ValueError (the file is not run as code)."""
    if isinstance(fn, Tensor):
        path, source = "<tensor>", io.BytesIO(fn.numpy().tobytes())
    elif isinstance(fn, (bytes, bytearray)):
        path, source = "<bytes>", io.BytesIO(bytes(fn))
    else:
        path = os.fspath(fn)
        if not os.path.isfile(path):
            _fail(path, "not a regular file")
        source = path
    zf, base = _open(path, source)
    with zf:
        info = zf.getinfo(f"{base}/data.pkl")
        if info.file_size > _MAX_PICKLE:
            _fail(path, f"data.pkl is {info.file_size} bytes, over the {_MAX_PICKLE}-byte limit")
        order = zf.read(f"{base}/byteorder").decode() if f"{base}/byteorder" in zf.namelist() else "little"
        if order != "little":
            _fail(path, f"byte order '{order}': only little-endian checkpoints are read")
        loader = _Loader(path, zf, base)
        try:
            return _Unpickler(zf.read(f"{base}/data.pkl"), loader).load()
        except ValueError:
            raise
        except Exception as e:  # a malformed pickle: say so, whatever pickle raised
            _fail(path, f"malformed data.pkl ({type(e).__name__}: {e})")
