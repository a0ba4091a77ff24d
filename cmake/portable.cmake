# SPDX-License-Identifier: Apache-2.0
# The portable numaprobe binary (NUMAPROBE_PORTABLE, on in the release and
# release-aarch64 presets): the one build per architecture that the .deb, the
# release tarball, the RPM and the container image all ship. It loads nothing
# from the host but the GNU C library (libc, libm, the loader), and needs no
# glibc symbol newer than GLIBC_2.34, so the same file runs on Debian 12 and
# later, Ubuntu 22.04 and later, EL9 and Amazon Linux 2023, on x86-64 and arm64
# (tests/deploy/test_portable.py checks both; deploy/README.md says why).
#
# Everything else is linked statically, from Debian 12:
#   - the static archives the -dev packages ship: libnuma.a, libhwloc.a,
#     libyaml-cpp.a, libssl.a + libcrypto.a, libz.a, libcrypt.a;
#   - prometheus-cpp (core), spdlog and fmt, which Debian ships only as shared
#     objects: compiled here from their Debian 12 source packages
#     (.ci/portable-sources unpacks them; the same versions as the -dev
#     packages), as static libraries under the same target names;
#   - GCC's libstdc++ (-static-libstdc++): the hosts' C++ libraries are older
#     than GCC 12's (EL9 has GCC 11's).
# From the host: libc, libm and the loader (GLIBC_2.34 at most), and GCC's
# unwinder libgcc_s.so.1, which every glibc system installs with the C library
# (glibc itself loads it for thread cancellation; Debian's libc6 depends on
# libgcc-s1). The static libgcc_eh of GCC 12 would need glibc 2.35
# (_dl_find_object). Two calls that came with glibc 2.36, arc4random and
# arc4random_buf (libstdc++'s random_device, libxcrypt's salts), are routed to
# cmake/portable/glibc_2_34.cc (getrandom(2), as glibc 2.36 does it).
# Why not shared libraries from the host: their sonames differ between
# distributions (libcrypt.so.1 / .so.2, libyaml-cpp 0.6 / 0.7, spdlog, fmt)
# or are not installed (prometheus-cpp is in no EL9 repository).
#
# Debian's libhwloc.a refers to libudev, which Debian ships only shared:
# cmake/portable/hwloc_without_udev.cc answers for it (hwloc uses udev only for
# block-device names, which numaprobe never asks for).
#
# Only the numaprobe executable is linked this way; test programs link the
# same static archives but the host's libstdc++.
#
# Included by the top-level CMakeLists.txt in two steps around its
# find_package() calls: numaprobe_portable_dependencies() before them,
# numaprobe_portable_link() once the numaprobe target exists.

set(NUMAPROBE_PORTABLE_SOURCES "$ENV{NUMAPROBE_PORTABLE_SOURCES}" CACHE PATH
    "Debian source packages of prometheus-cpp, spdlog and fmtlib (.ci/portable-sources)")
if(NOT NUMAPROBE_PORTABLE_SOURCES)
  set(NUMAPROBE_PORTABLE_SOURCES "$ENV{HOME}/.cache/numaprobe-src" CACHE PATH "" FORCE)
endif()

