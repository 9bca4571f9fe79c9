# Cross build for aarch64 with Debian's aarch64-linux-gnu toolchain (tools/determinism/matrix.py).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# pkg-config (FindOpenSSL, FindPkgConfig) must read the target's .pc files, not the host's:
# otherwise it hands the x86-64 libraries of /usr/lib/x86_64-linux-gnu to the cross link.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
