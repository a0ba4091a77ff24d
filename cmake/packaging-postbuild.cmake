# SPDX-License-Identifier: Apache-2.0
# CPACK_POST_BUILD_SCRIPTS of cmake/packaging.cmake: adds the Static-Built-Using
# field (Debian policy 7.8: the source packages compiled into the binary,
# cmake/portable.cmake) to the .deb CPack made, which CPack has no variable for.
# Unpacked with its control files and packed again by dpkg-deb, owned by root:
# the files, their modes and md5sums stay as they were.
find_program(DPKG_DEB dpkg-deb REQUIRED)
foreach(deb IN LISTS CPACK_PACKAGE_FILES)
  if(NOT deb MATCHES "\\.deb$")
    continue()
  endif()
  set(tree "${deb}.tree")
  file(REMOVE_RECURSE "${tree}")
  execute_process(COMMAND ${DPKG_DEB} -R "${deb}" "${tree}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "packaging-postbuild: dpkg-deb -R ${deb} failed")
  endif()
  file(READ "${tree}/DEBIAN/control" control)
  string(REGEX REPLACE "\nStatic-Built-Using: [^\n]*" "" control "${control}")
  string(REPLACE "\nDescription:" "\nStatic-Built-Using: ${CPACK_NUMAPROBE_STATIC_BUILT_USING}\nDescription:"
         control "${control}")
  file(WRITE "${tree}/DEBIAN/control" "${control}")
  execute_process(COMMAND ${DPKG_DEB} --root-owner-group -b "${tree}" "${deb}" RESULT_VARIABLE rc OUTPUT_QUIET)
  file(REMOVE_RECURSE "${tree}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "packaging-postbuild: dpkg-deb -b ${deb} failed")
  endif()
endforeach()
