// SPDX-License-Identifier: Apache-2.0
// Byte sizes the tests size buffers and expectations in. One definition for
// every test file: a unity build (the sanitizer presets) compiles several test
// files as one, where file-local copies would collide.
#pragma once

#include <cstddef>

namespace numaprobe {

inline constexpr std::size_t kMiB = std::size_t{1} << 20;

}  // namespace numaprobe
