"""examples/char_gpt.py, the character-level GPT written with tinygrad's API: a few training
steps of both variants print the digests stored in tests/data/char_gpt_digest.txt (the C++ twin,
tests/api/char_gpt_test.cpp, compares with the same file) under two SIMD targets and two thread
counts set through the environment (MAROON_SIMD, MAROON_THREADS)."""
import hashlib
import json
import os
import subprocess
import sys

import pytest

import maroon

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
EXAMPLE = os.path.join(ROOT, "examples", "char_gpt.py")


def stored():
    out = {}
    with open(os.path.join(ROOT, "tests", "data", "char_gpt_digest.txt")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, *digests = line.split()
                out[name] = digests
    return out


def run_example(llama, simd, threads, *extra):
    env = dict(os.environ, MAROON_SIMD=simd, MAROON_THREADS=str(threads))
    args = [sys.executable, EXAMPLE, "--tiny", "--steps", "3", "--batch", "4", "--sample", "16", "--json", *extra]
    r = subprocess.run(args + (["--llama"] if llama else []), env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


TARGETS = maroon.available_simd_targets()


@pytest.mark.parametrize("llama,simd,threads", [(False, TARGETS[0], 1), (False, TARGETS[-1], 2),
                                                (True, TARGETS[0], 2), (True, TARGETS[-1], 1)])
def test_the_example_prints_the_stored_digests(llama, simd, threads, tmp_path):
    weights = str(tmp_path / "gpt.safetensors")
    out = run_example(llama, simd, threads, "--save", weights)
    want = stored()["llama" if llama else "gpt2"]
    assert [out["loss_digest"], out["sample_digest"], out["weights_digest"], out["inference_digest"]] == want
    # The saved file is the weights digest's bytes, and inference from it gives the same digest.
    with open(weights, "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == want[2]
    if simd == TARGETS[0]:  # once per variant: inference in a fresh process, from the file
        assert run_example(llama, TARGETS[-1], 1, "--infer", weights)["inference_digest"] == want[3]
    assert out["losses"][-1] < out["losses"][0]
    assert out["sample"].startswith("This License") and len(out["sample"]) == 12 + 16


def test_the_example_refuses_another_corpus(tmp_path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("char_gpt", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    other = tmp_path / "corpus.txt"
    other.write_bytes(b"not the GPL")
    with pytest.raises(SystemExit, match="expected " + mod.CORPUS_SHA256):
        mod.load_corpus(str(other))


def test_rmsnorm_and_rope_are_the_engine_ones():
    from maroon import Tensor, nn
    assert nn.RMSNorm(2, eps=0.0)(Tensor([[3.0, 4.0]])).tolist()[0] == pytest.approx([3 / 12.5 ** 0.5, 4 / 12.5 ** 0.5], rel=1e-6)
    x = Tensor([[1.5, -2.0, 3.0, 0.25], [1.0, 0.0, 0.0, 1.0]])
    y = nn.apply_rope(x, nn.precompute_freqs_cis(4, 2)).tolist()
    assert y[0] == [1.5, -2.0, 3.0, 0.25]  # position 0 is the identity, bit for bit
    assert y[1][2] == pytest.approx(0.8414709568023682, abs=0)  # float32 sin(1)
