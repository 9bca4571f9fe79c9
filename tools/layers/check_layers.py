#!/usr/bin/env python3
"""Checks that the layers include only what lies below them (run by ctest).

src/float (formats, rounding, exact arithmetic) is the bottom; src/math (transcendentals) builds
on it; src/ref (the reference executor) on both and on the graph (src/core). An include that runs
back up, e.g. src/float including math/ or ref/, fails with the file, line and include named.
The Python binding (python/src) may include only the public headers (maroon/*.h).
"""
import os, re, sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# For each layer, the project headers it may include (prefixes of the include path).
allowed = {
    "src/float": ("float/", "maroon/dtype.h", "maroon/round.h"),
    "src/math": ("math/", "float/", "maroon/dtype.h", "maroon/round.h"),
    "src/ref": ("ref/", "math/", "float/", "core/", "maroon/"),
    # The Python binding is a client of the public API only (its own files aside).
    "python/src": ("maroon/",),
}
bad = []
for layer, ok in allowed.items():
    for dirpath, _, files in os.walk(os.path.join(root, layer)):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            for n, line in enumerate(open(path, encoding="utf-8"), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if m and not m.group(1).startswith(ok) and not os.path.exists(os.path.join(dirpath, m.group(1))):
                    bad.append(f"{os.path.relpath(path, root)}:{n}: includes \"{m.group(1)}\"; {layer} may include only {', '.join(ok)}")
print("\n".join(bad) if bad else "layers: src/float < src/math < src/ref, no include runs back up")
sys.exit(1 if bad else 0)
