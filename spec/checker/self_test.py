"""The checker has teeth: flips one bit of one stored output (and updates the file's SHA-256 in a
copy of the manifest, so only the recomputation and the content name can notice) and expects
check_vectors.py to fail naming that vector. usage: self_test.py VECTORS_DIR"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

from tensors import load_safetensors

VICTIM = "ADD/float16/up"


def main(root):
    with tempfile.TemporaryDirectory() as tmp:
        for f in os.listdir(root):
            shutil.copy(os.path.join(root, f), tmp)
        manifest = json.load(open(os.path.join(tmp, "manifest.json")))
        entry = next(e for e in manifest["vectors"] if e["id"] == VICTIM)
        file, name = entry["outputs"][0].split(":", 1)
        path = os.path.join(tmp, file)
        blob = bytearray(open(path, "rb").read())
        header_len = int.from_bytes(blob[:8], "little")
        begin = json.loads(blob[8:8 + header_len])[name]["data_offsets"][0]
        blob[8 + header_len + begin] ^= 1
        open(path, "wb").write(blob)
        manifest["files"][file] = hashlib.sha256(blob).hexdigest()
        json.dump(manifest, open(os.path.join(tmp, "manifest.json"), "w"))
        assert load_safetensors(path)[name].data != load_safetensors(os.path.join(root, file))[name].data
        r = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "check_vectors.py"), tmp],
                           capture_output=True, text=True)
        caught = r.returncode == 1 and f"FAIL {VICTIM}:" in r.stdout and "is not its content's digest" in r.stdout
        print(("caught" if caught else "MISSED") + f": one flipped bit in the output of {VICTIM}")
        return 0 if caught else 1


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main(sys.argv[1]))
