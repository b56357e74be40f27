#!/usr/bin/env bash
# import-vs-fio.sh: one fio job file run by fio itself and by volbench
# (`volbench fio JOB`, the importer's translation), side by side on the same
# target, alternating which goes first; prints each tool's IOPS and the
# ratio volbench / fio (the importer's target: within 3%).
#
#   bench/import-vs-fio.sh [--duration 5] [--repeat 3] [--size 256] [--cap 2000]
#                          [--case capped|cached|buffered|both] [--job FILE]
#                          [--dir DIR]
#
# Two cases (both by default), and a third on request:
# - capped (storage-bound, the 3% check): 4 KiB random reads, direct, psync,
#   numjobs=4, on ext4 on a loop device whose reads the kernel caps at
#   --cap IOPS (blkio throttling in a cgroup both tools run in, as the
#   test fixtures do). Both tools should read the cap; the ratio says
#   whether the translation does the same I/O. Needs root, losetup,
#   mkfs.ext4 and blkio (v1) or io (v2) cgroup throttling.
# - cached (CPU-bound): the same job buffered on a page-cached directory
#   in /dev/shm with random_distribution=zoned:80/20:20/80. Every I/O is a
#   memory copy, so this measures each tool's own cost per I/O (fio keeps
#   more timestamps and statistics per I/O), not storage. fio runs it with
#   --norandommap (a skew is drawn with replacement by both tools).
# - buffered (the page cache between the tools and storage): fio's own
#   examples fio-rand-read, fio-rand-RW and fio-rand-write (buffered,
#   libaio, iodepth 16), their size cut to --size and runtime to --duration,
#   in --dir (default /var/tmp: a real disk, not tmpfs). fio keeps its random
#   map (each block once per pass, cached pages dropped at each pass's end);
#   the import maps it to random_map = true.
# With --job, the file must name its own directory= (volbench writes its own
# file set there; fio its own files); both run it as written.
# Needs fio (apt-get install fio), cargo and python3.
set -euo pipefail

die() { echo "import-vs-fio: $*" >&2; exit 2; }

duration=5 repeat=3 size_mib=256 job="" cap=2000 case=both dir=/var/tmp
while (($#)); do
  case $1 in
    --duration) duration=${2:?}; shift 2 ;;
    --repeat) repeat=${2:?}; shift 2 ;;
    --size) size_mib=${2:?}; shift 2 ;;
    --job) job=${2:?}; shift 2 ;;
    --cap) cap=${2:?}; shift 2 ;;
    --case) case=${2:?}; shift 2 ;;
    --dir) dir=${2:?}; shift 2 ;;
    -h | --help) sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[[ $case =~ ^(capped|cached|buffered|both)$ ]] || die "--case is capped, cached, buffered or both"
