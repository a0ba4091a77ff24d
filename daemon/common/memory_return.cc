// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/memory_return.h"

#include <malloc.h>

namespace numaprobe::daemon {

void ReturnFreedMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace numaprobe::daemon
