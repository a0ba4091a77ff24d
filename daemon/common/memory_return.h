// SPDX-License-Identifier: Apache-2.0
// Handing freed heap memory back to the kernel after a spike: parsing a large
// state or config file, thousands of connections closed. glibc keeps freed
// memory in its arenas for reuse, so without this the resident size stays at
// its peak for the rest of the run (measured in docs/security.md, "Memory").
#pragma once

namespace numaprobe::daemon {

// malloc_trim(0): returns the free pages of every arena (glibc). Costs a walk
// of the heap, a millisecond or so for the daemon's; call it after a spike,
// not on a hot path.
void ReturnFreedMemory();

}  // namespace numaprobe::daemon
