# SPDX-License-Identifier: Apache-2.0
# numaprobe's version, and what else `numaprobe --version` and
# numaprobe_build_info say about the build (CHANGELOG.md, "Versions"):
#
#   a release     the commit is tagged vX.Y.Z and project(VERSION) is X.Y.Z:
#                 "X.Y.Z", plain semver;
#   any other     "X.Y.Z~dev.N", X.Y.Z the next release (project(VERSION)) and
#   build         N the number of commits in the history (git rev-list --count
#                 HEAD): each commit on main sorts after the one before, and
#                 every one before the release X.Y.Z. dpkg and rpm sort "~"
#                 before anything, so apt and dnf upgrade from build to build
#                 and from the last build to the release.
#
# Image tags cannot hold "~": the image of X.Y.Z~dev.N is tagged X.Y.Z-dev.N,
# the same version in semver's spelling (deploy/container/build-image.py).
#
# Without git history (a `git archive` or GitHub tarball, which fills in
# cmake/source-version through export-subst, or a plain copy of the tree) the
# revision and a release tag come from that file. A shallow clone has history
# but not all of it: its count would be the depth. Either way a build that is
# not a release has no commit count and is "X.Y.Z~dev.0", which sorts before
# every earlier build: a package of it would look older than the one it
# replaces, and apt, dnf and image tags would silently stop upgrading. Such a
# build still builds and runs for local use, with a warning;
# NUMAPROBE_UNORDERED says why its version does not order and how to get one
# that does, and cmake/packaging.cmake refuses to make a package of it.
#
# Included once by the top-level CMakeLists.txt after project(). Sets
# NUMAPROBE_VERSION, NUMAPROBE_UNORDERED (empty when the version orders),
# NUMAPROBE_REVISION, NUMAPROBE_BRANCH, NUMAPROBE_BUILD_USER,
# NUMAPROBE_BUILD_DATE, NUMAPROBE_COMPILER, NUMAPROBE_PLATFORM. CMake re-runs
# by itself when HEAD moves, a tag is added or the history is unshallowed, so
# they never go stale.

find_package(Git QUIET)

