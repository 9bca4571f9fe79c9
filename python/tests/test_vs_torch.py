"""Every case of cases.py that PyTorch can express: Maroon's forward result and the gradients of
its sum against PyTorch's (torch 1.13, live), within each case's stated ULP bound (0: exact)."""
import pytest

from cases import TORCH_CASES
from compare import run_maroon, run_torch, ulp_error

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("case", TORCH_CASES, ids=[c.name for c in TORCH_CASES])
def test_forward_and_backward_match_torch(case):
    arrays = case.arrays()
    got, got_grads = run_maroon(case, arrays)
    want, want_grads = run_torch(case, arrays)
    err = ulp_error(got, want)
    assert err <= case.ulp, f"{case.name}: forward {err} ULP > {case.ulp}"
    assert len(got_grads) == len(want_grads)
    for k, (g, w) in enumerate(zip(got_grads, want_grads)):
        gerr = ulp_error(g, w)
        assert gerr <= case.grad_ulp, f"{case.name}: gradient {k} {gerr} ULP > {case.grad_ulp}"
