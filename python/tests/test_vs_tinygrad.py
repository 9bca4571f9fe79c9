"""Every case of cases.py against the results tinygrad itself produced for the same inputs
(tests/data/tinygrad/python_ref.npz, written by tools/tinygrad/gen_python_ref.py): integers,
bools and the rand/randint/randperm/multinomial/dropout streams exactly, floats within each case's
stated ULP bound (tg_ulp; 0 means bit-exact)."""
import os

import numpy as np
import pytest

from cases import CASES
from compare import run_maroon, ulp_error

REF = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "tinygrad", "python_ref.npz")
ref = np.load(REF)
skipped = {s.split(":")[0]: s for s in ref["skipped"]}
TG_CASES = [c for c in CASES if c.tinygrad and c.name not in skipped]


def test_reference_data_covers_the_table():
    names = {k.split("/")[0] for k in ref.files if "/" in k}
    assert names == {c.name for c in TG_CASES}
    assert len(skipped) <= 5, sorted(skipped.values())


@pytest.mark.parametrize("case", TG_CASES, ids=[c.name for c in TG_CASES])
def test_forward_and_backward_match_tinygrad(case):
    arrays = [ref[f"{case.name}/in{k}"] for k in range(len(case.inputs))]
    for a, b in zip(arrays, case.arrays()):
        assert a.tobytes() == b.tobytes()  # the same program on the same inputs
    got, got_grads = run_maroon(case, arrays)
    want = ref[f"{case.name}/out"]
    if want.dtype.kind != "f":
        assert got.dtype == want.dtype, f"{case.name}: dtype {got.dtype} != {want.dtype}"
    err = ulp_error(got, want)
    assert err <= case.tg_ulp, f"{case.name}: forward {err} ULP > {case.tg_ulp}"
    want_grads = [ref[k] for k in sorted(f for f in ref.files if f.startswith(f"{case.name}/grad"))]
    assert len(got_grads) == len(want_grads)
    for k, (g, w) in enumerate(zip(got_grads, want_grads)):
        gerr = ulp_error(g, w)
        assert gerr <= case.tg_grad_ulp, f"{case.name}: gradient {k} {gerr} ULP > {case.tg_grad_ulp}"
