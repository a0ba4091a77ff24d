// SPDX-License-Identifier: Apache-2.0
// The five libudev functions Debian's static libhwloc.a refers to, for the
// portable build (cmake/portable.cmake), which links nothing from the host
// but the C library: Debian ships no static libudev.
//
// hwloc uses libudev only to name and describe block devices when I/O
// discovery is on (hwloc_topology_set_io_types_filter); numaprobe never turns
// it on. udev_new() returning no context is a case hwloc handles (it then
// reads sysfs alone, as in a container without udev), so the others are never
// reached; they fail safe all the same.
#include <cstddef>

extern "C" {
struct udev;
struct udev_device;

udev* udev_new(void) { return nullptr; }
udev* udev_unref(udev*) { return nullptr; }
udev_device* udev_device_new_from_subsystem_sysname(udev*, const char*, const char*) { return nullptr; }
udev_device* udev_device_unref(udev_device*) { return nullptr; }
const char* udev_device_get_property_value(udev_device*, const char*) { return nullptr; }
}
