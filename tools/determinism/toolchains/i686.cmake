# Cross build for i686 with Debian's i686-linux-gnu toolchain (tools/determinism/matrix.py).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR i686)
set(CMAKE_C_COMPILER i686-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER i686-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE i386-linux-gnu)
# pkg-config (FindOpenSSL, FindPkgConfig) must read the target's .pc files, not the host's:
# otherwise it hands the x86-64 libraries of /usr/lib/x86_64-linux-gnu to the cross link.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/i386-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
