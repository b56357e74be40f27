#!/usr/bin/env bash
# capture-cost.sh: what `volbench capture` costs the host it watches. It
# runs a capture of every busy device and NFS mount (the widest it reads)
# for --duration at --interval, and prints its CPU time (user + system,
# from /proc/PID/stat, read just before it exits) as a percentage of one
# core over the wall time. The target is at most 1% at a 1 s interval.
#
#   bench/capture-cost.sh [--duration 60] [--interval 1s] [--bin target/release/volbench]
#
# --trace IOPS measures `capture --trace` instead: the script makes its own
# loop device on a sparse file in a temporary directory (root), runs fio on
# it (4 KiB random 70/30, direct, IOPS in all) for --duration, and traces
# that device for the same time plus a second. The figure is volbench's own
# CPU (reading trace_pipe, writing the trace); the tracepoints' cost in the
# kernel is charged to fio, whose requests they fire in.
set -euo pipefail

die() { echo "capture-cost: $*" >&2; exit 2; }

duration=60 interval=1s bin=target/release/volbench trace=
while (($#)); do
  case $1 in
    --duration) duration=${2:?}; shift 2 ;;
    --interval) interval=${2:?}; shift 2 ;;
    --bin) bin=${2:?}; shift 2 ;;
    --trace) trace=${2:?}; shift 2 ;;
    *) die "unknown option $1" ;;
  esac
done
[[ -x $bin ]] || die "$bin not built (cargo build --release)"
out=$(mktemp -d)
loopdev=
trap '[[ -z $loopdev ]] || losetup -d "$loopdev"; rm -rf "$out"' EXIT
tck=$(getconf CLK_TCK)
if [[ -n $trace ]]; then
  command -v fio >/dev/null || die "--trace needs fio"
  truncate -s 256M "$out/disk"
  loopdev=$(losetup -f --show "$out/disk") || die "--trace needs root and a free loop device"
  read_iops=$(( trace * 7 / 10 ))
  start=$(date +%s.%N)
  "$bin" capture --trace --device "$loopdev" --duration "$((duration + 1))s" -o "$out/t.csv" >"$out/summary" 2>"$out/err" &
  pid=$!
  fio --name=load --filename="$loopdev" --rw=randrw --rwmixread=70 --bs=4k --direct=1 \
    --ioengine=libaio --iodepth=4 --rate_iops="$read_iops,$(( trace - read_iops ))" \
    --time_based --runtime="$duration" >/dev/null 2>&1 &
  fio_pid=$!
else
  start=$(date +%s.%N)
  "$bin" capture --duration "${duration}s" --interval "$interval" -o "$out/p.json" >/dev/null 2>"$out/err" &
  pid=$!
fi
ticks=0
# Sample the process's own CPU counters until it exits; the last reading is
# at most 0.2 s before its end, when it only writes the profile.
while kill -0 "$pid" 2>/dev/null; do
  if stat=$(cat "/proc/$pid/stat" 2>/dev/null); then
    rest=${stat##*) }
    read -r -a f <<<"$rest"
    ticks=$(( f[11] + f[12] ))
  fi
  sleep 0.2
done
wait "$pid" || die "capture failed: $(cat "$out/err")"
end=$(date +%s.%N)
if [[ -n $trace ]]; then
  wait "$fio_pid" || die "fio failed"
  cat "$out/summary"
  interval="trace@${trace}IOPS"
fi
awk -v t="$ticks" -v hz="$tck" -v s="$start" -v e="$end" -v i="$interval" -v d="$duration" 'BEGIN {
  wall = e - s; cpu = t / hz;
  printf "capture --duration %ss --interval %s: %.2f s CPU in %.1f s wall = %.2f%% of one core\n", d, i, cpu, wall, 100 * cpu / wall
}'
