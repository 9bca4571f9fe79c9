#!/usr/bin/env python3
"""Checks that docs/spec.md gives every op of the op table its meaning (run by ctest): each op
name in include/maroon/ops.def must appear in the spec as a word. A new op whose bits the spec
does not define fails here, named."""
import os, re, sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ops = re.findall(r"^OP\(([A-Z0-9_]+)", open(os.path.join(root, "include", "maroon", "ops.def")).read(), re.M)
spec = open(os.path.join(root, "docs", "spec.md")).read()
missing = [op for op in ops if not re.search(r"(?<![A-Z0-9_])" + op + r"(?![A-Z0-9_])", spec)]
for op in missing:
    print(f"docs/spec.md does not define {op} (include/maroon/ops.def has it)")
if not ops:
    sys.exit("no OP( rows found in include/maroon/ops.def")
print(f"docs/spec.md names all {len(ops)} ops" if not missing else "")
sys.exit(1 if missing else 0)
