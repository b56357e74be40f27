#!/usr/bin/env bash
# live-cost.sh: what the live outputs cost. vs-fio.sh's psync-pagecache case
# (4 KiB randread, psync, 1 thread, iodepth 1, buffered, a page-cached file in
# /dev/shm: it measures the tool, not storage) run side by side, alternating,
# without and with --live FILE + --metrics-listen (scraped every second by
# curl, as Prometheus would). Prints the median IOPS and IOPS per CPU-second
# of each, and their ratio (with / without; the aim is within 2%).
#
#   bench/live-cost.sh [--duration 10] [--warmup 2] [--repeat 3] [--bin PATH]
#
# CPU is volbench's runs[0].totals.cpu (the whole process, its collector and
# the metrics thread included) over the measured phase, percent of one core:
# IOPS per CPU-second = IOPS / ((usr + sys) / 100). On a busy machine compare
# the ratio, not the absolute figures. Needs cargo (unless --bin), curl and
# python3.
set -euo pipefail

die() { echo "live-cost: $*" >&2; exit 2; }

duration=10 warmup=2 repeat=3 bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    *) die "unknown option $1" ;;
  esac
done
command -v curl >/dev/null || die "curl is missing"
command -v python3 >/dev/null || die "python3 is missing"
if [ -z "$bin" ]; then
  cargo build --release --quiet
  bin="$(cd "$(dirname "$0")/.." && pwd)/target/release/volbench"
fi

work="$(mktemp -d /dev/shm/vb-live-cost.XXXXXX)"
trap 'rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

one() { # $1 = plain|live, $2 = n
  local out="$work/out-$1-$2" extra=()
  if [ "$1" = live ]; then
    extra=(--live "$work/live-$2.jsonl" --metrics-listen "127.0.0.1:$port")
    ( while sleep 1; do curl -s "http://127.0.0.1:$port/metrics" >/dev/null || true; done ) &
    scraper=$!
  fi
  "$bin" run --target "$work/t" --size 256m --buffered --engine psync --rw randread --bs 4k \
    --threads 1 --iodepth 1 --duration "$duration" --warmup "$warmup" --json -q "${extra[@]}" \
    >"$out.json" 2>/dev/null
  if [ "$1" = live ]; then kill "$scraper" 2>/dev/null || true; wait "$scraper" 2>/dev/null || true; fi
  python3 - "$out.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]["totals"]
cpu = (r["cpu"]["user_pct"] + r["cpu"]["sys_pct"]) / 100
print(r["read"]["iops"], r["read"]["iops"] / cpu if cpu > 0 else 0)
PY
}

declare -a plain live
for n in $(seq 1 "$repeat"); do
  # Alternate which goes first, so drift on the machine falls on both.
  if [ $((n % 2)) -eq 1 ]; then
    plain+=("$(one plain "$n")"); live+=("$(one live "$n")")
  else
    live+=("$(one live "$n")"); plain+=("$(one plain "$n")")
  fi
done

python3 - "${plain[*]}" "${live[*]}" <<'PY'
import statistics, sys
def split(s):
    v = list(map(float, s.split()))
    return v[0::2], v[1::2]
pi, pc = split(sys.argv[1]); li, lc = split(sys.argv[2])
m = statistics.median
print(f"{'':24} {'IOPS':>12} {'IOPS/CPU-s':>12}")
print(f"{'without live outputs':24} {m(pi):12.0f} {m(pc):12.0f}")
print(f"{'--live + --metrics-listen':24} {m(li):12.0f} {m(lc):12.0f}")
print(f"{'ratio (with / without)':24} {m(li)/m(pi):12.3f} {m(lc)/m(pc):12.3f}")
PY
