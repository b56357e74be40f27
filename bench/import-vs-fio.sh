#!/usr/bin/env bash
# import-vs-fio.sh: one fio job file run by fio itself and by volbench
# (`volbench fio JOB`, the importer's translation), side by side on the same
# target, alternating which goes first; prints each tool's IOPS and the
# ratio volbench / fio (the importer's target: within 3%).
#
#   bench/import-vs-fio.sh [--duration 5] [--repeat 3] [--size 256] [--job FILE]
#
# The default job is a 4 KiB random read, psync, iodepth 1, buffered, on a
# page-cached directory in /dev/shm with random_distribution=zoned:80/20:20/80
# (so the importer's skew is exercised too). With --job, the file must name
# its own directory= (volbench writes its own file set there; fio its own
# files); it runs as written, with --norandommap --randrepeat=0 added for fio
# (volbench draws offsets with replacement, as fio then does).
# Needs fio (apt-get install fio), cargo and python3.
set -euo pipefail

die() { echo "import-vs-fio: $*" >&2; exit 2; }

duration=5 repeat=3 size_mib=256 job=""
while (($#)); do
  case $1 in
    --duration) duration=${2:?}; shift 2 ;;
    --repeat) repeat=${2:?}; shift 2 ;;
    --size) size_mib=${2:?}; shift 2 ;;
    --job) job=${2:?}; shift 2 ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
for v in "$duration" "$repeat" "$size_mib"; do
  [[ $v =~ ^[0-9]+$ ]] || die "numbers only (seconds, count, MiB): '$v'"
done
((repeat >= 1 && duration >= 1 && size_mib >= 16)) || die "need --repeat >= 1, --duration >= 1, --size >= 16"
command -v fio >/dev/null || die "fio not found (Debian: apt-get install fio)"
command -v python3 >/dev/null || die "python3 not found; it parses the JSON results"

repo=$(cd "$(dirname "$0")/.." && pwd)
echo "import-vs-fio: building volbench (release)" >&2
(cd "$repo" && cargo build --release --quiet) || die "cargo build --release failed"
volbench=${CARGO_TARGET_DIR:-$repo/target}/release/volbench

work=$(mktemp -d /dev/shm/import-vs-fio.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
if [[ -z $job ]]; then
  job=$work/job.fio
  cat >"$job" <<JOB
[global]
directory=$work/data
size=${size_mib}m
time_based
runtime=$duration
ramp_time=1
ioengine=psync
direct=0
[randread]
rw=randread
bs=4k
iodepth=1
random_distribution=zoned:80/20:20/80
JOB
  mkdir -p "$work/data"
fi
[[ -f $job ]] || die "no job file $job"

echo "import-vs-fio: the import" >&2
"$volbench" import fio "$job" >&2 || die "volbench cannot import $job"

iops() { # tool file
  python3 - "$@" <<'PY'
import json, sys
tool, path = sys.argv[1:]
d = json.load(open(path))
if tool == "fio":
    print(sum(j["read"]["iops"] + j["write"]["iops"] for j in d["jobs"]))
else:
    t = d["runs"][-1]["totals"]
    print(t["read"]["iops"] + t["write"]["iops"])
PY
}

fio_iops=() vb_iops=()
for ((i = 1; i <= repeat; i++)); do
  order=(fio volbench)
  ((i % 2 == 0)) && order=(volbench fio)
  for tool in "${order[@]}"; do
    echo "import-vs-fio: run $i/$repeat: $tool" >&2
    if [[ $tool == fio ]]; then
      fio --output-format=json --norandommap --randrepeat=0 "$job" >"$work/fio.json"
      fio_iops+=("$(iops fio "$work/fio.json")")
    else
      "$volbench" fio "$job" --json >"$work/vb.json" 2>"$work/vb.err" ||
        { cat "$work/vb.err" >&2; die "volbench fio failed"; }
      vb_iops+=("$(iops volbench "$work/vb.json")")
    fi
  done
done

python3 - "${fio_iops[*]}" "${vb_iops[*]}" <<'PY'
import statistics, sys
f = [float(x) for x in sys.argv[1].split()]
v = [float(x) for x in sys.argv[2].split()]
mf, mv = statistics.median(f), statistics.median(v)
print(f"medians of {len(f)} runs each, tools alternating")
print(f"fio       {mf:12.0f} IOPS")
print(f"volbench  {mv:12.0f} IOPS")
print(f"ratio     {mv / mf:12.3f} (volbench / fio)")
PY
