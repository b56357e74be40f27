#!/usr/bin/env bash
# data-cost.sh: what --compress, --dedup, --verify and --journal cost the
# tool itself, side by side with default data: IOPS, CPU and IOPS per
# CPU-second of the same 4 KiB randrw (50% reads, psync, 1 thread) on a
# page-cached file set in /dev/shm, where the storage costs next to nothing
# and every difference is volbench's own work per I/O (copying bodies,
# stamping and hashing sectors, the block map, the journal's stores).
#
#   bench/data-cost.sh [--duration 5] [--repeat 3] [--size 256] [--bin PATH]
#
# Each configuration runs --repeat times in turn (round-robin, so a slow
# moment of the machine hits them all alike); medians are printed. CPU is
# runs[0].totals.cpu (user + sys of the whole process over the measured
# phase, percent of one core): IOPS per CPU-second = IOPS / (cpu / 100).
# --bin uses a volbench binary already built; by default it builds
# `cargo build --release`. Needs python3; no root.
set -euo pipefail

die() { echo "data-cost: $*" >&2; exit 2; }

duration=5 repeat=3 size_mib=256 bin=
while (($#)); do
  case $1 in
    --duration) duration=${2:?}; shift 2 ;;
    --repeat) repeat=${2:?}; shift 2 ;;
    --size) size_mib=${2:?}; shift 2 ;;
    --bin) bin=${2:?}; shift 2 ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
for v in "$duration" "$repeat" "$size_mib"; do
  [[ $v =~ ^[0-9]+$ ]] || die "numbers only (seconds, count, MiB): '$v'"
done
((repeat >= 1 && duration >= 1 && size_mib >= 16)) || die "need --repeat >= 1, --duration >= 1, --size >= 16"
command -v python3 >/dev/null || die "python3 not found; it parses the JSON results"
[[ -d /dev/shm ]] || die "/dev/shm is missing; it holds the page-cached file set"

repo=$(cd "$(dirname "$0")/.." && pwd)
if [[ -z $bin ]]; then
  command -v cargo >/dev/null || die "cargo not found; build volbench or pass --bin"
  (cd "$repo" && cargo build --release --quiet) || die "cargo build --release failed"
  bin=$repo/target/release/volbench
fi
[[ -x $bin ]] || die "$bin is not an executable"

work=$(mktemp -d /dev/shm/vb-data-cost.XXXXXX)
trap 'rm -rf "$work"' EXIT

configs=(
  "default|"
  "compress-2|--compress 2"
  "dedup-2|--dedup 2"
  "verify|--verify"
  "verify+journal|--verify --journal $work/JOURNAL"
)

samples=$work/samples
: >"$samples"
for ((rep = 1; rep <= repeat; rep++)); do
  for c in "${configs[@]}"; do
    name=${c%%|*} flags=${c#*|}
    # Each data format fills a set of its own (a set is reused only for
    # the data it holds); the journal is per set too.
    set_dir=$work/set-$name
    flags=${flags//JOURNAL/journal-$name}
    out=$work/out-$name-$rep.json
    # shellcheck disable=SC2086
    "$bin" run --target "$set_dir" --size "${size_mib}m" --rw randrw --bs 4k \
      --engine psync --buffered --duration "${duration}s" --warmup 1s $flags \
      --json >"$out" 2>/dev/null || die "run '$name' failed: $bin run --target $set_dir $flags"
    python3 - "$name" "$out" >>"$samples" <<'PY'
import json, sys
name, path = sys.argv[1:]
r = json.load(open(path))["runs"][0]
t, c = r["totals"], r["totals"]["cpu"]
iops = t["read"]["iops"] + t["write"]["iops"]
print(name, iops, c["user_pct"] + c["sys_pct"], r.get("data_errors", "-"))
PY
  done
done

python3 - "$samples" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, iops, cpu, errs = line.split()
    rows.setdefault(name, []).append((float(iops), float(cpu), errs))
med = lambda xs: statistics.median(xs)
base = None
print(f"{'data':<16} {'IOPS':>10} {'CPU %':>7} {'IOPS/CPU-s':>11} {'vs default':>10} {'data_errors':>11}")
for name, s in rows.items():
    iops, cpu = med([x[0] for x in s]), med([x[1] for x in s])
    per = med([x[0] / (x[1] / 100.0) for x in s if x[1] > 0])
    base = base or per
    print(f"{name:<16} {iops:>10.0f} {cpu:>7.1f} {per:>11.0f} {per / base:>10.2f} {s[-1][2]:>11}")
PY