function(_numaprobe_git out)
  execute_process(COMMAND ${GIT_EXECUTABLE} ${ARGN} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                  OUTPUT_VARIABLE value RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0)
    set(${out} "${value}" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

set(_base ${PROJECT_VERSION})
set(NUMAPROBE_REVISION unknown)
set(NUMAPROBE_BRANCH unknown)
set(_tag "")        # the release tag on this commit, if any
set(_count "")      # commits in the history
set(_last_tag "")   # the newest release tag in the history
set(_commit_time "")
set(_no_count "")   # why there is no commit count, and the fix

set(_in_git OFF)
if(GIT_EXECUTABLE)
  _numaprobe_git(_toplevel rev-parse --show-toplevel)
  if(_toplevel)
    file(REAL_PATH "${_toplevel}" _toplevel)
    file(REAL_PATH "${PROJECT_SOURCE_DIR}" _source)
    if(_toplevel STREQUAL _source)
      set(_in_git ON)
    endif()
  endif()
endif()

if(_in_git)
  _numaprobe_git(NUMAPROBE_REVISION rev-parse --short=12 HEAD)
  _numaprobe_git(NUMAPROBE_BRANCH rev-parse --abbrev-ref HEAD)
  _numaprobe_git(_tag describe --tags --exact-match --match "v[0-9]*" HEAD)
  _numaprobe_git(_last_tag describe --tags --abbrev=0 --match "v[0-9]*" HEAD)
  _numaprobe_git(_commit_time log -1 --format=%ct HEAD)
  _numaprobe_git(_shallow rev-parse --is-shallow-repository)
  if(_shallow STREQUAL "true")
    string(CONCAT _no_count "this is a shallow clone (git rev-parse --is-shallow-repository says true), "
                            "which has no commit count. Fetch the whole history with `git fetch --unshallow`, "
                            "then configure again.")
  else()
    _numaprobe_git(_count rev-list --count HEAD)
  endif()
  # Re-run CMake when HEAD moves (commit, checkout, reset: the reflog), a tag
  # is added or the history is unshallowed (`shallow` goes away), so that the
  # version is never the one of an older commit or of the shallow clone.
  _numaprobe_git(_git_dir rev-parse --absolute-git-dir)
  _numaprobe_git(_common_dir rev-parse --path-format=absolute --git-common-dir)
  foreach(f "${_git_dir}/HEAD" "${_git_dir}/logs/HEAD" "${_common_dir}/packed-refs" "${_common_dir}/refs/tags"
          "${_common_dir}/shallow")
    if(EXISTS "${f}")
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${f}")
    endif()
  endforeach()
else()
  # cmake/source-version, filled in by `git archive` (.gitattributes:
  # export-subst): "<commit> <commit time> <describe>".
  file(READ "${PROJECT_SOURCE_DIR}/cmake/source-version" _archived)
  string(STRIP "${_archived}" _archived)
  if(NOT _archived MATCHES "Format:")
    separate_arguments(_fields UNIX_COMMAND "${_archived}")
    list(GET _fields 0 _commit)
    list(GET _fields 1 _commit_time)
    string(SUBSTRING "${_commit}" 0 12 NUMAPROBE_REVISION)
    list(LENGTH _fields _n)
    if(_n GREATER 2)
      list(GET _fields 2 _describe)
      if(_describe MATCHES "^v[0-9]+\\.[0-9]+\\.[0-9]+$")
        set(_tag "${_describe}")
      endif()
    endif()
  endif()
  message(STATUS "numaprobe: no git history here; revision ${NUMAPROBE_REVISION} from cmake/source-version")
  string(CONCAT _no_count "this tree has no git history (a `git archive`, a GitHub tarball or a copy), "
                          "so no commit count. Build from a git clone with its whole history, or from a "
                          "release's (vX.Y.Z) tarball.")
endif()

set(NUMAPROBE_UNORDERED "")
if(_tag)
  string(REGEX REPLACE "^v" "" _tagged "${_tag}")
  if(NOT _tagged STREQUAL _base)
    message(FATAL_ERROR "numaprobe: this commit is tagged ${_tag} but project(VERSION) says ${_base}: "
                        "a release tag must name the version the CMakeLists.txt declares")
  endif()
  set(NUMAPROBE_VERSION "${_base}")
else()
  if(_last_tag)
    string(REGEX REPLACE "^v" "" _released "${_last_tag}")
    if(NOT _base VERSION_GREATER _released)
      message(FATAL_ERROR "numaprobe: ${_last_tag} is released but project(VERSION) is still ${_base}: "
                          "set it to the next release, so that this build sorts after ${_last_tag}")
    endif()
  endif()
  if(NOT _count)
    set(_count 0)
    if(NOT _no_count)
      set(_no_count "`git rev-list --count HEAD` gave no count. Build from a git clone with its whole history.")
    endif()
    set(NUMAPROBE_UNORDERED "version ${_base}~dev.0 does not sort after earlier builds: ${_no_count}")
    message(WARNING "numaprobe: ${NUMAPROBE_UNORDERED} This build is for local use: "
                    "making a package or image of it is refused.")
  endif()
  set(NUMAPROBE_VERSION "${_base}~dev.${_count}")
endif()

# Build date: SOURCE_DATE_EPOCH if set (reproducible builds), else the
# commit's time, so that rebuilding a commit gives the same binary; the
# configure time only where neither is known. Prometheus's format, UTC.
if(NOT DEFINED ENV{SOURCE_DATE_EPOCH} AND _commit_time)
  set(ENV{SOURCE_DATE_EPOCH} "${_commit_time}")
  string(TIMESTAMP NUMAPROBE_BUILD_DATE "%Y%m%d-%H:%M:%S" UTC)
  unset(ENV{SOURCE_DATE_EPOCH})
else()
  string(TIMESTAMP NUMAPROBE_BUILD_DATE "%Y%m%d-%H:%M:%S" UTC)
endif()

if(DEFINED ENV{USER} AND NOT "$ENV{USER}" STREQUAL "")
  set(_user "$ENV{USER}")
else()
  execute_process(COMMAND id -un OUTPUT_VARIABLE _user OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
cmake_host_system_information(RESULT _host QUERY HOSTNAME)
set(NUMAPROBE_BUILD_USER "${_user}@${_host}")

string(TOLOWER "${CMAKE_CXX_COMPILER_ID}" _compiler)
string(REPLACE "gnu" "gcc" _compiler "${_compiler}")
set(NUMAPROBE_COMPILER "${_compiler} ${CMAKE_CXX_COMPILER_VERSION}")

# Go's names, as Prometheus exporters print them.
set(_arch ${CMAKE_SYSTEM_PROCESSOR})
if(_arch STREQUAL "x86_64")
  set(_arch amd64)
elseif(_arch STREQUAL "aarch64")
  set(_arch arm64)
endif()
set(NUMAPROBE_PLATFORM "linux/${_arch}")

message(STATUS "numaprobe ${NUMAPROBE_VERSION} (branch ${NUMAPROBE_BRANCH}, revision ${NUMAPROBE_REVISION}, "
               "built ${NUMAPROBE_BUILD_DATE} by ${NUMAPROBE_BUILD_USER}, ${NUMAPROBE_COMPILER}, ${NUMAPROBE_PLATFORM})")
