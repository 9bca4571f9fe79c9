"""Builds the `maroon._maroon` extension with CMake; the metadata is in pyproject.toml.

From an sdist or a clean checkout the extension is built in setuptools' temporary directory with
only the library and the binding (no tests, benchmarks, tools, GTest or MPFR) and Highway's
runtime linked statically, so the wheel needs no shared library beyond libc, libm, libgcc and
libstdc++. Settings (environment):
  MAROON_BUILD_DIR  reuse this CMake build directory (relative to the source root), as
                    tools/build.sh does with ./build: when it is configured, it is used as it is
                    (not reconfigured) and the extension, already built there, is only copied
  MAROON_BUILD_JOBS parallel compile jobs (default: all cores)
  MAROON_CMAKE_ARGS extra CMake arguments, split on spaces (e.g. -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
"""
import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def pybind11_args():
    """Where pybind11's CMake package is: the pybind11 Python package's (a build requirement),
    else CMake's own search (Debian's pybind11-dev)."""
    try:
        import pybind11
        return [f"-Dpybind11_DIR={pybind11.get_cmake_dir()}"]
    except ImportError:
        return []


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        # The base interpreter (Debian's python3 behind a venv), as tools/build.sh configures
        # ./build with it, so reusing that directory does not reconfigure it.
        python = getattr(sys, "_base_executable", sys.executable)
        args = [f"-DPython_EXECUTABLE={python}", "-DMAROON_BUILD_PYTHON=ON"]
        reuse = os.environ.get("MAROON_BUILD_DIR")
        if reuse:
            build = (ROOT / reuse).resolve()
            args += [f"-DMAROON_PYTHON={python}"]
        else:
            build = pathlib.Path(self.build_temp).resolve() / "cmake"
            args += ["-DCMAKE_BUILD_TYPE=Release", "-DMAROON_HWY=bundled", "-DMAROON_BUILD_TESTS=OFF",
                     "-DMAROON_BUILD_BENCH=OFF", "-DMAROON_BUILD_TOOLS=OFF", "-DMAROON_BUILD_CLI=OFF",
                     "-DMAROON_INSTALL=OFF", "-DMAROON_OPENSSL=OFF", "-DMAROON_MPI=OFF",
                     "-DMAROON_ONNX=OFF"]
        args += pybind11_args() + os.environ.get("MAROON_CMAKE_ARGS", "").split()
        # A build directory to reuse is taken as configured: passing our cache values again
        # (this interpreter's resolved path /usr/bin/python3.11, the pybind11 package's CMake
        # directory instead of pybind11-dev's) would change the extension's compile commands and
        # make ninja rebuild all of it, about 150 CPU seconds in tools/build.sh for nothing.
        configured = (build / "CMakeCache.txt").exists()
        if not (reuse and configured):
            generator = ["-G", "Ninja"] if shutil.which("ninja") and not configured else []
            subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build)] + generator + args,
                                  stdout=subprocess.DEVNULL)
        jobs = os.environ.get("MAROON_BUILD_JOBS", str(os.cpu_count() or 1))
        subprocess.check_call(["cmake", "--build", str(build), "--target", "_maroon", "-j", jobs])
        built = next((build / "python").glob("_maroon*.so"))
        dest = pathlib.Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(built, dest)


setup(
    ext_modules=[Extension("maroon._maroon", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own scratch space, away from CMake's ./build (.gitignore: /build*/).
    options={"build": {"build_base": "build-python"}},
)