macro(numaprobe_portable_dependencies)
  foreach(src prometheus-cpp spdlog fmtlib)
    if(NOT EXISTS "${NUMAPROBE_PORTABLE_SOURCES}/${src}/CMakeLists.txt")
      message(FATAL_ERROR "numaprobe: the portable build needs the Debian source of ${src} in "
                          "${NUMAPROBE_PORTABLE_SOURCES}: run .ci/portable-sources (.ci/install-deps runs it)")
    endif()
  endforeach()
  # Third-party code: built as it is, file by file, no warnings of ours, and
  # none of its install rules in our packages (EXCLUDE_FROM_ALL).
  set(_numaprobe_unity ${CMAKE_UNITY_BUILD})
  set(CMAKE_UNITY_BUILD OFF)
  set(BUILD_SHARED_LIBS OFF)
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  set(FMT_INSTALL OFF CACHE BOOL "" FORCE)
  set(FMT_TEST OFF CACHE BOOL "" FORCE)
  set(FMT_DOC OFF CACHE BOOL "" FORCE)
  add_subdirectory("${NUMAPROBE_PORTABLE_SOURCES}/fmtlib" "${PROJECT_BINARY_DIR}/portable/fmtlib" EXCLUDE_FROM_ALL)
  set(SPDLOG_FMT_EXTERNAL ON CACHE BOOL "" FORCE)
  set(SPDLOG_INSTALL OFF CACHE BOOL "" FORCE)
  set(SPDLOG_BUILD_EXAMPLE OFF CACHE BOOL "" FORCE)
  add_subdirectory("${NUMAPROBE_PORTABLE_SOURCES}/spdlog" "${PROJECT_BINARY_DIR}/portable/spdlog" EXCLUDE_FROM_ALL)
  foreach(option ENABLE_PULL ENABLE_PUSH ENABLE_COMPRESSION ENABLE_TESTING GENERATE_PKGCONFIG)
    set(${option} OFF CACHE BOOL "" FORCE)
  endforeach()
  add_subdirectory("${NUMAPROBE_PORTABLE_SOURCES}/prometheus-cpp" "${PROJECT_BINARY_DIR}/portable/prometheus-cpp"
                   EXCLUDE_FROM_ALL)
  set(CMAKE_UNITY_BUILD ${_numaprobe_unity})
  unset(BUILD_SHARED_LIBS)
  unset(CMAKE_POSITION_INDEPENDENT_CODE)
  # The rest from the -dev packages' static archives: FindOpenSSL and FindZLIB
  # have switches; find_library() and pkg-config's libraries are found as .a
  # while the suffix list says so (numaprobe_portable_link() restores it).
  set(OPENSSL_USE_STATIC_LIBS TRUE)
  set(ZLIB_USE_STATIC_LIBS ON)
  set(_numaprobe_suffixes ${CMAKE_FIND_LIBRARY_SUFFIXES})
  set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
endmacro()

# Points an imported library target found by find_package() at its static
# archive, next to the shared object it named.
function(_numaprobe_use_static_archive target)
  get_target_property(configs ${target} IMPORTED_CONFIGURATIONS)
  foreach(config "" ${configs})
    set(suffix "")
    if(config)
      set(suffix "_${config}")
    endif()
    get_target_property(location ${target} IMPORTED_LOCATION${suffix})
    if(location)
      get_filename_component(dir "${location}" DIRECTORY)
      string(REGEX REPLACE "\\.so.*$" ".a" archive "${location}")
      if(NOT EXISTS "${archive}")
        message(FATAL_ERROR "numaprobe: no static archive ${archive} beside ${location}")
      endif()
      set_target_properties(${target} PROPERTIES IMPORTED_LOCATION${suffix} "${archive}")
      set_property(TARGET ${target} PROPERTY IMPORTED_SONAME${suffix})
    endif()
  endforeach()
endfunction()

macro(numaprobe_portable_link)
  set(CMAKE_FIND_LIBRARY_SUFFIXES ${_numaprobe_suffixes})
  foreach(lib NUMA_LIBRARY CRYPT_LIBRARY)
    if(NOT ${lib} MATCHES "\\.a$")
      message(FATAL_ERROR "numaprobe: ${lib} is ${${lib}}, not a static archive")
    endif()
  endforeach()
  _numaprobe_use_static_archive(yaml-cpp)
  set(_numaprobe_yaml_target yaml-cpp)
  # hwloc: the archive pkg-config's -lhwloc found, and its Libs.private
  # (libm, pthread; libudev answered by the stub).
  get_target_property(_hwloc PkgConfig::HWLOC INTERFACE_LINK_LIBRARIES)
  if(NOT _hwloc MATCHES "libhwloc\\.a")
    message(FATAL_ERROR "numaprobe: hwloc resolved to ${_hwloc}, not libhwloc.a")
  endif()
  add_library(numaprobe_hwloc_without_udev STATIC ${PROJECT_SOURCE_DIR}/cmake/portable/hwloc_without_udev.cc)
  set_property(TARGET PkgConfig::HWLOC APPEND PROPERTY INTERFACE_LINK_LIBRARIES numaprobe_hwloc_without_udev m)
endmacro()

# The executable that ships: the C++ runtime linked in, glibc 2.36's
# arc4random answered by getrandom(2).
function(numaprobe_portable_executable target)
  # Objects, not an archive: libstdc++ and libcrypt, which call them, come
  # after every archive of ours on the link line.
  add_library(numaprobe_glibc_2_34 OBJECT ${PROJECT_SOURCE_DIR}/cmake/portable/glibc_2_34.cc)
  target_link_libraries(${target} PRIVATE numaprobe_glibc_2_34)
  target_link_options(${target} PRIVATE -static-libstdc++ "LINKER:--wrap=arc4random,--wrap=arc4random_buf")
endfunction()

