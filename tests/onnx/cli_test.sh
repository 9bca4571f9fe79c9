#!/usr/bin/env bash
# `maroon onnx run`: its inference digest is the spec's tensor-list digest (docs/spec-model.md),
# recomputed here independently in Python from the test data's expected output (a case Maroon
# matches bit for bit), the same from .npy and .pb inputs and on 1 or 2 threads; bad input exits 2
# naming the fault. usage: cli_test.sh MAROON DATA_DIR PYTHON
set -euo pipefail
maroon=$1 data=$2 py=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case=$data/node/test_conv_with_strides_padding
set0=$case/test_data_set_0
fail() { echo "FAIL: $*"; exit 1; }

want=$("$py" - "$set0/output_0.pb" <<'PY'
import hashlib, struct, sys
import onnx
from onnx import numpy_helper
t = numpy_helper.to_array(onnx.load_tensor(sys.argv[1]))
u64 = lambda n: struct.pack("<Q", n)
name = str(t.dtype).encode()
rec = u64(len(name)) + name + u64(t.ndim) + b"".join(u64(d) for d in t.shape) + u64(t.nbytes) + t.tobytes()
print(hashlib.sha256(b"maroon-inference/1\0" + u64(1) + rec).hexdigest())
PY
)
got=$("$maroon" -q onnx run "$case/model.onnx" -i "$set0/input_0.pb" -i W="$set0/input_1.pb" --threads 1 | awk '/inference digest/ {print $3}')
[ "$got" = "$want" ] || fail "digest $got, the spec's digest of the expected output is $want"

"$py" - "$set0" "$tmp" <<'PY'
import sys, numpy as np, onnx
from onnx import numpy_helper
for i in (0, 1):
    np.save(f"{sys.argv[2]}/in{i}.npy", numpy_helper.to_array(onnx.load_tensor(f"{sys.argv[1]}/input_{i}.pb")))
PY
got2=$("$maroon" -q --json onnx run "$case/model.onnx" -i "$tmp/in0.npy" -i "$tmp/in1.npy" --threads 2 |
  "$py" -c 'import json,sys; print(json.load(sys.stdin)["inference_digest"])')
[ "$got2" = "$want" ] || fail "from .npy on 2 threads: $got2, expected $want"

# --repeat: every run gives the first's digest, the third and fourth replayed.
"$maroon" -q --json onnx run "$case/model.onnx" -i "$tmp/in0.npy" -i "$tmp/in1.npy" --repeat 4 |
  "$py" -c 'import json,sys; j=json.load(sys.stdin); assert (j["inference_digest"], j["runs"], j["replays"]) == (sys.argv[1], 4, 2), j' "$want" ||
  fail "--repeat 4: not the expected digest, runs and replays"

# --fused: the products as REDUCE_MULACC, said in the result, the same digest on 1 and 2 threads.
fused1=$("$maroon" -q --json onnx run "$case/model.onnx" -i "$tmp/in0.npy" -i "$tmp/in1.npy" --fused --threads 1)
fused2=$("$maroon" -q --json onnx run "$case/model.onnx" -i "$tmp/in0.npy" -i "$tmp/in1.npy" --fused --threads 2 --repeat 3)
"$py" -c 'import json,sys; a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert a["products"] == b["products"] == "fused" and a["inference_digest"] == b["inference_digest"], (a, b)' \
  "$fused1" "$fused2" || fail "--fused: not fused, or other digests on 1 and 2 threads"
"$maroon" -q --json onnx run "$case/model.onnx" -i "$tmp/in0.npy" -i "$tmp/in1.npy" |
  "$py" -c 'import json,sys; assert json.load(sys.stdin)["products"] == "unfused"' || fail "default products not unfused"

# Bad input: exit 2 and a message naming the fault.
expect_error() {  # PATTERN ARGS...
  local pattern=$1; shift
  set +e; out=$("$maroon" -q onnx "$@" 2>&1); rc=$?; set -e
  [ "$rc" = 2 ] || fail "maroon onnx $* exited $rc, expected 2: $out"
  grep -q -- "$pattern" <<<"$out" || fail "maroon onnx $*: no '$pattern' in: $out"
}
head -c 100 "$case/model.onnx" > "$tmp/truncated.onnx"
expect_error "malformed or truncated" run "$tmp/truncated.onnx"
expect_error "input 'W' is missing" run "$case/model.onnx" -i "$set0/input_0.pb"
expect_error "dimension 2 must be 7" run "$case/model.onnx" -i "$set0/input_1.pb" -i W="$set0/input_1.pb"
expect_error "takes only 2 input" run "$case/model.onnx" -i "$set0/input_0.pb" -i "$set0/input_1.pb" -i "$set0/input_1.pb"
expect_error "expected a .npy file" run "$case/model.onnx" -i "$case/model.onnx"
expect_error "not in range" run "$case/model.onnx" -i "$set0/input_0.pb" -i W="$set0/input_1.pb" --repeat 0
expect_error "operator Bernoulli is not supported" info "$data/node/test_bernoulli/model.onnx"
"$maroon" -q onnx info "$case/model.onnx" | grep -q "input     W  float32 (1,1,3,3)" || fail "onnx info"
echo "maroon onnx: digest $got matches the spec's digest of the expected output; errors named"
