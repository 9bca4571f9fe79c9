"""A pytest plugin (`-p maroon_shim`) that makes `from tinygrad import Tensor, dtypes` give
Maroon's: it imports the real tinygrad package (its Device, helpers and renderers stay, for the
tests' skip conditions) and replaces just those two names before any test module is collected.
No tinygrad file is edited. Used by run_test_ops.sh; without MAROON_SHIM=1 it does nothing, so
the same command measures tinygrad itself."""
import os

if os.environ.get("MAROON_SHIM") == "1":
  import tinygrad
  import tinygrad.tensor
  import maroon
  # tinygrad's own runtime imports `dtypes` from the package lazily: load the device (and its
  # renderer, which test_ops.py inspects) first, so only the test module sees Maroon's names.
  tinygrad.Device[tinygrad.Device.DEFAULT].renderer
  tinygrad.Tensor = maroon.Tensor
  tinygrad.dtypes = maroon.dtypes
