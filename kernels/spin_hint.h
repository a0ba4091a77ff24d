// SPDX-License-Identifier: Apache-2.0
// The hint a spin-wait loop gives the core on each turn: x86 PAUSE, arm64
// YIELD. Both tell the core (and an SMT sibling or the hypervisor) that the
// thread is waiting, without giving up the CPU; the ping-pong and barrier
// loops call it between looks at a shared line.
#pragma once

namespace numaprobe::kernels {

inline void SpinHint() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#else
#error "numaprobe builds for x86-64 and arm64"
#endif
}

}  // namespace numaprobe::kernels