[[ -z $job ]] || case=job
for v in "$duration" "$repeat" "$size_mib" "$cap"; do
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
img="" dev="" mnt="" cg=""
cleanup() {
  [[ -n $mnt ]] && umount "$mnt" 2>/dev/null
  [[ -n $dev ]] && losetup -d "$dev" 2>/dev/null
  [[ -n $cg ]] && rmdir "$cg" 2>/dev/null
  [[ -n $img ]] && rm -f "$img"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

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

# The throttled loop device: ext4 on it, mounted; its reads capped at $cap
# IOPS for the processes in cgroup $cg.
make_capped() {
  ((EUID == 0)) || die "the capped case needs root (loop device, cgroup); use --case cached"
  img=$(mktemp "${TMPDIR:-/tmp}/import-vs-fio.XXXXXX.img")
  truncate -s "$((size_mib * 9 + 128))M" "$img" # both tools' files, 4 jobs each
  dev=$(losetup -f --show --direct-io=on "$img") || die "losetup failed"
  mkfs.ext4 -q -F "$dev" || die "mkfs.ext4 failed"
  mnt=$work/mnt
  mkdir -p "$mnt" && mount "$dev" "$mnt" || die "cannot mount $dev"
  local majmin
  majmin=$(($(stat -c '0x%t' "$dev"))):$(($(stat -c '0x%T' "$dev")))
  if [[ -d /sys/fs/cgroup/blkio ]]; then
    cg=/sys/fs/cgroup/blkio/import-vs-fio-$$
    mkdir "$cg" && echo "$majmin $cap" >"$cg/blkio.throttle.read_iops_device" ||
      die "cannot cap $dev in $cg"
  else
    cg=/sys/fs/cgroup/import-vs-fio-$$
    echo +io >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
    mkdir "$cg" && echo "$majmin riops=$cap" >"$cg/io.max" || die "cannot cap $dev in $cg"
  fi
}

# Runs a command inside the cap (or as it is, for the uncapped cases).
in_cap() {
  if [[ -n $cg ]]; then
    sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$@"
  else
    "$@"
  fi
}

# One case: the job run by both tools, alternating; prints the medians.
compare() { # label job [fio's extra arguments...]
  local label=$1 jobfile=$2 fio_iops=() vb_iops=()
  shift 2
  local fio_args=("$@")
  echo "import-vs-fio: $label: the import" >&2
  "$volbench" import fio "$jobfile" >&2 || die "volbench cannot import $jobfile"
  for ((i = 1; i <= repeat; i++)); do
    local order=(fio volbench)
    ((i % 2 == 0)) && order=(volbench fio)
    for tool in "${order[@]}"; do
      echo "import-vs-fio: $label: run $i/$repeat: $tool" >&2
      if [[ $tool == fio ]]; then
        in_cap fio --output-format=json "${fio_args[@]}" "$jobfile" >"$work/fio.json"
        fio_iops+=("$(iops fio "$work/fio.json")")
      else
        in_cap "$volbench" fio "$jobfile" --json >"$work/vb.json" 2>"$work/vb.err" ||
          { cat "$work/vb.err" >&2; die "volbench fio failed"; }
        vb_iops+=("$(iops volbench "$work/vb.json")")
      fi
    done
  done
  python3 - "$label" "${fio_iops[*]}" "${vb_iops[*]}" <<'PY'
import statistics, sys
label = sys.argv[1]
f = [float(x) for x in sys.argv[2].split()]
v = [float(x) for x in sys.argv[3].split()]
mf, mv = statistics.median(f), statistics.median(v)
print(f"{label}: medians of {len(f)} runs each, tools alternating")
print(f"  fio       {mf:12.0f} IOPS   (runs: {' '.join(f'{x:.0f}' for x in f)})")
print(f"  volbench  {mv:12.0f} IOPS   (runs: {' '.join(f'{x:.0f}' for x in v)})")
print(f"  ratio     {mv / mf:12.3f} (volbench / fio)")
PY
}

job_text() { # directory direct extra-lines...
  local dir=$1 direct=$2
  shift 2
  printf '[global]\ndirectory=%s\nsize=%sm\ntime_based\nruntime=%s\nramp_time=1\n' \
    "$dir" "$size_mib" "$duration"
  printf 'ioengine=psync\ndirect=%s\n[randread]\nrw=randread\nbs=4k\niodepth=1\n' "$direct"
  printf '%s\n' "$@"
}

if [[ $case == job ]]; then
  [[ -f $job ]] || die "no job file $job"
  compare "job $job" "$job"
  exit 0
fi
if [[ $case == capped || $case == both ]]; then
  make_capped
  job_text "$mnt" 1 "numjobs=4" "group_reporting" >"$work/capped.fio"
  compare "capped (storage-bound: reads capped at $cap IOPS, direct)" "$work/capped.fio" --randrepeat=0
  cleanup_cap() { umount "$mnt"; losetup -d "$dev"; rmdir "$cg"; rm -f "$img"; mnt="" dev="" cg="" img=""; }
  cleanup_cap
fi
if [[ $case == cached || $case == both ]]; then
  mkdir -p "$work/data"
  job_text "$work/data" 0 "random_distribution=zoned:80/20:20/80" >"$work/cached.fio"
  compare "cached (CPU-bound: page cache, measures each tool's cost per I/O)" "$work/cached.fio" \
    --norandommap --randrepeat=0
fi
if [[ $case == buffered ]]; then
  [[ -d $dir ]] || die "no directory $dir"
  bdir=$(mktemp -d "$dir/import-vs-fio.XXXXXX")
  trap 'rm -rf "$bdir"; cleanup' EXIT
  # fio's examples/fio-rand-*.fio as fio ships them, but for size and runtime.
  for ex in "read randread" "RW randrw" "write randwrite"; do
    set -- $ex
    {
      printf '[global]\nname=fio-rand-%s\ndirectory=%s\nfilename=fio-rand-%s\n' "$1" "$bdir" "$1"
      printf 'rw=%s\n' "$2"
      [[ $2 == randrw ]] && printf 'rwmixread=60\nrwmixwrite=40\n'
      printf 'bs=4K\ndirect=0\nnumjobs=%s\ntime_based\nruntime=%s\n' \
        "$([[ $2 == randread ]] && echo 1 || echo 4)" "$duration"
      printf '[file1]\nsize=%sm\nioengine=libaio\niodepth=16\n' "$size_mib"
    } >"$work/fio-rand-$1.fio"
    compare "buffered fio-rand-$1 (fio's example, ${size_mib} MiB, ${duration}s)" "$work/fio-rand-$1.fio"
  done
fi
