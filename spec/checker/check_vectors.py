"""Checks Maroon's conformance vectors (spec/vectors) with numpy and the standard library only: no
Maroon import. It recomputes what docs/spec.md and docs/spec-model.md define from the stored
inputs and compares bits, and it verifies every SHA-256 the manifest gives (files, content-named
outputs through the tensor-list serialisation, the MNIST run's digests).

usage: check_vectors.py VECTORS_DIR [--data MNIST_DIR] [--verbose]
Prints one line per group (checked, not checked) and exits 1 on any mismatch."""
import collections
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import composites  # noqa: E402
import primitives  # noqa: E402
from tensors import load_safetensors, raw_digest, tensors_digest  # noqa: E402


class Store:
    def __init__(self, root, files):
        self.root, self.files, self.cache = root, files, {}

    def get(self, ref):
        file, name = ref.split(":", 1)
        if file not in self.cache:
            self.cache[file] = load_safetensors(os.path.join(self.root, file))
        return self.cache[file][name]


def group_of(e):
    if e["id"].startswith("mnist/"):
        return "mnist"
    if e["id"].startswith(("random", "THREEFRY")):
        return "random"
    if e["inputs"] and e["inputs"][0].startswith("composites."):
        return "composite"
    return "primitive"


def main(argv):
    root = argv[1]
    data = argv[argv.index("--data") + 1] if "--data" in argv else None
    verbose = "--verbose" in argv
    start = time.time()
    manifest = json.load(open(os.path.join(root, "manifest.json")))
    failures = []
    for file, digest in manifest["files"].items():
        if raw_digest(open(os.path.join(root, file), "rb").read()) != digest:
            failures.append(f"{file}: SHA-256 differs from the manifest's")
    store = Store(root, manifest["files"])
    # Outputs are named by content: "o/" + 16 hex digits of tensors_digest("maroon-vectors/output", [t]).
    named = 0
    for file in manifest["files"]:
        for name, t in load_safetensors(os.path.join(root, file)).items():
            if name.startswith("o/"):
                named += 1
                if tensors_digest(b"maroon-vectors/output", [t])[:16] != name[2:]:
                    failures.append(f"{file}:{name}: the name is not its content's digest")
    counts = collections.defaultdict(lambda: [0, 0])  # group -> [checked, not checked]
    ctx = composites.Context(store, data)
    for e in manifest["vectors"]:
        g = group_of(e)
        ins = [store.get(r) for r in e["inputs"]]
        outs = [store.get(r) for r in e["outputs"]]
        try:
            ok = check(g, e, ins, outs, ctx)
        except Exception as ex:  # a checker bug or a malformed vector: report it as a failure
            ok = f"error: {type(ex).__name__}: {ex}"
        if ok is None:
            counts[g][1] += 1
            continue
        counts[g][0] += 1
        if ok is not True:
            failures.append(f"{e['id']}: {ok}")
        elif verbose:
            print("ok", e["id"])
    total = sum(c[0] for c in counts.values())
    for g in ("primitive", "composite", "random", "mnist"):
        print(f"{g:10s} {counts[g][0]:5d} checked, {counts[g][1]:4d} not checked")
    print(f"{named} content-named outputs and {len(manifest['files'])} files match their SHA-256")
    for f in failures:
        print("FAIL", f)
    print(f"{total} of {len(manifest['vectors'])} vectors checked, {len(failures)} failures, {time.time() - start:.1f} s")
    return 1 if failures else 0


def check(g, e, ins, outs, ctx):
    """True, a description of the mismatch, or None when the vector is not checked here."""
    if g == "primitive":
        want = primitives.expected(e, ins)
        if want is None:
            return None
        got = outs[0]
        if (got.dtype, got.shape) != (want.dtype, want.shape):
            return f"dtype/shape {got.dtype} {got.shape}, expected {want.dtype} {want.shape}"
        return True if got.data == want.data else first_difference(got, want)
    return ctx.check(g, e, ins, outs)


def first_difference(got, want):
    a, b = got.ints(), want.ints()
    i = next(k for k in range(len(a)) if a[k] != b[k])
    return f"element {i}: 0x{a[i]:x}, expected 0x{b[i]:x}"


if __name__ == "__main__":
    sys.exit(main(sys.argv))
