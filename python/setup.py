"""Builds the `_maroon` extension with the repository's CMake build (../build) and installs the
`maroon` package. Offline: pip install --no-build-isolation --no-index ./python"""
import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent.parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        # ./build, as tools/build.sh makes it; MAROON_BUILD_DIR names another one (relative to
        # the repository root, since pip runs this from python/).
        build = (ROOT / os.environ.get("MAROON_BUILD_DIR", "build")).resolve()
        # The base interpreter (Debian's python3), not the venv's alias of it: the same value
        # tools/build.sh configures with, so the build directory is not reconfigured.
        python = getattr(sys, "_base_executable", sys.executable)
        subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja",
                               "-DCMAKE_BUILD_TYPE=Release", f"-DPython_EXECUTABLE={python}",
                               f"-DMAROON_PYTHON={python}", "-DMAROON_BUILD_PYTHON=ON"],
                              stdout=subprocess.DEVNULL)
        subprocess.check_call(["cmake", "--build", str(build), "--target", "_maroon",
                               "-j", str(os.cpu_count() or 1)])
        built = next((build / "python").glob("_maroon*.so"))
        dest = pathlib.Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(built, dest)


setup(
    name="maroon",
    version="0.1.0",
    description="Deterministic tensors and autodiff: tinygrad's API, the same bits on every machine",
    packages=["maroon", "maroon.nn"],
    ext_modules=[Extension("maroon._maroon", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.11",
)
