#!/usr/bin/env bash
# capture-cost.sh: what `volbench capture` costs the host it watches. It
# runs a capture of every busy device and NFS mount (the widest it reads)
# for --duration at --interval, and prints its CPU time (user + system,
# from /proc/PID/stat, read just before it exits) as a percentage of one
# core over the wall time. The target is at most 1% at a 1 s interval.
#
#   bench/capture-cost.sh [--duration 60] [--interval 1s] [--bin target/release/volbench]
set -euo pipefail

die() { echo "capture-cost: $*" >&2; exit 2; }

duration=60 interval=1s bin=target/release/volbench
while (($#)); do
  case $1 in
    --duration) duration=${2:?}; shift 2 ;;
    --interval) interval=${2:?}; shift 2 ;;
    --bin) bin=${2:?}; shift 2 ;;
    *) die "unknown option $1" ;;
  esac
done
[[ -x $bin ]] || die "$bin not built (cargo build --release)"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
tck=$(getconf CLK_TCK)
start=$(date +%s.%N)
"$bin" capture --duration "${duration}s" --interval "$interval" -o "$out/p.json" >/dev/null 2>"$out/err" &
pid=$!
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
awk -v t="$ticks" -v hz="$tck" -v s="$start" -v e="$end" -v i="$interval" -v d="$duration" 'BEGIN {
  wall = e - s; cpu = t / hz;
  printf "capture --duration %ss --interval %s: %.2f s CPU in %.1f s wall = %.2f%% of one core\n", d, i, cpu, wall, 100 * cpu / wall
}'
