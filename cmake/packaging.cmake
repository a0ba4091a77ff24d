# SPDX-License-Identifier: Apache-2.0
# Debian package (.deb) of numaprobe, built by CPack over the project's install
# rules: `cpack -G DEB` in a build tree configured with CMAKE_INSTALL_PREFIX=/usr
# (the release preset). Layout and maintainer scripts: deploy/README.md
# ("Debian package"); tests/deploy/test_package.py (ctest label `package`)
# builds, lints, installs, runs and purges it.
#
# Included once from the top-level CMakeLists.txt after the install rules.
# Sets NUMAPROBE_DEB (ON when a .deb can be built from this tree).

set(NUMAPROBE_DEB OFF)
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  # The unit and /etc files are installed only with prefix /usr (see
  # CMakeLists.txt); a package built from another prefix would lack them.
  message(STATUS "numaprobe: no .deb from this tree (CMAKE_INSTALL_PREFIX is "
                 "${CMAKE_INSTALL_PREFIX}; the release preset configures /usr)")
  return()
endif()
set(NUMAPROBE_DEB ON)

# Files only the package carries (a plain `cmake --install` gets them too,
# which is harmless): the copyright file, NOTICE (the statically linked
# components) and the configuration reference. The changelog and the
# compressed man page are made in the staging tree by packaging-prebuild.cmake,
# which also moves the /etc files to /usr/share/numaprobe: postinst makes
# /etc's from them once and never touches them again (deploy/debian/postinst).
install(FILES ${PROJECT_SOURCE_DIR}/deploy/debian/copyright ${PROJECT_SOURCE_DIR}/NOTICE
              ${PROJECT_SOURCE_DIR}/docs/numaprobe.reference.yaml
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
# Why lintian's embedded-library and unknown-field tags do not apply here.
install(FILES ${PROJECT_SOURCE_DIR}/deploy/debian/lintian-overrides
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides RENAME numaprobe)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME numaprobe)
set(CPACK_PACKAGE_VERSION ${NUMAPROBE_VERSION})
set(CPACK_PACKAGE_VENDOR "numaprobe")
set(CPACK_PACKAGE_CONTACT "numaprobe maintainers <maintainers@users.noreply.a-seed-09499fa7.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "NUMA memory latency and bandwidth exporter for Prometheus")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# /etc and /lib/systemd are absolute install destinations: stage them under
# DESTDIR instead of writing to the build machine's /etc.
set(CPACK_SET_DESTDIR ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/package)
set(CPACK_OUTPUT_CONFIG_FILE ${PROJECT_BINARY_DIR}/CPackConfig.cmake)
set(CPACK_SOURCE_OUTPUT_CONFIG_FILE ${PROJECT_BINARY_DIR}/CPackSourceConfig.cmake)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # numaprobe_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The project's address is written once, as `homepage:` in the monitoring
# mixin's _config, where the alerts' runbook links are built from it.
file(STRINGS ${PROJECT_SOURCE_DIR}/grafana/config.libsonnet _homepage REGEX "^ *homepage: '[^']+',$")
string(REGEX REPLACE "^ *homepage: '([^']+)',$" "\\1" _homepage "${_homepage}")
if(NOT _homepage MATCHES "^https://[^ ;]+$")
  message(FATAL_ERROR "grafana/config.libsonnet: no `homepage: 'https://...',` line")
endif()
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${_homepage}")
# Depends: derived from the binary's shared libraries by dpkg-shlibdeps
# (libnuma1, libhwloc15, libssl3, zlib1g, ...; Boost.Asio and Beast are
# header-only, compiled in); nothing is listed by hand.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(CMAKE_CROSSCOMPILING)
  # A cross build's libraries are not dpkg-installed on this machine: the
  # toolchain file says where they are and where their packages' shlibs files
  # are (packaging-prebuild.cmake hands those to dpkg-shlibdeps as
  # debian/shlibs.local), and names the Debian architecture.
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${NUMAPROBE_DEB_ARCHITECTURE})
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${NUMAPROBE_DEB_LIBRARY_DIRS})
  set(CPACK_NUMAPROBE_SHLIBS_LOCAL ${NUMAPROBE_DEB_SHLIBS})
endif()
# The extended description; CPack puts the summary above it as the synopsis.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
"numaprobe measures, continuously and at a small duty cycle, the memory
latency and bandwidth between every CPU node and every memory node of a
NUMA machine, and the core-to-core latency, and publishes the figures and
their drift from a recorded baseline as Prometheus metrics on port 10062.
.
The package installs the daemon, a hardened systemd unit (Type=notify,
watchdog, DynamicUser), its configuration in /etc/numaprobe and the
numaprobe(8) manual page.")
# Maintainer scripts: systemd enable/start/stop as dh_installsystemd writes
# them; the /etc files made on first install; purge removes them and the
# state directory. No conffiles: see packaging-prebuild.cmake.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${PROJECT_SOURCE_DIR}/deploy/debian/postinst
  ${PROJECT_SOURCE_DIR}/deploy/debian/prerm
  ${PROJECT_SOURCE_DIR}/deploy/debian/postrm)
# Keep the scripts' modes (0755) and conffiles' (0644) as Debian policy wants.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_CURRENT_LIST_DIR}/packaging-prebuild.cmake)
# The portable binary's statically linked sources (cmake/portable.cmake), as
# the Static-Built-Using field, which CPack cannot write: added to the built
# .deb by packaging-postbuild.cmake.
if(NUMAPROBE_PORTABLE)
  numaprobe_static_built_using(CPACK_NUMAPROBE_STATIC_BUILT_USING)
  set(CPACK_POST_BUILD_SCRIPTS ${CMAKE_CURRENT_LIST_DIR}/packaging-postbuild.cmake)
endif()
# Read by packaging-prebuild.cmake (CPack passes CPACK_* variables through).
set(CPACK_NUMAPROBE_REVISION ${NUMAPROBE_REVISION})
# The changelog's date: the commit's, so rebuilding a revision gives the same file.
execute_process(COMMAND git log -1 --format=%cD
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE CPACK_NUMAPROBE_DATE
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT CPACK_NUMAPROBE_DATE)
  string(TIMESTAMP CPACK_NUMAPROBE_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
endif()
set(CPACK_NUMAPROBE_SOURCE_DIR ${PROJECT_SOURCE_DIR})

# A build whose version does not order (cmake/version.cmake: a shallow clone,
# or no git history, and not a release) makes no package: cpack, `package`
# and `package_source` stop with the reason and the fix before anything is
# installed or compiled: CPack reads CPACK_PROJECT_CONFIG_FILE first, for
# every generator, and this one is written here, so it cannot be missing (CPack
# ignores a missing one). The .deb is what the tarball, the RPM and the image
# are made from, and those scripts refuse such a version too.
if(NUMAPROBE_UNORDERED)
  set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/CPackRefusal.cmake)
  file(WRITE ${CPACK_PROJECT_CONFIG_FILE}
       "message(FATAL_ERROR [==[numaprobe: no package of this build: ${NUMAPROBE_UNORDERED}]==])\n")
  set(CMAKE_SKIP_PACKAGE_ALL_DEPENDENCY ON)
else()
  file(REMOVE ${PROJECT_BINARY_DIR}/CPackRefusal.cmake)  # of a configure before `git fetch --unshallow`
endif()

include(CPack)
