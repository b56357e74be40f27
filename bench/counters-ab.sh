#!/usr/bin/env bash
# counters-ab.sh: what reading the client counters costs. The same volbench
# runs alternately without counters (A: VOLBENCH_NO_COUNTERS=1) and with
# them (B: the default), and the medians of IOPS and IOPS per CPU-second
# (volbench's whole process, collector thread included) are printed side by
# side with their ratio B / A. Counters are read once per interval by the
# collector; the ratios should be 1.00 within the run-to-run noise.
#
#   sudo bench/counters-ab.sh [--duration 5] [--warmup 1] [--repeat 5] [--interval 1s]
#                             [--cases psync-pagecache,uring-direct]
#
# Cases:
#   psync-pagecache  4 KiB randread, psync, 1 thread, buffered, a file in
#                    /dev/shm: CPU-bound, so any CPU the collector takes shows
#   uring-direct     4 KiB randread, io_uring, iodepth 32, direct, a loop
#                    device over a 256 MiB image in $AB_DIR (default /var/tmp)
# --interval 100ms reads the counters ten times as often as the default.
set -euo pipefail

die() { echo "counters-ab: $*" >&2; exit 2; }

duration=5 warmup=1 repeat=5 interval=1s
cases=psync-pagecache,uring-direct
while (($#)); do
  case $1 in
    --duration) duration=${2:?}; shift 2 ;;
    --warmup) warmup=${2:?}; shift 2 ;;
    --repeat) repeat=${2:?}; shift 2 ;;
    --interval) interval=${2:?}; shift 2 ;;
    --cases) cases=${2:?}; shift 2 ;;
    -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
for v in "$duration" "$warmup" "$repeat"; do
  [[ $v =~ ^[0-9]+$ ]] || die "numbers only (seconds, count): '$v'"
done
((repeat >= 1 && duration >= 1)) || die "need --repeat >= 1, --duration >= 1"
[[ $(id -u) == 0 ]] || die "must run as root: it attaches a loop device (try: sudo $0)"
command -v python3 >/dev/null || die "python3 not found; it parses the JSON results"

repo=$(cd "$(dirname "$0")/.." && pwd)
echo "counters-ab: building volbench (release)" >&2
(cd "$repo" && cargo build --release --quiet) || die "cargo build --release failed"
volbench=${CARGO_TARGET_DIR:-$repo/target}/release/volbench
[[ -x $volbench ]] || die "no binary at $volbench"

work=$(mktemp -d "${AB_DIR:-/var/tmp}/counters-ab.XXXXXX")
shm=$(mktemp -d /dev/shm/counters-ab.XXXXXX)
loopdev=""
cleanup() {
  [[ -n $loopdev ]] && losetup -d "$loopdev" 2>/dev/null
  rm -rf "$work" "$shm"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ ,$cases, == *,uring-direct,* ]]; then
  head -c $((256 << 20)) /dev/urandom >"$work/volume.img"
  sync "$work/volume.img"
  loopdev=$(losetup -f --show --direct-io=on "$work/volume.img")
fi

case_args() {
  case $1 in
    psync-pagecache) echo "--target $shm/set --size 256M --rw randread --bs 4k --engine psync --iodepth 1 --buffered" ;;
    uring-direct) echo "--target $loopdev --rw randread --bs 4k --engine io_uring --iodepth 32 --allow-overwrite" ;;
    *) die "unknown case '$1'" ;;
  esac
}

# "iops cpu_pct" of one result.
extract() {
  python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
c = r["totals"]["cpu"]
print(r["totals"]["read"]["iops"], c["user_pct"] + c["sys_pct"])' "$1"
}

printf '%-16s %12s %12s %6s   %14s %14s %6s\n' case "IOPS A" "IOPS B" "B/A" "IOPS/CPU-s A" "IOPS/CPU-s B" "B/A"
IFS=, read -ra list <<<"$cases"
for c in "${list[@]}"; do
  read -ra args <<<"$(case_args "$c")"
  a=() b=()
  for ((i = 0; i < repeat; i++)); do
    # Alternate which side goes first, so drift over time hits both alike.
    for side in $( ((i % 2)) && echo "B A" || echo "A B"); do
      out="$work/$c-$side-$i.json"
      if [[ $side == A ]]; then
        VOLBENCH_NO_COUNTERS=1 "$volbench" run "${args[@]}" --threads 1 --duration "${duration}s" \
          --warmup "${warmup}s" --interval "$interval" --json >"$out" 2>/dev/null
        a+=("$(extract "$out")")
      else
        "$volbench" run "${args[@]}" --threads 1 --duration "${duration}s" \
          --warmup "${warmup}s" --interval "$interval" --json >"$out" 2>/dev/null
        b+=("$(extract "$out")")
      fi
    done
  done
  python3 - "$c" "${#a[@]}" "${a[@]}" "${b[@]}" <<'PY'
import statistics as st, sys
name, n = sys.argv[1], int(sys.argv[2])
rows = [tuple(map(float, x.split())) for x in sys.argv[3:]]
a, b = rows[:n], rows[n:]
med = lambda xs: st.median(xs)
ia, ib = med([x[0] for x in a]), med([x[0] for x in b])
ca = med([x[0] / (x[1] / 100) for x in a if x[1] > 0])
cb = med([x[0] / (x[1] / 100) for x in b if x[1] > 0])
print(f"{name:<16} {ia:12,.0f} {ib:12,.0f} {ib/ia:6.3f}   {ca:14,.0f} {cb:14,.0f} {cb/ca:6.3f}")
PY
done
