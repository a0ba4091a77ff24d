// SPDX-License-Identifier: Apache-2.0
// Whether the kernel under the test answers the NUMA memory-policy system
// calls. qemu-user, which runs the arm64 cross build's unit tests on the build
// machine, implements none of mbind, move_pages and get_mempolicy (ENOSYS):
// tests that bind and verify memory skip there, saying so, and run in the
// arm64 VM guest instead (tests/vm/test_vm_numa.py, GUEST_UNIT_TESTS), where
// a skip fails the test.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include <gtest/gtest.h>

namespace numaprobe::kernels {

inline bool NumaSyscallsImplemented() {
  int mode = 0;
  return syscall(SYS_get_mempolicy, &mode, nullptr, 0ul, nullptr, 0ul) == 0 || errno != ENOSYS;
}

}  // namespace numaprobe::kernels

#define NUMAPROBE_SKIP_WITHOUT_NUMA_SYSCALLS()                                                      \
  if (!::numaprobe::kernels::NumaSyscallsImplemented())                                             \
  GTEST_SKIP() << "this kernel (or emulator: qemu-user) does not implement the NUMA system calls; " \
                  "the arm64 VM suite runs this test on a real kernel"