# The Debian source packages compiled into the portable binary, for the
# packages' Static-Built-Using field (Debian policy 7.8) and through it the
# RPM's bundled() Provides and the image's SBOM: "numactl (= 2.0.16-1), ...".
# From what the link uses: each static archive's and each header-only
# library's owning package (dpkg, or the arm64 tree's owners list from
# .ci/arm64-sysroot), the sources compiled here (.ci/portable-sources'
# versions file), and libstdc++.a's compiler package.
function(_numaprobe_source_of path out)
  if(CMAKE_CROSSCOMPILING)
    string(FIND "${path}" "${NUMAPROBE_TARGET_SYSROOT}/" at)
    if(at EQUAL 0)
      string(LENGTH "${NUMAPROBE_TARGET_SYSROOT}" n)
      string(SUBSTRING "${path}" ${n} -1 rel)
      if(NOT DEFINED _NUMAPROBE_OWNERS)
        file(READ "${NUMAPROBE_TARGET_SYSROOT}/owners" _NUMAPROBE_OWNERS)
        set(_NUMAPROBE_OWNERS "\n${_NUMAPROBE_OWNERS}" PARENT_SCOPE)
        set(_NUMAPROBE_OWNERS "\n${_NUMAPROBE_OWNERS}")
      endif()
      string(FIND "${_NUMAPROBE_OWNERS}" "\n${rel}\t" at)
      if(at LESS 0)
        message(FATAL_ERROR "numaprobe: ${rel} is in none of the arm64 packages (${NUMAPROBE_TARGET_SYSROOT}/owners)")
      endif()
      string(SUBSTRING "${_NUMAPROBE_OWNERS}" ${at} 400 line)
      string(REGEX MATCH "\t([^\n]+)" _ "${line}")
      set(${out} "${CMAKE_MATCH_1}" PARENT_SCOPE)
      return()
    endif()
  endif()
  execute_process(COMMAND dpkg-query -S "${path}" OUTPUT_VARIABLE owner RESULT_VARIABLE rc ERROR_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "numaprobe: no installed package owns ${path} (dpkg-query -S)")
  endif()
  string(REGEX MATCH "^[^:, ]+(:[a-z0-9]+)?" package "${owner}")
  execute_process(COMMAND dpkg-query -W "-f=\${source:Package} (= \${source:Version})" "${package}"
                  OUTPUT_VARIABLE source RESULT_VARIABLE rc ERROR_QUIET)
  # A cross compiler's package (gcc-12-cross) is built from the compiler's
  # own source, which its Built-Using names: that is what is linked in.
  if(source MATCHES "^[^ ]+-cross ")
    execute_process(COMMAND dpkg-query -W "-f=\${Built-Using}" "${package}" OUTPUT_VARIABLE source)
    string(REGEX MATCH "gcc-[0-9]+ \\(= [^)]+\\)" source "${source}")
  endif()
  if(NOT rc EQUAL 0 OR NOT source)
    message(FATAL_ERROR "numaprobe: dpkg-query cannot name the source package of ${package}")
  endif()
  set(${out} "${source}" PARENT_SCOPE)
endfunction()

function(numaprobe_static_built_using out)
  get_target_property(configs ${_numaprobe_yaml_target} IMPORTED_CONFIGURATIONS)
  list(GET configs 0 config)
  get_target_property(yaml ${_numaprobe_yaml_target} IMPORTED_LOCATION_${config})
  string(REGEX MATCH "[^;]*libhwloc\\.a" hwloc "${_hwloc}")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.a OUTPUT_VARIABLE libstdcxx
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(paths ${NUMA_LIBRARY} ${CRYPT_LIBRARY} ${OPENSSL_SSL_LIBRARY} ${OPENSSL_CRYPTO_LIBRARY} ${ZLIB_LIBRARY_RELEASE}
            ${yaml} ${hwloc} ${libstdcxx} ${Boost_INCLUDE_DIR}/boost/version.hpp ${CLI11_DIR}/CLI11Config.cmake
            ${nlohmann_json_DIR}/nlohmann_jsonConfig.cmake)
  set(sources "")
  foreach(path IN LISTS paths)
    file(REAL_PATH "${path}" real)
    _numaprobe_source_of("${real}" source)
    list(APPEND sources "${source}")
  endforeach()
  file(STRINGS "${NUMAPROBE_PORTABLE_SOURCES}/versions" built_here)
  foreach(line IN LISTS built_here)
    string(REGEX REPLACE "^([^ ]+) (.+)$" "\\1 (= \\2)" line "${line}")
    list(APPEND sources "${line}")
  endforeach()
  list(REMOVE_DUPLICATES sources)
  list(SORT sources)
  list(JOIN sources ", " joined)
  set(${out} "${joined}" PARENT_SCOPE)
endfunction()
