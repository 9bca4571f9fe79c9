"""tinygrad.helpers' names that tinygrad's examples and docs import (`from tinygrad.helpers import
getenv, colored, trange, Timing, GlobalCounters, DEBUG, Context`), so those programs run with only the
import changed."""
import collections
import contextlib
import functools
import os
import sys
import time

from . import _maroon

__all__ = ["getenv", "colored", "Timing", "tqdm", "trange", "DEBUG", "GlobalCounters", "Context"]


@functools.lru_cache(maxsize=None)
def getenv(key, default=0):
    """The environment variable ``key`` converted to ``default``'s type (tinygrad's getenv, cached)."""
    return type(default)(os.getenv(key, default))


class _DebugLevel:
    """tinygrad's DEBUG ContextVar (``if DEBUG >= 2:``): the engine's MAROON_DEBUG setting, which
    ``Context(DEBUG=n)`` sets; at 2 and up the engine prints one line per executed kernel."""
    key = "DEBUG"

    @property
    def value(self):
        return int(_maroon.get_setting("MAROON_DEBUG") or 0)

    def __int__(self):
        return self.value

    def __index__(self):
        return self.value

    def __bool__(self):
        return bool(self.value)

    def __eq__(self, x):
        return self.value == x

    def __hash__(self):
        return hash(self.key)

    def __ge__(self, x):
        return self.value >= x

    def __gt__(self, x):
        return self.value > x

    def __le__(self, x):
        return self.value <= x

    def __lt__(self, x):
        return self.value < x

    def __repr__(self):
        return f"DEBUG={self.value}"


DEBUG = _DebugLevel()
# tinygrad's variable: `DEBUG=2 python prog.py` works as it does there (MAROON_DEBUG, when set, wins).
if not _maroon.get_setting("MAROON_DEBUG") and str(getenv("DEBUG", "")).isdigit():
    _maroon.set_setting("MAROON_DEBUG", str(min(int(getenv("DEBUG", "")), 9)))


class _Counter:
    """One of GlobalCounters' attributes: the engine's count since the last reset, less whatever
    the program subtracted by assigning to it (tinygrad code may write them)."""

    def __init__(self, key):
        self.key = key

    def __get__(self, obj, cls):
        return _maroon.counters()[self.key] - _Counters.offsets[self.key]

    def __set__(self, obj, value):
        _Counters.offsets[self.key] = _maroon.counters()[self.key] - value


class _Counters(type):
    offsets = collections.defaultdict(int)
    global_ops = _Counter("global_ops")
    global_mem = _Counter("global_mem")
    kernel_count = _Counter("kernel_count")
    time_sum_s = _Counter("time_sum_s")
    mem_used = _Counter("mem_used")

    @property
    def mem_used_per_device(cls):
        return collections.defaultdict(int, {"CPU": cls.mem_used})


class GlobalCounters(metaclass=_Counters):
    """tinygrad's GlobalCounters, counted by the engine: ``kernel_count`` kernels executed (a fused
    chain is one; views are none), ``global_ops`` operations (elements computed per op; a matmul
    2*M*K*N), ``global_mem`` bytes (each kernel's output and the inputs it reads), ``time_sum_s``
    seconds inside kernels (timed from the first read or reset of the counters in the process, or
    under DEBUG >= 2: nobody else pays the clock reads), ``mem_used`` bytes of live buffers (not
    reset). Read them as class attributes; ``reset()`` zeroes all but mem_used."""

    @staticmethod
    def reset():
        """Zeroes global_ops, global_mem, time_sum_s and kernel_count (tinygrad's reset)."""
        _maroon.reset_counters()
        for k in ("global_ops", "global_mem", "time_sum_s", "kernel_count"):
            _Counters.offsets[k] = 0

_COLORS = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]


def colored(st, color, background=False):
    """``st`` in an ANSI color (upper case: the bright variant); unchanged for color None or NO_COLOR set."""
    if color is None or getenv("NO_COLOR"):
        return st
    code = 10 * background + 60 * (color.upper() == color) + 30 + _COLORS.index(color.lower())
    return f"\u001b[{code}m{st}\u001b[0m"


class Timing(contextlib.ContextDecorator):
    """Prints the time the block took, in ms, after ``prefix`` (and ``on_exit(ns)``'s text)."""

    def __init__(self, prefix="", on_exit=None, enabled=True):
        self.prefix, self.on_exit, self.enabled = prefix, on_exit, enabled

    def __enter__(self):
        self.st = time.perf_counter_ns()

    def __exit__(self, *exc):
        self.et = time.perf_counter_ns() - self.st
        if self.enabled:
            print(f"{self.prefix}{self.et * 1e-6:6.2f} ms" + (self.on_exit(self.et) if self.on_exit else ""))


class tqdm:  # noqa: N801 (tinygrad's name)
    """A minimal progress bar on stderr (tinygrad's tqdm): iterate it; ``set_description`` sets its text."""

    def __init__(self, iterable=None, desc="", disable=False, unit="it", total=None):
        self.iterable, self.desc, self.disable, self.unit = iterable, desc, disable, unit
        self.total = len(iterable) if total is None and hasattr(iterable, "__len__") else total
        self.n, self.st = 0, time.perf_counter()

    def set_description(self, desc):
        """The text in front of the bar."""
        self.desc = desc
        self._show()

    def update(self, n=1):
        """Counts ``n`` more steps."""
        self.n += n
        self._show()

    def _show(self):
        if self.disable:
            return
        rate = self.n / max(time.perf_counter() - self.st, 1e-9)
        total = f"/{self.total}" if self.total else ""
        sys.stderr.write(f"\r{self.desc} {self.n}{total} [{rate:.2f} {self.unit}/s]")
        sys.stderr.flush()

    def __iter__(self):
        for item in self.iterable:
            yield item
            self.update(1)
        if not self.disable:
            sys.stderr.write("\n")

    def __len__(self):
        return self.total or 0


def trange(n, **kwargs):
    """``tqdm(range(n))``."""
    return tqdm(range(n), total=n, **kwargs)


class Context(contextlib.ContextDecorator):
    """tinygrad's Context(TRAINING=1, DEBUG=2): sets the variables for the block and restores them.
    TRAINING is Tensor.training; DEBUG is the engine's MAROON_DEBUG (2 and up: one line per
    executed kernel). tinygrad's other variables (BEAM, JIT, ...) choose kernels or devices, which
    never change Maroon's bits or need choosing: they are accepted and do nothing."""

    def __init__(self, **kwargs):
        self.kwargs, self.frames = kwargs, []  # one frame of saved values per (nested) entry

    def __enter__(self):
        saved = []
        if "TRAINING" in self.kwargs:
            saved.append(("TRAINING", _maroon.Tensor.training))
            _maroon.Tensor.training = bool(self.kwargs["TRAINING"])
        if "DEBUG" in self.kwargs:
            saved.append(("DEBUG", _maroon.get_setting("MAROON_DEBUG")))
            _maroon.set_setting("MAROON_DEBUG", str(min(max(int(self.kwargs["DEBUG"]), 0), 9)))
        self.frames.append(saved)
        return self

    def __exit__(self, *exc):
        for key, old in reversed(self.frames.pop()):
            if key == "TRAINING":
                _maroon.Tensor.training = old
            else:
                _maroon.set_setting("MAROON_DEBUG", old)
