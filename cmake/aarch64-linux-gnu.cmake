# SPDX-License-Identifier: Apache-2.0
# Cross-compiling numaprobe for arm64 on an x86-64 Debian 12 machine (the
# release-aarch64 preset): Debian's g++-aarch64-linux-gnu, the arm64 libraries
# unpacked by .ci/arm64-sysroot, and qemu-aarch64 to run the unit tests.
#
# The compiler keeps its own C library (/usr/aarch64-linux-gnu); the unpacked
# tree is searched for everything else, first for headers, libraries, CMake
# package files and pkg-config files, and is where qemu-aarch64 finds the
# loader and shared libraries at run time.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

if(NOT NUMAPROBE_TARGET_SYSROOT)
  if(DEFINED ENV{NUMAPROBE_ARM64_SYSROOT})  # as in .ci/arm64-sysroot
    set(NUMAPROBE_TARGET_SYSROOT "$ENV{NUMAPROBE_ARM64_SYSROOT}")
  else()
    set(NUMAPROBE_TARGET_SYSROOT "$ENV{HOME}/.cache/numaprobe-arm64/sysroot")
  endif()
endif()
set(NUMAPROBE_TARGET_SYSROOT "${NUMAPROBE_TARGET_SYSROOT}" CACHE PATH "arm64 libraries (.ci/arm64-sysroot)")
if(NOT EXISTS "${NUMAPROBE_TARGET_SYSROOT}/usr/include/numa.h")
  message(FATAL_ERROR "No arm64 libraries in ${NUMAPROBE_TARGET_SYSROOT}: run .ci/install-deps "
                      "(or .ci/arm64-sysroot), or set NUMAPROBE_ARM64_SYSROOT")
endif()
# try_compile projects re-read this file; they need the same directory.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES NUMAPROBE_TARGET_SYSROOT)

set(CMAKE_FIND_ROOT_PATH "${NUMAPROBE_TARGET_SYSROOT}" /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# pkg-config (hwloc): only the arm64 .pc files, their paths prefixed with the tree.
set(ENV{PKG_CONFIG_LIBDIR}
    "${NUMAPROBE_TARGET_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${NUMAPROBE_TARGET_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${NUMAPROBE_TARGET_SYSROOT}")
set(ENV{PKG_CONFIG_PATH} "")

# Debian keeps architecture-specific headers (hwloc/autogen/config.h,
# openssl/opensslconf.h) in /usr/include/aarch64-linux-gnu, a directory the
# compiler searches by itself only in its own tree.
set(CMAKE_C_STANDARD_INCLUDE_DIRECTORIES "${NUMAPROBE_TARGET_SYSROOT}/usr/include/aarch64-linux-gnu")
set(CMAKE_CXX_STANDARD_INCLUDE_DIRECTORIES "${NUMAPROBE_TARGET_SYSROOT}/usr/include/aarch64-linux-gnu")

# Libraries the linked ones need in turn (libhwloc -> libudev, ...) are found
# at link time in the tree.
foreach(dir lib/aarch64-linux-gnu usr/lib/aarch64-linux-gnu)
  string(APPEND CMAKE_EXE_LINKER_FLAGS_INIT " -Wl,-rpath-link,${NUMAPROBE_TARGET_SYSROOT}/${dir}")
  string(APPEND CMAKE_SHARED_LINKER_FLAGS_INIT " -Wl,-rpath-link,${NUMAPROBE_TARGET_SYSROOT}/${dir}")
endforeach()

# ctest runs the test programs (and gtest_discover_tests lists them) under
# qemu-user, with the tree as the root it loads libraries from. `-cpu max`
# has SVE and LSE, so the SVE loops are tested too.
find_program(NUMAPROBE_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(NUMAPROBE_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${NUMAPROBE_QEMU_AARCH64};-cpu;max;-L;${NUMAPROBE_TARGET_SYSROOT}")
endif()

# GNUInstallDirs picks Debian's multiarch lib/<triplet> only for native
# builds; the arm64 package puts its private libraries where an arm64 Debian
# would (tests/deploy/test_package.py checks the layout).
set(CMAKE_INSTALL_LIBDIR lib/aarch64-linux-gnu CACHE PATH "Object code libraries (lib/aarch64-linux-gnu)")

# The .deb (cmake/packaging.cmake): Debian's name for the architecture, and
# what dpkg-shlibdeps needs to derive Depends for libraries dpkg does not know
# on this machine: where they are, and their packages' shlibs files.
set(NUMAPROBE_DEB_ARCHITECTURE arm64)
set(NUMAPROBE_DEB_LIBRARY_DIRS "${NUMAPROBE_TARGET_SYSROOT}/lib/aarch64-linux-gnu"
                               "${NUMAPROBE_TARGET_SYSROOT}/usr/lib/aarch64-linux-gnu")
set(NUMAPROBE_DEB_SHLIBS "${NUMAPROBE_TARGET_SYSROOT}/shlibs")
