# SPDX-License-Identifier: Apache-2.0
# CPACK_PRE_BUILD_SCRIPTS of cmake/packaging.cmake: runs in CPack on the staged
# package tree, before dpkg-deb packs it. Debian policy wants manual pages and
# changelogs gzip'd with -9n (no name, no timestamp: reproducible).
set(root "${CPACK_TEMPORARY_DIRECTORY}")
if(NOT IS_DIRECTORY "${root}/usr/bin")
  message(FATAL_ERROR "packaging-prebuild: no staged usr/bin under ${root}")
endif()
find_program(GZIP gzip REQUIRED)

# The configuration files are the operator's, not dpkg's: the package ships
# them as templates in /usr/share/numaprobe, and postinst copies each to /etc
# only where none exists. An upgrade then never asks about them (a conffile
# changed in the package and edited on the host makes dpkg ask, and an
# unattended upgrade stop) and never replaces an edit; purge removes them.
file(MAKE_DIRECTORY "${root}/usr/share/numaprobe")
foreach(pair "etc/numaprobe/numaprobe.yaml:numaprobe.yaml" "etc/default/numaprobe:default")
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 from)
  list(GET pair 1 to)
  if(NOT EXISTS "${root}/${from}")
    message(FATAL_ERROR "packaging-prebuild: no staged ${from}")
  endif()
  file(RENAME "${root}/${from}" "${root}/usr/share/numaprobe/${to}")
endforeach()
file(REMOVE_RECURSE "${root}/etc")

file(GLOB_RECURSE manpages "${root}/usr/share/man/*.[1-9]")
foreach(page IN LISTS manpages)
  execute_process(COMMAND ${GZIP} -9nf "${page}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip ${page} failed")
  endif()
endforeach()

# A native package's changelog (policy 12.7). The project keeps its history
# in git; this names the revision the package was built from.
set(docdir "${root}/usr/share/doc/${CPACK_PACKAGE_NAME}")
file(MAKE_DIRECTORY "${docdir}")
file(WRITE "${docdir}/changelog"
"${CPACK_PACKAGE_NAME} (${CPACK_PACKAGE_VERSION}) unstable; urgency=medium

  * Built with CPack from revision ${CPACK_NUMAPROBE_REVISION}; the changes
    are in the project's git history.

 -- ${CPACK_PACKAGE_CONTACT}  ${CPACK_NUMAPROBE_DATE}
")
execute_process(COMMAND ${GZIP} -9nf "${docdir}/changelog" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip changelog failed")
endif()

# Cross builds (cmake/packaging.cmake): the target's shlibs files, where
# dpkg-shlibdeps looks for local ones. CPack runs it in this directory and
# removes debian/ afterwards, so nothing of it is packaged.
if(CPACK_NUMAPROBE_SHLIBS_LOCAL)
  file(MAKE_DIRECTORY "${root}/debian")
  file(COPY_FILE "${CPACK_NUMAPROBE_SHLIBS_LOCAL}" "${root}/debian/shlibs.local")
endif()
