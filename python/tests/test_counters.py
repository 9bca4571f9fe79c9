"""tinygrad's GlobalCounters and DEBUG on Maroon: the counters come from the engine (kernels run,
operations, bytes, time, live buffer bytes), Context(DEBUG=2) and the DEBUG variable print one
line per executed kernel in tinygrad's format, and neither changes a bit."""
import os
import subprocess
import sys

import numpy as np

import maroon
from maroon import Context, GlobalCounters, Tensor
from maroon.helpers import DEBUG
from maroon.helpers import GlobalCounters as HelpersGlobalCounters


def operands(m=16, k=32, n=8):
    rng = np.random.default_rng(0)
    return (Tensor(rng.standard_normal((m, k)).astype(np.float32)).realize(),
            Tensor(rng.standard_normal((k, n)).astype(np.float32)).realize())


def test_global_counters_count_a_matmul_and_reset():
    assert HelpersGlobalCounters is GlobalCounters  # both of tinygrad's import paths
    a, b = operands()
    GlobalCounters.reset()
    assert (GlobalCounters.kernel_count, GlobalCounters.global_ops, GlobalCounters.global_mem) == (0, 0, 0)
    assert GlobalCounters.time_sum_s == 0
    c = (a @ b).realize()
    assert GlobalCounters.kernel_count >= 1
    assert GlobalCounters.global_ops >= 2 * 16 * 32 * 8
    assert GlobalCounters.global_mem >= (16 * 32 + 32 * 8 + 16 * 8) * 4
    assert GlobalCounters.time_sum_s > 0
    used = GlobalCounters.mem_used
    assert used >= c.nbytes() and GlobalCounters.mem_used_per_device["CPU"] == used
    GlobalCounters.reset()
    assert GlobalCounters.kernel_count == 0 and GlobalCounters.mem_used == used  # mem_used is not reset
    del c
    assert GlobalCounters.mem_used < used  # the result's buffer is gone


def test_global_counters_can_be_assigned_as_tinygrads_class_attributes():
    a, b = operands()
    GlobalCounters.reset()
    (a @ b).realize()
    n = GlobalCounters.kernel_count
    GlobalCounters.kernel_count += 10
    assert GlobalCounters.kernel_count == n + 10
    GlobalCounters.reset()
    assert GlobalCounters.kernel_count == 0


def test_context_debug_2_prints_a_line_per_kernel_and_changes_no_bit(capsys):
    a, b = operands()
    quiet = ((a @ b).relu() + 1).numpy()
    capsys.readouterr()
    GlobalCounters.reset()
    assert DEBUG < 2
    with Context(DEBUG=2):
        assert DEBUG >= 2 and maroon.get_setting("MAROON_DEBUG") == "2"
        loud = ((a @ b).relu() + 1).numpy()
    kernels = GlobalCounters.kernel_count
    lines = capsys.readouterr().out.splitlines()
    assert quiet.tobytes() == loud.tobytes()
    assert kernels >= 1 and len(lines) == kernels, lines
    for k, line in enumerate(lines, 1):
        assert line.startswith(f"*** CPU     {k:4d} ") and " arg " in line and " tm " in line and "GFLOPS" in line, line
    assert "(16,8)" in lines[-1]
    assert maroon.get_setting("MAROON_DEBUG") == "" and not DEBUG
    (a @ b).realize()
    assert capsys.readouterr().out == ""  # off again


def test_debug_refuses_what_is_not_a_level():
    try:
        maroon.set_setting("MAROON_DEBUG", "x")
    except ValueError as e:
        assert "MAROON_DEBUG" in str(e)
    else:
        raise AssertionError("MAROON_DEBUG=x was accepted")


def test_tinygrads_debug_variable_turns_the_lines_on():
    code = "from maroon import Tensor; (Tensor([1.0, 2.0]) * 3).realize()"
    env = dict(os.environ, DEBUG="2")
    env.pop("MAROON_DEBUG", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.startswith("*** CPU") and "MUL float32 (2,)" in out, out


def test_kernels_are_timed_only_once_someone_reads_or_resets_the_counters():
    # A fresh process: its first kernels are counted but not timed (no clock reads for a number
    # nobody asked for); after a read or reset, and at DEBUG >= 2, they are.
    code = ("import numpy as np\n"
            "from maroon import Tensor, GlobalCounters\n"
            "a = Tensor(np.ones((64, 64), np.float32)).realize()\n"
            "(a @ a).realize()\n"
            "assert GlobalCounters.kernel_count >= 1, GlobalCounters.kernel_count\n"
            "assert GlobalCounters.time_sum_s == 0, GlobalCounters.time_sum_s\n"
            "(a @ a).realize()\n"
            "assert GlobalCounters.time_sum_s > 0, 'timed after the first read'\n"
            "print('ok')\n")
    env = dict(os.environ)
    env.pop("MAROON_DEBUG", None)
    env.pop("DEBUG", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    loud = subprocess.run([sys.executable, "-c", "from maroon import Tensor; (Tensor([1.0, 2.0]) * 3).realize()"],
                          env=dict(env, MAROON_DEBUG="2"), capture_output=True, text=True, check=True).stdout
    assert " tm " in loud and "   0.00us/" not in loud, loud  # DEBUG=2's lines carry real times
