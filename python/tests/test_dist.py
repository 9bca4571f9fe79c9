"""maroon.dist from Python: the data-parallel step gives the C++ step's bits, alone and over
mpi4py on several ranks (tests/dist/dist_train.py is the program; tests/dist/dist_train.cpp its
C++ twin), and bad arguments are errors."""
import os
import shutil
import subprocess
import sys

import pytest

from maroon import Tensor, nn
from maroon.dist import DataParallel, SelfComm, part, tree_cover
from maroon.nn.optim import SGD

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROGRAM = os.path.join(ROOT, "tests", "dist", "dist_train.py")
CPP = os.path.join(ROOT, os.environ.get("MAROON_BUILD_DIR", "build"), "tests", "dist", "maroon-dist-train")
ARGS = ["3", "26", "mlp:4:1", "cnn:4:2"]  # uneven shards of a batch of 26


def lines(out):
    """The digest lines without the thread and rank counts, which must not matter."""
    return [" ".join(w for i, w in enumerate(l.split()) if i not in (3, 4, 5, 6)) for l in out.splitlines()]


@pytest.fixture(scope="module")
def alone():
    r = subprocess.run([sys.executable, PROGRAM, *ARGS], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_python_gives_the_cpp_bits(alone):
    if not os.path.exists(CPP):
        pytest.skip(f"{CPP} is not built")
    cpp = subprocess.run([CPP, *ARGS], capture_output=True, text=True, timeout=600)
    assert cpp.returncode == 0, cpp.stderr
    assert lines(alone) == lines(cpp.stdout)
    assert len(lines(alone)) == 2 and lines(alone)[0] != lines(alone)[1]


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="Open MPI's mpirun is not installed")
@pytest.mark.parametrize("ranks", [2, 3])
def test_mpi4py_ranks_give_the_bits_of_one_process(alone, ranks):
    pytest.importorskip("mpi4py")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    r = subprocess.run(["mpirun", "--oversubscribe", "-np", str(ranks), sys.executable, "-m", "mpi4py", PROGRAM, *ARGS],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert all(f" ranks {ranks}:" in l for l in r.stdout.splitlines()), r.stdout
    assert lines(r.stdout) == lines(alone)


def test_rules():
    assert [part(10, 3, i) for i in range(3)] == [(0, 3), (3, 6), (6, 10)]
    assert tree_cover(12, 0, 4) == [(0, 3), (3, 4)]


class BadComm(SelfComm):
    def all_gather(self, data):
        return ["not bytes"]


def test_bad_arguments_are_errors():
    lin = nn.Linear(3, 2)
    opt = SGD(lin.parameters(), lr=0.1)
    with pytest.raises(RuntimeError, match="shard count"):
        DataParallel(opt, 0)
    with pytest.raises(TypeError, match="must return bytes"):
        DataParallel(opt, 1, BadComm())
    dp = DataParallel(opt, 2)
    x = Tensor.ones(4, 3)
    with pytest.raises(ValueError, match="cannot be cut into 2 shards"):
        dp.step(1, lambda b, e: lin(x[b:e]).sum())
    with pytest.raises(TypeError, match="must return its loss sum"):
        dp.step(4, lambda b, e: 1.0)
    out = dp.step(4, lambda b, e: lin(x[b:e]).sum())
    assert out.loss.shape == () and len(dp.state_digest()) == 64 and dp.steps_done == 1
