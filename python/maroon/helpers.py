"""tinygrad.helpers' names that tinygrad's examples and docs import (`from tinygrad.helpers import
getenv, colored, trange, Timing`), so those programs run with only the import changed."""
import contextlib
import functools
import os
import sys
import time

__all__ = ["getenv", "colored", "Timing", "tqdm", "trange", "DEBUG"]


@functools.lru_cache(maxsize=None)
def getenv(key, default=0):
    """The environment variable ``key`` converted to ``default``'s type (tinygrad's getenv, cached)."""
    return type(default)(os.getenv(key, default))


DEBUG = getenv("DEBUG")

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
