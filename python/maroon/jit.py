"""tinygrad's ``@TinyJit``: the first call runs the function, the second captures it (every
schedule it realizes, the CPU backend's plan for each and every assign), later calls replay the
capture with the new input tensors' buffers and return its outputs as new tensors. Nothing of the
function runs on a replay: no graph is built and no kernel is planned again. The bits are the
same as calling the function (maroon/jit.h, tests/api/jit_test.cpp, python/tests/test_jit.py).

A replay changes nothing anybody holds: outputs of earlier calls, earlier inputs and earlier
values of the states (maroon.verify.Run's commitments hash and checkpoint them) keep their bytes;
the states and a parameter's ``.grad`` move on to the new values.

A function whose first call draws random numbers (tinygrad's docs/mnist.md samples its batch
with ``Tensor.randint`` inside the step) is not captured: every call runs it, so each draws new
numbers and the bits are those of calling it (a replay would repeat the captured draws; tinygrad
replays them because its counter is a device buffer). What a replay cannot reproduce raises
maroon.Error naming it: a different number, shape or dtype of input tensors, a changed non-tensor
argument, random numbers first drawn by the capturing call, two input tensors on one buffer in the
capturing call (tinygrad's "duplicate inputs to JIT"), a capture inside a capture. Not detected,
as in tinygrad: a capturing call given as an input a tensor the function also reads by other means
(a parameter it closes over): replays read the new input for both uses (pass a copy). Python values the function computes (``loss.item()``) are not
recomputed: a capturing call that reads on the host a value computed from its input tensors
(``.item()``, ``.tolist()``, ``.numpy()``) warns (``JitHostReadWarning``), since whatever it decided
from that value (a branch, a shape, a returned Python number) is replayed as the captured call's."""
import functools
import itertools
import warnings

from ._maroon import Error, JitCapture, Tensor


class JitHostReadWarning(UserWarning):
    """The capturing call read on the host a value computed from its inputs (see TinyJit)."""


def _tensors(obj):
    """The Tensors in obj (a Tensor, or lists, tuples and dict values of them), in order."""
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _tensors(o)]
    if isinstance(obj, dict):
        return [t for k in sorted(obj, key=str) for t in _tensors(obj[k])]
    return []


_SLOT = object()  # where an output tensor goes in the kept structure of the outputs


def _rebuild(obj, new):
    """obj with its Tensors (or _SLOTs) replaced, in _tensors' order, by the next ones of the
    iterator new."""
    if isinstance(obj, Tensor) or obj is _SLOT:
        return next(new)
    if isinstance(obj, (list, tuple)):
        items = [_rebuild(o, new) for o in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
    if isinstance(obj, dict):
        done = {k: _rebuild(obj[k], new) for k in sorted(obj, key=str)}
        return type(obj)((k, done[k]) for k in obj)
    return obj


def _others(args, kwargs):
    """The non-tensor arguments, which a replay cannot change."""
    named = [(str(i), a) for i, a in enumerate(args)] + sorted(kwargs.items())
    return [(k, v) for k, v in named if not _tensors(v)]


def _same(a, b):
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):  # an array compares elementwise: only the same object is the same
        return a is b


class TinyJit:
    """tinygrad's ``@TinyJit``: call 1 runs the function, call 2 captures it, later calls replay the
    capture on the new input tensors (same shapes, dtypes and non-tensor arguments) and return its
    outputs as new tensors, with the same bits as calling the function."""

    def __init__(self, fxn):
        if not callable(fxn):
            raise TypeError("TinyJit needs a function")
        self.fxn = fxn
        functools.update_wrapper(self, fxn)
        self.reset()

    def reset(self):
        """Forget the capture: the next call runs the function, the one after captures again."""
        self.cnt, self.captured, self._ret, self._others, self.draws = 0, None, None, None, False
        # How many positional tensors the capturing call took when it took nothing else (no
        # keyword, no other argument), else -1: a replay given as many tensors and nothing else
        # skips the walk over its arguments and the comparison of non-tensor ones (there are
        # none on either side). That walk was most of a small replay's time: a 32x32 product
        # through TinyJit took 5.5 us a call against 4.1 without it.
        self._flat = -1

    def __get__(self, obj, objtype=None):  # a decorated method gets its instance
        return self if obj is None else functools.partial(self.__call__, obj)

    def __call__(self, *args, **kwargs):
        if self._flat == len(args) and not kwargs:
            for a in args:
                if not isinstance(a, Tensor):
                    break
            else:  # what the general path below would do for these arguments
                return self._replay(args)
        inputs = _tensors(list(args) + [kwargs[k] for k in sorted(kwargs)])
        if self.cnt == 0 or self.draws:
            stream = Tensor._random_state()
            ret = self.fxn(*args, **kwargs)
            for t in _tensors(ret):
                t.realize()
            self.draws = self.draws or Tensor._random_state() != stream
            self.cnt += 1
            return ret
        if self.cnt == 1:
            cap, held = JitCapture(), []

            def body():
                held.append(self.fxn(*args, **kwargs))
                return _tensors(held[0])
            outputs = cap.capture(inputs, body)
            if cap.host_reads_of_inputs:
                warnings.warn(
                    f"[TinyJit] the captured call read {cap.host_reads_of_inputs} value(s) computed from its "
                    f"inputs on the host (the first: {cap.first_host_read_of_inputs}): replays do not read them "
                    "again, so what the function decided from them is the captured call's (return them as "
                    "tensors and read them outside the function)", JitHostReadWarning, stacklevel=2)
            # The structure without the tensors, which would keep the captured graph alive (and
            # with it every buffer of the capture through the first replay): the outputs return
            # as leaves over the same buffers, as a replay's do.
            self._ret = _rebuild(held.pop(), itertools.repeat(_SLOT))
            self.captured, self._others, self.cnt = cap, _others(args, kwargs), 2
            flat = not kwargs and all(isinstance(a, Tensor) for a in args)
            self._flat = len(args) if flat else -1
            return _rebuild(self._ret, iter(outputs))
        others = _others(args, kwargs)
        if len(others) != len(self._others) or any(
                k != k2 or not _same(v, v2) for (k, v), (k2, v2) in zip(others, self._others)):
            raise Error(f"[TinyJit] non-tensor arguments {others!r} differ from the captured call's "
                        f"{self._others!r}: a capture replays them as they were (reset() it, or use another TinyJit)")
        return self._replay(inputs)

    def _replay(self, inputs):
        """The capture run on these input tensors; its outputs in the captured call's structure."""
        outputs = self.captured.replay(inputs)
        self.cnt += 1
        return _rebuild(self._ret, iter(outputs))
