"""Nothing lost, nothing crashes (issue 21), from Python: sizes that do not fit are ValueError and
buffers over the cap MemoryError, naming the op; deep graphs build, run and free without
recursion; Ctrl-C interrupts a long realize; realize releases the GIL; safetensors files are
written atomically and can carry a checksum. docs/reliability.md lists what each test proves."""
import math
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from maroon import Tensor, dtypes
from maroon.nn import state

K32, K62 = 2 ** 32, 2 ** 62


@pytest.mark.parametrize("make, message", [
    (lambda: Tensor.arange(0, K62).realize(), r"\[arange\] shape \(4611686018427387904,\) of int64 is too large"),
    (lambda: Tensor.linspace(0, 1, K62).realize(), r"\[linspace\] shape \(4611686018427387904,\)"),
    (lambda: Tensor.ones(1, 1).expand(K32, K32).sum(), r"\[expand\] shape \(4294967296,4294967296\)"),
    (lambda: Tensor.ones(2).pad(((K62, K62),)), r"\[pad\] padding .*4611686018427387904.* does not fit in 64 bits"),
    (lambda: Tensor.arange(0, float("nan")), r"\[arange\] start, stop and step must be finite, got 0, nan, 1"),
    (lambda: Tensor.arange(0, float("inf")), r"\[arange\] .*inf"),
    (lambda: Tensor.arange(0.0, 1.0, 1e-300), r"\[arange\] .*more than fit in 64 bits"),
    (lambda: Tensor.zeros(0, 2 ** 40, 2 ** 40), r"shape \(0,1099511627776,1099511627776\)"),
    (lambda: Tensor.rand(K32, K32), r"\(4294967296,4294967296\)"),
    (lambda: Tensor.ones(4).reshape(K32, K32, 0), r"\[reshape\]"),
])
def test_sizes_that_do_not_fit_are_value_errors(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_buffers_over_the_cap_are_memory_errors(monkeypatch):
    t = Tensor.full((1 << 20,), 1, dtype=dtypes.int32) + 1  # 4 MiB once realized
    monkeypatch.setenv("MAROON_MAX_ALLOC_BYTES", str(1 << 20))
    with pytest.raises(MemoryError, match=r"\[add\] cannot allocate 4194304 bytes .*\(1048576,\).*MAROON_MAX_ALLOC_BYTES"):
        t.realize()
    with pytest.raises(MemoryError, match=r"\[read\]"):
        Tensor.ones(1).expand(2 ** 40).tolist()
    monkeypatch.delenv("MAROON_MAX_ALLOC_BYTES")
    assert t[-1].item() == 2  # the graph is intact: it computes once the cap allows


def on_small_stack(fn, stack=1 << 20):
    """Runs fn on a thread with a 1 MiB stack (Python frames included): a recursion per graph
    node would overflow it long before 100000 nodes."""
    result, old = {}, threading.stack_size(stack)
    try:
        th = threading.Thread(target=lambda: result.setdefault("value", fn()))
        th.start()
        th.join()
    finally:
        threading.stack_size(old)
    return result.get("value")


def test_a_deep_chain_builds_runs_and_frees_without_recursion():
    def chain():
        x = Tensor([1.0, 2.0])
        for _ in range(100000):
            x = x + 1
        out = x.tolist()
        y = Tensor([0.0])
        for _ in range(100000):
            y = y * 1.0
        del y  # never realized: freeing it used to recurse once per node
        return out
    assert on_small_stack(chain) == [100001.0, 100002.0]


def test_keccak_of_32_kib():
    import hashlib
    msg = bytes(range(256)) * 128
    got = Tensor(list(msg), dtype=dtypes.uint8).keccak().tolist()
    assert bytes(got) == hashlib.sha3_256(msg).digest()


def long_graph(n=2000):
    """n kernels (small matmuls, at least tens of microseconds each on any machine); every
    element stays exactly 1 (1/64 is exact)."""
    x = Tensor.ones(64, 64)
    w = Tensor.full((64, 64), 1 / 64)
    for _ in range(n):
        x = (x @ w).relu()
    return x


def test_ctrl_c_interrupts_a_long_realize():
    import maroon
    threads = maroon.num_threads()
    maroon.set_num_threads(1)
    x = long_graph()
    started = threading.Event()

    def interrupt():  # runs while realize does: it released the GIL
        started.wait()
        time.sleep(0.005)
        os.kill(os.getpid(), signal.SIGINT)
    th = threading.Thread(target=interrupt)
    # Python raises KeyboardInterrupt only where SIGINT had its default action at start-up: a
    # background job of a non-interactive shell (a CI runner's `cmd &`) starts with it ignored,
    # and then no Ctrl-C reaches any program. Set the handler a terminal's user has.
    old_handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    th.start()
    try:
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            started.set()
            x.realize()
        interrupted_after = time.monotonic() - t0
        # The same graph uninterrupted, for comparison: the interrupt must have cut it short
        # (without polling, the KeyboardInterrupt would only come after the whole realize).
        again = long_graph()
        t0 = time.monotonic()
        assert again[0, :4].tolist() == [1.0] * 4
        whole = time.monotonic() - t0
    finally:
        th.join()
        signal.signal(signal.SIGINT, old_handler)
        maroon.set_num_threads(threads)
    assert interrupted_after < whole / 2, (interrupted_after, whole)
    # (that the interrupted graph itself still computes exactly: Threads.AnInterruptStopsRealize...)


def test_realize_releases_the_gil():
    x = long_graph()
    inside = threading.Event()

    def run():
        inside.set()
        x.realize()
    th = threading.Thread(target=run)
    th.start()
    inside.wait()
    ticks = 0
    while th.is_alive():
        ticks += 1
        time.sleep(0.001)
    th.join()
    # With the GIL held for the whole realize this loop could not run while it did.
    assert ticks >= 10, ticks
    assert x[0, :4].tolist() == [1.0] * 4


def test_threads_realize_concurrently_with_exact_results():
    results = {}

    def work(u):
        a = Tensor.arange(64, dtype=dtypes.float32).reshape(8, 8) + u
        results[u] = (a @ Tensor.ones(8, 8)).sum().item()
    threads = [threading.Thread(target=work, args=(u,)) for u in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {u: 8 * (2016 + 64 * u) for u in range(4)}


def test_safetensors_checksum(tmp_path):
    w = {"w": Tensor([1.0, 2.0, 3.0]), "b": Tensor([0.5])}
    path = tmp_path / "w.safetensors"
    state.safe_save(w, path, checksum=True)
    meta = state.safe_load_metadata(path)
    assert len(meta["maroon.data_sha256"]) == 64
    assert state.safe_load(path)["w"].tolist() == [1.0, 2.0, 3.0]
    data = bytearray(path.read_bytes())
    data[-2] ^= 0x10  # one flipped bit in a tensor
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="data checksum mismatch"):
        state.safe_load(path)
    # Without checksum=True the file has tinygrad's bytes: no metadata.
    state.safe_save(w, path)
    assert state.safe_load_metadata(path) == {}


def test_a_save_cut_short_keeps_the_old_file(tmp_path):
    """A file-size limit stops the write; the old weights stay whole and no temporary is left."""
    path = tmp_path / "w.safetensors"
    state.safe_save({"w": Tensor([1.0])}, path)
    good = path.read_bytes()
    code = f"""
import resource, signal, sys
from maroon import Tensor
from maroon.nn import state
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
try:
    state.safe_save({{"w": Tensor.ones(100000)}}, {str(path)!r})
except Exception as e:
    print(type(e).__name__, e)
    sys.exit(3)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "cannot write" in r.stdout and "File too large" in r.stdout, r.stdout
    assert path.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.safetensors"]


def test_reading_non_regular_files_is_refused(tmp_path):
    with pytest.raises(ValueError, match="not a regular file"):
        state.safe_load("/dev/zero")
    fifo = tmp_path / "fifo.safetensors"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        state.safe_load(fifo)  # a FIFO without a writer must not block
