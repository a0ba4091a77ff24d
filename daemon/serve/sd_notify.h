// SPDX-License-Identifier: Apache-2.0
// systemd's notify protocol without libsystemd: one datagram per message to
// $NOTIFY_SOCKET (after systemd's notify-selfcontained-example.c). Every call
// is a no-op when the variable is unset (plain shell, containers).
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace numaprobe::daemon {

// Sends e.g. "READY=1", "STOPPING=1", "WATCHDOG=1", "STATUS=...". Returns false
// only if a socket was configured and sending failed.
bool SdNotify(std::string_view message);

// Half of $WATCHDOG_USEC (how often to send WATCHDOG=1), if the watchdog is
// enabled for this process.
std::optional<std::chrono::milliseconds> SdWatchdogInterval();

}  // namespace numaprobe::daemon
