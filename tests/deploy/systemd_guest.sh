#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs inside the Debian 12 guest of tests/deploy/test_systemd.py, started at
# boot by numaprobe-selftest.service from the read-only second disk
# (/selftest: this script, numaprobe.deb, fast.yaml). Two boots:
#   phase1: install the .deb, start through Type=notify, scrape, hardening,
#           baseline, reload with a broken config, restart; then reboot.
#   phase2: after the reboot: enabled at boot, baseline restored, watchdog
#           restarts a SIGSTOPped daemon, `numaprobe baseline accept` reloads
#           it (docs/runbook.md), clean stop, purge; then power off.
# Each phase's files go back to the host as a base64 tar on /dev/ttyS1
# (tests/vm/vmharness.py's format); the host asserts on them. This script
# asserts nothing itself: it records.
set -u
export SYSTEMD_PAGER= SYSTEMD_COLORS=0 LC_ALL=C.UTF-8
STATE=/var/lib/numaprobe-selftest
RES=/dev/ttyS1
URL=http://127.0.0.1:10062
mkdir -p "$STATE"
phase=$(cat "$STATE/phase" 2>/dev/null || echo 1)
OUT=/run/selftest/phase$phase
mkdir -p "$OUT"

now() { date +%s.%N; }
note() { echo "$(now) $*" >>"$OUT/_log"; echo "selftest[phase$phase]: $*" >/dev/console; }
# run NAME CMD...: stdout, stderr, exit code and duration -> $OUT/NAME.{out,err,rc,seconds}
run() {
  local n=$1; shift
  local t0; t0=$(now)
  "$@" >"$OUT/$n.out" 2>"$OUT/$n.err"
  local rc=$?
  echo "$rc" >"$OUT/$n.rc"
  awk "BEGIN{print $(now) - $t0}" >"$OUT/$n.seconds"
  note "$n: exit $rc"
  return $rc
}
show() { systemctl show numaprobe.service --no-pager -p ActiveState -p SubState -p Type -p MainPID \
           -p NRestarts -p Result -p ExecMainCode -p ExecMainStatus -p UnitFileState -p WatchdogUSec; }
metrics() { curl -sS --max-time 10 "$URL/metrics"; }
# wait_for NAME SECONDS CMD...: retries CMD every second; records how long it took
wait_for() {
  local n=$1 limit=$2; shift 2
  local t0; t0=$(now)
  local i=0
  until "$@" >/dev/null 2>&1; do
    i=$((i + 1))
    if [ "$i" -ge "$limit" ]; then echo timeout >"$OUT/$n.wait"; note "$n: gave up after ${limit}s"; return 1; fi
    sleep 1
  done
  awk "BEGIN{print $(now) - $t0}" >"$OUT/$n.wait"
  note "$n: after $(cat "$OUT/$n.wait")s"
}
has_metric() { metrics | grep -q "$1"; }
main_pid() { systemctl show -p MainPID --value numaprobe.service; }
pid_changed_and_active() {
  local p; p=$(main_pid)
  [ "$p" != 0 ] && [ "$p" != "$1" ] && [ "$(systemctl is-active numaprobe.service)" = active ] \
    && curl -sf --max-time 5 "$URL/-/healthy" >/dev/null
}
cursor() { journalctl --show-cursor -n 0 -o cat 2>/dev/null | sed -n 's/^-- cursor: //p'; }
journal_since() { journalctl --no-pager -o short-monotonic -u numaprobe.service --after-cursor="$1"; }
send() {
  stty -F "$RES" raw -echo 2>/dev/null
  { echo "===NUMAPROBE-RESULT-BEGIN phase$phase==="; tar -C "$OUT" -cf - . | base64; \
    echo "===NUMAPROBE-RESULT-END phase$phase==="; } >"$RES"
}

note "phase $phase, kernel $(uname -r), $(nproc) CPUs, uptime $(cut -d' ' -f1 /proc/uptime)s"
systemd-analyze time >"$OUT/boot_time.txt" 2>&1
systemd-analyze blame --no-pager 2>&1 | head -15 >"$OUT/boot_blame.txt"

