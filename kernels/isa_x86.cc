// SPDX-License-Identifier: Apache-2.0
// x86-64: which inner loops this CPU runs (the choice for the architecture,
// made once here; kernels/CMakeLists.txt builds this file for x86-64 only).
#include "kernels/bandwidth.h"
#include "kernels/bandwidth_loops.h"
#include "kernels/bandwidth_paced.h"

namespace numaprobe::kernels {

Isa ResolveIsa(Isa requested) {
  if (requested == Isa::kAvx512 && __builtin_cpu_supports("avx512f")) return Isa::kAvx512;
  if (requested != Isa::kSse2 && __builtin_cpu_supports("avx2")) return Isa::kAvx2;
  return Isa::kSse2;
}

const BandwidthLoops& LoopsFor(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return kAvx512Loops;
    case Isa::kAvx2:
      return kAvx2Loops;
    default:
      return kSse2Loops;
  }
}

}  // namespace numaprobe::kernels
