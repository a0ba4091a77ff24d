// SPDX-License-Identifier: Apache-2.0
// arm64: which inner loops this CPU runs (the choice for the architecture,
// made once here; kernels/CMakeLists.txt builds this file for aarch64 only).
// NEON (Advanced SIMD) is part of every arm64 CPU Linux runs on; SVE is
// optional (Graviton 3/4, Grace, A64FX have it; Graviton 2 and Ampere Altra
// do not) and announced by the kernel in the auxiliary vector.
#include <sys/auxv.h>

#include "kernels/bandwidth.h"
#include "kernels/bandwidth_loops.h"
#include "kernels/bandwidth_paced.h"

namespace numaprobe::kernels {

Isa ResolveIsa(Isa requested) {
  if (requested == Isa::kSve && (getauxval(AT_HWCAP) & HWCAP_SVE) != 0) return Isa::kSve;
  return Isa::kNeon;
}

const BandwidthLoops& LoopsFor(Isa isa) { return isa == Isa::kSve ? kSveLoops : kNeonLoops; }

}  // namespace numaprobe::kernels