if [ "$phase" = 1 ]; then
  # --- install: postinst enables and starts the unit ------------------------------
  run dpkg_install dpkg -i /selftest/numaprobe.deb
  run enabled_after_install systemctl is-enabled numaprobe.service
  wait_for active_after_install 60 systemctl is-active numaprobe.service
  show >"$OUT/show_after_install.txt"
  dpkg-query -W -f='${Conffiles}\n' numaprobe >"$OUT/conffiles.txt"
  # No conffiles: postinst made the /etc files from the package's templates.
  run etc_config cmp /usr/share/numaprobe/numaprobe.yaml /etc/numaprobe/numaprobe.yaml
  run etc_default cmp /usr/share/numaprobe/default /etc/default/numaprobe
  # Fast probes for the rest of the test (the packaged config probes every 5 min).
  run stop_packaged systemctl stop numaprobe.service
  cp /selftest/fast.yaml /etc/numaprobe/numaprobe.yaml

  # --- start: Type=notify, so `systemctl start` returns once READY=1 came ------
  c=$(cursor)
  run start systemctl start numaprobe.service
  show >"$OUT/show_after_start.txt"
  curl -sS --max-time 10 -o "$OUT/healthy_at_start.txt" -w '%{http_code}' "$URL/-/healthy" >"$OUT/healthy_at_start.code"
  metrics >"$OUT/metrics_at_start.txt"
  pid=$(main_pid)
  cat "/proc/$pid/status" >"$OUT/proc_status.txt"
  ps -o user=,uid=,gid=,cmd= -p "$pid" >"$OUT/ps.txt"
  ls -ld /var/lib/numaprobe /var/lib/private/numaprobe >"$OUT/state_dirs.txt" 2>&1
  run security systemd-analyze security --no-pager numaprobe.service
  journal_since "$c" >"$OUT/journal_start.txt"

  # --- baseline -------------------------------------------------------------
  wait_for baseline 300 has_metric '^numaprobe_baseline_complete 1'
  metrics >"$OUT/metrics_baseline.txt"

  # --- reload with a broken config ------------------------------------------
  cp /etc/numaprobe/numaprobe.yaml "$STATE/good.yaml"
  echo "schedule_typo: 1" >>/etc/numaprobe/numaprobe.yaml
  c=$(cursor)
  run reload_broken systemctl reload numaprobe.service
  show >"$OUT/show_after_broken_reload.txt"
  # SIGHUP straight to the daemon, past ExecReload's check: it must keep its config.
  run hup_broken systemctl kill -s HUP --kill-who=main numaprobe.service
  wait_for reload_metric_0 60 has_metric '^numaprobe_config_last_reload_successful 0'
  show >"$OUT/show_after_broken_hup.txt"
  metrics >"$OUT/metrics_after_broken_reload.txt"
  journal_since "$c" >"$OUT/journal_broken_reload.txt"
  cp "$STATE/good.yaml" /etc/numaprobe/numaprobe.yaml
  run reload_good systemctl reload numaprobe.service
  wait_for reload_metric_1 60 has_metric '^numaprobe_config_last_reload_successful 1'

  # --- restart keeps the baseline ---------------------------------------------
  c=$(cursor)
  run restart systemctl restart numaprobe.service
  show >"$OUT/show_after_restart.txt"
  metrics >"$OUT/metrics_after_restart.txt"
  journal_since "$c" >"$OUT/journal_restart.txt"

  echo 2 >"$STATE/phase"
  sync
  send
  note "rebooting"
  systemctl reboot
  sleep infinity
fi

# --- phase 2: after the reboot ---------------------------------------------------
wait_for active_at_boot 120 systemctl is-active numaprobe.service
show >"$OUT/show_at_boot.txt"
wait_for healthy_at_boot 60 curl -sf --max-time 5 "$URL/-/healthy"
metrics >"$OUT/metrics_at_boot.txt"
journalctl --no-pager -o short-monotonic -b -u numaprobe.service >"$OUT/journal_boot.txt"

# --- the watchdog restarts a hung daemon ------------------------------------------
# The shipped WatchdogSec=60s is asserted from phase 1; a runtime drop-in
# shortens it here, so the guest waits 20 s for the watchdog rather than 60 s
# (the mechanism is the same). It is removed again before stop and purge.
DROPIN=/run/systemd/system/numaprobe.service.d
mkdir -p "$DROPIN" && printf '[Service]\nWatchdogSec=20s\n' >"$DROPIN/50-test-watchdog.conf"
systemctl daemon-reload
run restart_short_watchdog systemctl restart numaprobe.service
wait_for healthy_short_watchdog 60 curl -sf --max-time 5 "$URL/-/healthy"
pid=$(main_pid)
echo "$pid" >"$OUT/hung_pid.txt"
c=$(cursor)
t0=$(now)
kill -STOP "$pid"
wait_for watchdog_restart 200 pid_changed_and_active "$pid"
awk "BEGIN{print $(now) - $t0}" >"$OUT/watchdog_seconds.txt"
show >"$OUT/show_after_watchdog.txt"
journal_since "$c" >"$OUT/journal_watchdog.txt"
metrics >"$OUT/metrics_after_watchdog.txt"
rm -r "$DROPIN"
systemctl daemon-reload

# --- docs/runbook.md's systemd procedure: accept reloads the daemon itself ------
wait_for healthy_before_accept 60 curl -sf --max-time 5 "$URL/-/healthy"
c=$(cursor)
run baseline_accept numaprobe baseline accept
wait_for accepted 60 has_metric '^numaprobe_baseline_info{.*origin="accepted"'
journal_since "$c" >"$OUT/journal_accept.txt"

# --- stop ----------------------------------------------------------------------------
c=$(cursor)
run stop systemctl stop numaprobe.service
show >"$OUT/show_after_stop.txt"
journal_since "$c" >"$OUT/journal_stop.txt"

# --- purge: nothing of the package is left ------------------------------------------
# Remove, then purge, each timed: the maintainer scripts run under emulation.
run remove dpkg --remove numaprobe
run purge dpkg --purge numaprobe
for p in /usr/bin/numaprobe /lib/systemd/system/numaprobe.service /etc/numaprobe \
         /etc/default/numaprobe /var/lib/numaprobe /var/lib/private/numaprobe \
         /etc/systemd/system/multi-user.target.wants/numaprobe.service \
         /var/lib/systemd/deb-systemd-helper-enabled/numaprobe.service.dsh-also; do
  [ -e "$p" ] || [ -L "$p" ] && echo "$p"
done >"$OUT/left_after_purge.txt"
systemctl show numaprobe.service -p LoadState --value >"$OUT/loadstate_after_purge.txt" 2>&1

send
echo "===NUMAPROBE-GUEST-DONE===" >"$RES"
sync
note "powering off"
systemctl poweroff
sleep infinity
