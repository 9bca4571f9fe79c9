# Highway where Debian ships no libhwy for the target (riscv64 in Debian 12): Debian's
# architecture-independent Highway headers (libhwy-dev, found in /usr/include, which Debian's
# cross compilers search last) compiled for the static target only, so every HWY_DYNAMIC_DISPATCH
# is a direct call, plus the few library functions the engine calls (src/hwy_runtime/runtime.cpp,
# the same file the Python wheel links: it reports the static target here, as nothing else is
# compiled).
# Used by tools/determinism/matrix.py with -Dhwy_DIR=<this directory>.
if(NOT TARGET hwy::hwy)
  add_library(maroon_hwy_static STATIC ${CMAKE_CURRENT_LIST_DIR}/../../../../src/hwy_runtime/runtime.cpp)
  target_compile_definitions(maroon_hwy_static PUBLIC HWY_COMPILE_ONLY_STATIC=1)
  add_library(hwy::hwy ALIAS maroon_hwy_static)
endif()
set(hwy_FOUND TRUE)
