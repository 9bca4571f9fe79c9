# Cross build for riscv64 with Debian's riscv64-linux-gnu toolchain (tools/determinism/matrix.py).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR riscv64)
set(CMAKE_C_COMPILER riscv64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER riscv64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE riscv64-linux-gnu)
# pkg-config (FindOpenSSL, FindPkgConfig) must read the target's .pc files, not the host's:
# otherwise it hands the x86-64 libraries of /usr/lib/x86_64-linux-gnu to the cross link.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/riscv64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
